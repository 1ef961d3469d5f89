/**
 * Wire-level helpers of the mock OpenAI upstream: error bodies, ids, token estimation and the model
 * list, shaped like api.openai.com answers them. Pure functions, no I/O.
 */
import { createHmac, randomBytes } from 'node:crypto';

export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/** An error the mock answers with: HTTP status plus OpenAI's `{ error: { message, type, param, code } }`. */
export class MockHttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: OpenAIErrorBody,
    readonly headers: Record<string, string> = {},
  ) {
    super(body.error.message);
  }
}

export function errorBody(
  message: string,
  type = 'invalid_request_error',
  param: string | null = null,
  code: string | null = null,
): OpenAIErrorBody {
  return { error: { message, type, param, code } };
}

export function invalidRequest(message: string, param: string | null = null, code: string | null = null): MockHttpError {
  return new MockHttpError(400, errorBody(message, 'invalid_request_error', param, code));
}

export function invalidApiKeyError(presented: string | undefined): MockHttpError {
  const message =
    presented === undefined || presented === ''
      ? "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username and password. You can obtain an API key from https://platform.openai.com/account/api-keys."
      : `Incorrect API key provided: ${redactKey(presented)}. You can find your API key at https://platform.openai.com/account/api-keys.`;
  return new MockHttpError(401, errorBody(message, 'invalid_request_error', null, 'invalid_api_key'));
}

export function notFoundUrlError(method: string, path: string): MockHttpError {
  return new MockHttpError(404, errorBody(`Invalid URL (${method} ${path})`, 'invalid_request_error', null, null));
}

export function modelNotFoundError(model: string): MockHttpError {
  return new MockHttpError(
    404,
    errorBody(
      `The model \`${model}\` does not exist or you do not have access to it.`,
      'invalid_request_error',
      null,
      'model_not_found',
    ),
  );
}

export function invalidJsonError(): MockHttpError {
  return invalidRequest(
    "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)",
  );
}

/** Default body of a `status` fault: what OpenAI sends for that status. */
export function defaultErrorBodyForStatus(status: number): OpenAIErrorBody {
  switch (status) {
    case 400:
      return errorBody('Bad request (injected fault).', 'invalid_request_error');
    case 401:
      return errorBody('Incorrect API key provided (injected fault).', 'invalid_request_error', null, 'invalid_api_key');
    case 403:
      return errorBody('Country, region, or territory not supported', 'request_forbidden', null, 'unsupported_country_region_territory');
    case 404:
      return errorBody('The model `unknown` does not exist or you do not have access to it.', 'invalid_request_error', null, 'model_not_found');
    case 429:
      return errorBody(
        'Rate limit reached for requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s.',
        'requests',
        null,
        'rate_limit_exceeded',
      );
    case 500:
      return errorBody('The server had an error while processing your request. Sorry about that!', 'server_error');
    case 502:
      return errorBody('Bad gateway.', 'server_error', null, null);
    case 503:
      return errorBody('The engine is currently overloaded, please try again later.', 'server_error', null, null);
    default:
      return errorBody(`Injected fault with status ${status}.`, status >= 500 ? 'server_error' : 'invalid_request_error');
  }
}

export function redactKey(key: string): string {
  if (key.length <= 8) return '*'.repeat(key.length);
  return `${key.slice(0, 3)}${'*'.repeat(Math.min(key.length - 7, 20))}${key.slice(-4)}`;
}

const ALPHANUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function randomId(prefix: string, length: number): string {
  const bytes = randomBytes(length);
  let out = prefix;
  for (let i = 0; i < length; i++) out += ALPHANUM[(bytes[i] ?? 0) % ALPHANUM.length];
  return out;
}

export const SYSTEM_FINGERPRINT = 'fp_mock0a1b2c';

const REASONING_KEY = 'mock-openai-reasoning-encryption-key';
const REASONING_PREFIX = 'gAAAAA';

function reasoningMac(payload: string): string {
  return createHmac('sha256', REASONING_KEY).update(payload).digest('base64url').slice(0, 32);
}

/** A reasoning item's `encrypted_content` as the mock issues it (OpenAI's are Fernet tokens, `gAAAAA…`). */
export function encryptedReasoning(): string {
  const payload = randomId('', 64);
  return `${REASONING_PREFIX}${payload}${reasoningMac(payload)}`;
}

/** Whether the mock issued this `encrypted_content`: only its own can be decrypted, as only OpenAI reads OpenAI's. */
export function isIssuedEncryptedReasoning(token: string): boolean {
  if (!token.startsWith(REASONING_PREFIX) || token.length !== REASONING_PREFIX.length + 64 + 32) return false;
  const payload = token.slice(REASONING_PREFIX.length, REASONING_PREFIX.length + 64);
  return token.slice(REASONING_PREFIX.length + 64) === reasoningMac(payload);
}

/** OpenAI's answer to reasoning state it did not issue (another provider's, or altered). */
export function invalidEncryptedContent(token: string, itemId: unknown): MockHttpError {
  const subject = typeof itemId === 'string' && itemId !== '' ? `for item ${itemId}` : `${token.slice(0, 4)}...${token.slice(-4)}`;
  return invalidRequest(`The encrypted content ${subject} could not be verified. Reason: Encrypted content could not be decrypted or parsed.`, null, 'invalid_encrypted_content');
}

/**
 * The mock's tokenizer: roughly four characters per token, the rule of thumb OpenAI documents.
 * Exported so tests can compute expected usage.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/**
 * Splits generated text into the pieces the mock streams and counts as completion tokens:
 * up to four non-space characters each, leading whitespace attached. `pieces.join('') === text`.
 */
export function splitIntoTokens(text: string): string[] {
  return text.match(/\s*[^\s]{1,4}|\s+/g) ?? [];
}

export interface ModelObject {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
}

export const DEFAULT_MODELS: readonly string[] = [
  'gpt-4o',
  'gpt-4o-mini',
  'gpt-4.1',
  'gpt-4.1-mini',
  'o3-mini',
  'o4-mini',
  'gpt-5-mini',
  'bench-model',
];

export function modelObject(id: string): ModelObject {
  return { id, object: 'model', created: 1_715_367_049, owned_by: id.startsWith('bench') ? 'mock' : 'system' };
}

/** Reasoning models reject `max_tokens` and non-default sampling parameters, and report reasoning tokens. */
export function isReasoningModel(model: string): boolean {
  return /^(o\d|gpt-5)/.test(model);
}
