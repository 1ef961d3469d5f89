import { createPrivateKey, type KeyObject } from 'node:crypto';
import { GatewayError } from '../../errors/gateway-error.js';

/** The fields of a Google service-account key file (`"type": "service_account"`) that token requests use. */
export interface ServiceAccount {
  clientEmail: string;
  privateKey: KeyObject;
  privateKeyId: string | null;
  projectId: string | null;
  /** Where the signed JWT is exchanged for an access token. */
  tokenUri: string;
}

export const GOOGLE_TOKEN_URI = 'https://oauth2.googleapis.com/token';

const parsed = new Map<string, ServiceAccount>();
const MAX_PARSED = 64;

function invalid(message: string): GatewayError {
  return new GatewayError('bad_request', message, { param: 'api_key' });
}

function parse(credential: string): ServiceAccount {
  let json: unknown;
  try {
    json = JSON.parse(credential);
  } catch {
    throw invalid('A vertex-ai channel key must be a service-account key file (JSON).');
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw invalid('A vertex-ai channel key must be a service-account JSON object.');
  const record = json as Record<string, unknown>;
  if (record.type !== undefined && record.type !== 'service_account') throw invalid(`The vertex-ai key is of type '${String(record.type)}'; a service-account key is needed.`);
  if (typeof record.client_email !== 'string' || record.client_email === '') throw invalid('The service-account key has no client_email.');
  if (typeof record.private_key !== 'string' || record.private_key === '') throw invalid('The service-account key has no private_key.');
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(record.private_key);
  } catch {
    throw invalid('The service-account private_key is not a readable PEM private key.');
  }
  if (privateKey.asymmetricKeyType !== 'rsa') throw invalid('The service-account private_key must be an RSA key.');
  const tokenUri = typeof record.token_uri === 'string' && /^https?:\/\//.test(record.token_uri) ? record.token_uri : GOOGLE_TOKEN_URI;
  return {
    clientEmail: record.client_email,
    privateKey,
    privateKeyId: typeof record.private_key_id === 'string' && record.private_key_id !== '' ? record.private_key_id : null,
    projectId: typeof record.project_id === 'string' && record.project_id !== '' ? record.project_id : null,
    tokenUri,
  };
}

/** A channel key (the service-account JSON text) → its parsed form, parsed once per key. */
export function serviceAccountOf(credential: string): ServiceAccount {
  let account = parsed.get(credential);
  if (account === undefined) {
    account = parse(credential);
    if (parsed.size >= MAX_PARSED) parsed.clear();
    parsed.set(credential, account);
  }
  return account;
}
