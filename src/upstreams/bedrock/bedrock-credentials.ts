import { GatewayError } from '../../errors/gateway-error.js';

/** What one entry of a Bedrock channel's `api_keys` holds: IAM credentials (signed with SigV4) or a Bedrock API key. */
export type BedrockCredentials =
  | { kind: 'iam'; accessKeyId: string; secretAccessKey: string; sessionToken?: string }
  /** A Bedrock API key, sent as `Authorization: Bearer` instead of a signature. */
  | { kind: 'api-key'; apiKey: string };

const parsed = new Map<string, BedrockCredentials>();
const MAX_PARSED = 256;

function field(object: Record<string, unknown>, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = object[name];
    if (typeof value === 'string' && value !== '') return value;
  }
  return undefined;
}

function invalid(message: string): GatewayError {
  return new GatewayError('bad_request', message, { param: 'api_key' });
}

function parse(credential: string): BedrockCredentials {
  const text = credential.trim();
  if (text.startsWith('{')) {
    let object: unknown;
    try {
      object = JSON.parse(text);
    } catch {
      throw invalid('Bedrock credentials given as JSON must be a valid JSON object.');
    }
    if (object === null || typeof object !== 'object' || Array.isArray(object)) throw invalid('Bedrock credentials must be a JSON object.');
    const record = object as Record<string, unknown>;
    const apiKey = field(record, 'api_key', 'apiKey');
    if (apiKey !== undefined) return { kind: 'api-key', apiKey };
    const accessKeyId = field(record, 'access_key_id', 'accessKeyId', 'aws_access_key_id', 'AccessKeyId');
    const secretAccessKey = field(record, 'secret_access_key', 'secretAccessKey', 'aws_secret_access_key', 'SecretAccessKey');
    if (accessKeyId === undefined || secretAccessKey === undefined) {
      throw invalid('Bedrock credentials need access_key_id and secret_access_key (session_token is optional).');
    }
    const sessionToken = field(record, 'session_token', 'sessionToken', 'aws_session_token', 'SessionToken');
    return sessionToken === undefined ? { kind: 'iam', accessKeyId, secretAccessKey } : { kind: 'iam', accessKeyId, secretAccessKey, sessionToken };
  }
  // Access key ids and secret keys never contain ':'; `ID:SECRET[:TOKEN]` is the short form.
  if (text.includes(':')) {
    const [accessKeyId = '', secretAccessKey = '', sessionToken, ...rest] = text.split(':');
    if (accessKeyId === '' || secretAccessKey === '' || sessionToken === '' || rest.length > 0) {
      throw invalid("Bedrock credentials in short form are 'ACCESS_KEY_ID:SECRET_ACCESS_KEY' or 'ACCESS_KEY_ID:SECRET_ACCESS_KEY:SESSION_TOKEN'.");
    }
    return sessionToken === undefined ? { kind: 'iam', accessKeyId, secretAccessKey } : { kind: 'iam', accessKeyId, secretAccessKey, sessionToken };
  }
  if (text === '') throw invalid('A bedrock channel needs credentials.');
  return { kind: 'api-key', apiKey: text };
}

/**
 * A channel key → Bedrock credentials: a JSON object `{access_key_id, secret_access_key, session_token?}` (or
 * `{api_key}`), the short form `ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN]`, or else a Bedrock API key.
 * Parsed once per key (a channel has a handful).
 */
export function bedrockCredentials(credential: string): BedrockCredentials {
  let credentials = parsed.get(credential);
  if (credentials === undefined) {
    credentials = parse(credential);
    if (parsed.size >= MAX_PARSED) parsed.clear();
    parsed.set(credential, credentials);
  }
  return credentials;
}
