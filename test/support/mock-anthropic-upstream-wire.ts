/**
 * Wire-level helpers of the mock Anthropic upstream: error bodies, ids, thinking signatures and the model list,
 * shaped as api.anthropic.com answers them. Pure functions, no I/O.
 */
import { createHmac, randomBytes } from 'node:crypto';

export type AnthropicErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'billing_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'api_error'
  | 'timeout_error'
  | 'overloaded_error';

export interface AnthropicErrorBody {
  type: 'error';
  error: { type: AnthropicErrorType; message: string };
  request_id?: string;
}

/** An error the mock answers with: HTTP status plus Anthropic's `{type:'error', error:{type, message}}`. */
export class MockAnthropicError extends Error {
  constructor(
    readonly status: number,
    readonly type: AnthropicErrorType,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  body(requestId: string): AnthropicErrorBody {
    return { type: 'error', error: { type: this.type, message: this.message }, request_id: requestId };
  }
}

/** A 400 invalid_request_error naming the field the way Anthropic does: `<path>: <reason>`. */
export function invalidRequest(message: string): MockAnthropicError {
  return new MockAnthropicError(400, 'invalid_request_error', message);
}

/** Default error of a `status` fault: what Anthropic sends for that status. */
export function defaultFaultError(status: number): MockAnthropicError {
  switch (status) {
    case 400:
      return new MockAnthropicError(400, 'invalid_request_error', 'Bad request (injected fault).');
    case 401:
      return new MockAnthropicError(401, 'authentication_error', 'invalid x-api-key');
    case 402:
      return new MockAnthropicError(402, 'billing_error', 'Your credit balance is too low to access the Anthropic API.');
    case 403:
      return new MockAnthropicError(403, 'permission_error', 'Your API key does not have permission to use the specified resource.');
    case 404:
      return new MockAnthropicError(404, 'not_found_error', 'Not found (injected fault).');
    case 413:
      return new MockAnthropicError(413, 'request_too_large', 'Request exceeds the maximum allowed number of bytes.');
    case 429:
      return new MockAnthropicError(429, 'rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit.', { 'retry-after': '1' });
    case 504:
      return new MockAnthropicError(504, 'timeout_error', 'Request timed out.');
    case 529:
      return new MockAnthropicError(529, 'overloaded_error', 'Overloaded');
    default:
      return new MockAnthropicError(status, status >= 500 ? 'api_error' : 'invalid_request_error', status >= 500 ? 'Internal server error' : `Injected fault with status ${status}.`);
  }
}

const ALPHANUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function randomId(prefix: string, length: number): string {
  const bytes = randomBytes(length);
  let out = prefix;
  for (let i = 0; i < length; i++) out += ALPHANUM[(bytes[i] ?? 0) % ALPHANUM.length];
  return out;
}

export const messageId = (): string => randomId('msg_01', 22);
export const toolUseId = (): string => randomId('toolu_01', 22);
export const requestId = (): string => randomId('req_01', 22);

const SIGNING_KEY = 'mock-anthropic-thinking-signing-key';

/** The signature the mock puts on a thinking block: an HMAC of its text, checked when the block comes back. */
export function signThinking(thinking: string): string {
  return `Eo${createHmac('sha256', SIGNING_KEY).update(thinking).digest('base64')}`;
}

export function verifyThinking(thinking: string, signature: string): boolean {
  return signature === signThinking(thinking);
}

/** The data of a redacted_thinking block the mock issues; only its own data is accepted back. */
export function redactedThinkingData(seed: string): string {
  return Buffer.from(`redacted:${createHmac('sha256', SIGNING_KEY).update(seed).digest('hex')}`).toString('base64');
}

export function isMockRedactedData(data: string): boolean {
  return Buffer.from(data, 'base64').toString('utf8').startsWith('redacted:');
}

/** The mock's tokenizer: about four characters a token (the same rule as the OpenAI mock). */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Streamed text pieces, each counted as one output token: up to four non-space characters, leading space attached. */
export function splitIntoTokens(text: string): string[] {
  return text.match(/\s*[^\s]{1,4}|\s+/g) ?? [];
}

export const DEFAULT_MODELS: readonly string[] = ['claude-sonnet-4-5-20250929', 'claude-haiku-4-5-20251001', 'claude-opus-4-1-20250805', 'claude-3-5-haiku-20241022'];

export interface ModelInfo {
  type: 'model';
  id: string;
  display_name: string;
  created_at: string;
}

export function modelInfo(id: string): ModelInfo {
  const display = id
    .replace(/-\d{8}$/, '')
    .split('-')
    .map((word) => (/^\d+$/.test(word) ? word : word.charAt(0).toUpperCase() + word.slice(1)))
    .join(' ');
  return { type: 'model', id, display_name: display, created_at: '2025-09-29T00:00:00Z' };
}
