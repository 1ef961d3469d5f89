import { ERROR_CODES, type ErrorCode } from './error-codes.js';

export interface GatewayErrorOptions {
  /** The request field at fault, for 400s (OpenAI's `param`). */
  param?: string;
  /** Seconds the caller should wait (sets Retry-After). */
  retryAfterSeconds?: number;
  /** Overrides the registry's status where a code spans two (e.g. 502 vs 503 upstream errors). */
  status?: number;
  /** Extra response headers (rate-limit headers on 429). */
  headers?: Record<string, string>;
  cause?: unknown;
}

/** The one error type the gateway throws on purpose. Its message is safe to show to the caller. */
export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly type: string;
  readonly retryable: boolean;
  readonly param: string | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, message: string, options: GatewayErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    const definition = ERROR_CODES[code];
    this.name = 'GatewayError';
    this.code = code;
    this.status = options.status ?? definition.status;
    this.type = definition.type;
    this.retryable = definition.retryable;
    this.param = options.param;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.headers = options.headers;
  }
}

/** Anything thrown that is not a GatewayError becomes an opaque 500: its text may hold secrets. */
export function toGatewayError(value: unknown): GatewayError {
  if (value instanceof GatewayError) return value;
  return new GatewayError('internal_error', 'The gateway hit an internal error. The request id identifies it in the logs.', { cause: value });
}
