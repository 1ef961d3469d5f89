import type { GatewayError } from '../../errors/gateway-error.js';

/** HTTP status → the google.rpc canonical status name Google puts in `error.status`. */
const GOOGLE_STATUS: Readonly<Record<number, string>> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  402: 'FAILED_PRECONDITION',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  405: 'UNIMPLEMENTED',
  409: 'ABORTED',
  413: 'INVALID_ARGUMENT',
  415: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'UNIMPLEMENTED',
  502: 'UNAVAILABLE',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

export function googleStatusFor(httpStatus: number): string {
  return GOOGLE_STATUS[httpStatus] ?? (httpStatus >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION');
}

/**
 * The error body of the Gemini endpoints: Google's envelope `{error: {code, message, status}}` with the gateway's
 * own string code in `error.code` and its `type` added, so it carries the message, type and code every family's
 * error body carries.
 *
 * `@google/genai` never reads `error.code` of an HTTP error: it throws `ApiError` with `status` = the HTTP status
 * and `message` = this body as JSON text, so a string code costs it nothing. (The Vercel AI SDK's Google provider
 * validates `code` as a number; with a string it still reports the HTTP status and body, but falls back to the
 * status text as its message.)
 */
export function encodeGeminiError(error: GatewayError): string {
  const body: Record<string, unknown> = {
    code: error.code,
    message: error.message,
    status: googleStatusFor(error.status),
    type: error.type,
  };
  if (error.param !== undefined) body.param = error.param;
  return JSON.stringify({ error: body });
}

export interface StreamErrorDetails {
  status: number;
  code: string;
  message: string;
}

/**
 * The error object for a failure inside a stream. Here `error.code` must be the HTTP status as a number: that is
 * what `@google/genai` looks for in each chunk (`code` a number in 400..599) before it throws `ApiError`; with a
 * string it would hand the chunk to the caller as an empty answer. The gateway's code rides in `details` as a
 * google.rpc.ErrorInfo `reason`.
 */
export function streamErrorObject(error: StreamErrorDetails): string {
  return JSON.stringify({
    error: {
      code: error.status,
      message: error.message,
      status: googleStatusFor(error.status),
      details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: error.code, domain: 'unigate' }],
    },
  });
}

/** Separator between two elements of the streamed JSON array, as Google writes it. */
export const JSON_ARRAY_SEPARATOR = '\n,\r\n';
/** End of the streamed JSON array. */
export const JSON_ARRAY_END = '\n]';

/** One SSE event, framed as the Gemini API frames its events (CRLF line ends). */
export function sseEvent(data: string): string {
  return `data: ${data}\r\n\r\n`;
}

/**
 * A failure after the first byte, in the caller's framing. With `sse: false` the JSON array has begun (its first
 * element went out), so the error becomes one more element and the array is closed: the text is terminal, and
 * nothing else may follow it (not even the encoder's `end()`). Where the framing state is known, prefer
 * `encoder.encode({type: 'error', …})` (translated path) or `GeminiJsonArrayReframer.fail` (pass-through), which
 * also cover a failure before the first element.
 */
export function encodeGeminiStreamError(error: GatewayError, options: { sse: boolean }): string {
  const object = streamErrorObject({ status: error.status, code: error.code, message: error.message });
  return options.sse ? sseEvent(object) : `${JSON_ARRAY_SEPARATOR}${object}${JSON_ARRAY_END}`;
}
