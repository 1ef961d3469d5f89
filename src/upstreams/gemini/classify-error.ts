import { isJsonObject, parseJson } from '../../wire/gemini/gemini-wire.js';

/**
 * What a Gemini error answer means for the relay:
 * - `credential`: this key is bad (rotate it and try the next key or channel);
 * - `channel`: this channel cannot serve now (quota, billing, region): try another channel;
 * - `retryable`: a transient failure (overload, internal error, timeout);
 * - `caller`: the request itself is wrong; answer the caller.
 */
export type GeminiErrorClass = 'credential' | 'channel' | 'retryable' | 'caller';

/** google.rpc.ErrorInfo reasons that mean the key (or its project) cannot be used. */
const CREDENTIAL_REASONS = new Set([
  'API_KEY_INVALID',
  'API_KEY_EXPIRED',
  'API_KEY_SERVICE_BLOCKED',
  'API_KEY_HTTP_REFERRER_BLOCKED',
  'API_KEY_IP_ADDRESS_BLOCKED',
  'SERVICE_DISABLED',
  'CONSUMER_SUSPENDED',
  'CONSUMER_INVALID',
  'ACCESS_TOKEN_EXPIRED',
]);

/**
 * Classifies an error answer by status and body. The status alone is not enough: Google answers an invalid key
 * with 400 INVALID_ARGUMENT (reason API_KEY_INVALID, message "API key not valid…"), which a status-only check
 * would pass on to the caller as the caller's mistake; and 400 FAILED_PRECONDITION ("User location is not
 * supported…", billing) is about the channel, not the request.
 */
export function classifyGeminiError(status: number, body: Buffer | string): GeminiErrorClass {
  const parsed = parseJson(typeof body === 'string' ? body : body.toString('utf8'));
  const error = isJsonObject(parsed) && isJsonObject(parsed.error) ? parsed.error : {};
  const reasons = (Array.isArray(error.details) ? error.details : []).flatMap((detail: unknown) =>
    isJsonObject(detail) && typeof detail.reason === 'string' ? [detail.reason] : [],
  );
  const message = typeof error.message === 'string' ? error.message : '';
  if (status === 401 || status === 403 || reasons.some((reason) => CREDENTIAL_REASONS.has(reason)) || /API key (not valid|expired)/i.test(message)) {
    return 'credential';
  }
  if (status === 429 || error.status === 'FAILED_PRECONDITION') return 'channel';
  if (status === 408 || status >= 500) return 'retryable';
  return 'caller';
}
