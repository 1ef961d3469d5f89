import { GatewayError } from '../errors/gateway-error.js';

/** Key-like tokens: `sk-…`, `<brand>_sk_live_…`, `gsk_…`, `rk_`/`pk_` forms, Google `AIza…` keys and Bearer credentials. */
const SECRET_PATTERN = /(?<![A-Za-z0-9])(?:[A-Za-z0-9]+_)?g?(?:sk|rk|pk)[-_][A-Za-z0-9_*\-.]{6,}|\bAIza[0-9A-Za-z_-]{20,}|\bBearer\s+\S+/g;
const URL_PATTERN = /\bhttps?:\/\/[^\s"'<>]+/g;

/** Upstream text may carry a (partial) upstream key or its URL; neither reaches the caller. */
export function scrubUpstreamText(text: string): string {
  return text.replace(SECRET_PATTERN, '[redacted]').replace(URL_PATTERN, '[upstream]').slice(0, 1000);
}

/**
 * Why an upstream refused a request in a way another model may not: the request is longer than this model's
 * context window, or the upstream's content policy (moderation, safety filter) refused it.
 */
export type UpstreamRefusalReason = 'context_length' | 'content_policy';

/** An upstream's refusal of the caller's request, relayed as the caller's error, with its reason when one is known. */
export class UpstreamRefusalError extends GatewayError {
  constructor(code: 'bad_request' | 'payload_too_large', message: string, readonly reason: UpstreamRefusalReason | null, param: string | undefined) {
    super(code, message, param === undefined ? {} : { param });
  }
}

/** OpenAI `context_length_exceeded`, Anthropic `prompt is too long`, Gemini `input token count … exceeds the maximum`. */
const CONTEXT_LENGTH = /context[_ ]length|context window|maximum context|prompt is too long|input token count|exceeds? the maximum number of tokens|too many (input )?tokens/i;
/** OpenAI `content_policy_violation`, Azure `content_filter`, Gemini and Bedrock safety blocks. */
const CONTENT_POLICY = /content[_ ]?(policy|filter|management)|safety (system|filter|settings)|blocked (for|due to) safety|responsible ?ai|flagged by/i;

function refusalReason(status: number, text: string): UpstreamRefusalReason | null {
  if (status !== 400 && status !== 422) return null;
  if (CONTEXT_LENGTH.test(text)) return 'context_length';
  return CONTENT_POLICY.test(text) ? 'content_policy' : null;
}

/** The caller-facing error for an upstream's non-retryable 4xx answer (its own message, scrubbed). */
export function callerErrorFromUpstream(status: number, rawBody: Buffer): UpstreamRefusalError {
  let message = `The upstream provider rejected the request (HTTP ${status}).`;
  let param: string | undefined;
  // The upstream's message and error code, for the reason only: the code is never shown.
  let said = '';
  try {
    const parsed = JSON.parse(rawBody.toString('utf8')) as { error?: { message?: unknown; param?: unknown; code?: unknown; status?: unknown } | string; message?: unknown };
    const error = parsed.error;
    const text = typeof error === 'string' ? error : typeof error?.message === 'string' ? error.message : typeof parsed.message === 'string' ? parsed.message : null;
    if (text !== null && text !== '') message = `Upstream: ${scrubUpstreamText(text)}`;
    if (typeof error === 'object' && typeof error?.param === 'string') param = error.param;
    said = `${typeof error === 'object' && typeof error?.code === 'string' ? error.code : ''} ${text ?? ''}`;
  } catch {
    // not JSON: keep the generic message; raw upstream bodies are never shown
  }
  if (status === 413) return new UpstreamRefusalError('payload_too_large', message, null, undefined);
  return new UpstreamRefusalError('bad_request', message, refusalReason(status, said), param);
}

/** Upstream statuses worth another channel: overload, throttling, timeouts and server faults. */
export function isRetryableUpstreamStatus(status: number): boolean {
  return status >= 500 || status === 429 || status === 408 || status === 409;
}

/** Upstream rejected our own credential or permissions: the caller did nothing wrong. */
export function isUpstreamCredentialFailure(status: number): boolean {
  return status === 401 || status === 403;
}
