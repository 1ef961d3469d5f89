import { isDependencyUnavailable } from './dependency-unavailable.js';
import { ERROR_CODES, errorTypeForStatus, type ErrorCode } from './error-codes.js';

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
    // An answer the gateway gives on purpose needs no stack, and capturing one is most of what constructing it costs
    // (refusals under overload or a flood of 429s are made thousands of times a second); an internal error keeps
    // its stack for the log.
    const stackTraceLimit = Error.stackTraceLimit;
    if (code !== 'internal_error') Error.stackTraceLimit = 0;
    try {
      super(message, options.cause === undefined ? undefined : { cause: options.cause });
    } finally {
      Error.stackTraceLimit = stackTraceLimit;
    }
    const definition = ERROR_CODES[code];
    this.name = 'GatewayError';
    this.code = code;
    this.status = options.status ?? definition.status;
    // The type follows the status, an overridden one too: every answer of one status class has the same type.
    this.type = errorTypeForStatus(this.status);
    this.retryable = definition.retryable;
    this.param = options.param;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.headers = options.headers;
  }
}

/** Seconds a caller is asked to wait when the gateway's database or Redis is away. */
export const DEPENDENCY_RETRY_AFTER_SECONDS = 2;

/** The answer while the gateway's own database or Redis is unreachable. */
export function serviceUnavailable(cause?: unknown): GatewayError {
  return new GatewayError('service_unavailable', 'The gateway cannot reach its database right now; nothing was charged. Retry shortly.', {
    retryAfterSeconds: DEPENDENCY_RETRY_AFTER_SECONDS,
    cause,
  });
}

/**
 * Anything thrown that is not a GatewayError becomes an opaque 500 (its text may hold secrets), except a lost
 * database or Redis connection, which is a 503 with Retry-After.
 */
export function toGatewayError(value: unknown): GatewayError {
  if (value instanceof GatewayError) return value;
  if (isDependencyUnavailable(value)) return serviceUnavailable(value);
  return new GatewayError('internal_error', 'The gateway hit an internal error. The request id identifies it in the logs.', { cause: value });
}
