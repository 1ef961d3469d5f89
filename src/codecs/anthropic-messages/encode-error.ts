import type { GatewayError } from '../../errors/gateway-error.js';
import { sseEvent, type AnthropicErrorBody, type AnthropicErrorType } from '../../wire/anthropic/anthropic-wire.js';

/**
 * Anthropic's error type for an HTTP status (https://docs.claude.com/en/api/errors). The official SDK picks its
 * error class by status (BadRequestError, AuthenticationError, PaymentRequiredError, RateLimitError, …); the
 * type is what clients branch on.
 */
export function anthropicErrorType(status: number): AnthropicErrorType {
  switch (status) {
    case 400:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 504:
      return 'timeout_error';
    case 529:
      return 'overloaded_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

/** Anthropic's error body with the specification's `code` added: `{type:'error', error:{type, message, code}}`. */
export function anthropicErrorBody(status: number, code: string, message: string): AnthropicErrorBody {
  return { type: 'error', error: { type: anthropicErrorType(status), message, code } };
}

export function encodeAnthropicError(error: GatewayError): string {
  return JSON.stringify(anthropicErrorBody(error.status, error.code, error.message));
}

/** The same error as Anthropic's in-stream `error` event (the SDK raises it as an APIError). */
export function encodeAnthropicStreamError(error: GatewayError): string {
  return sseEvent('error', anthropicErrorBody(error.status, error.code, error.message));
}
