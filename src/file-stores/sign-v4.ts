import { createHash, createHmac } from 'node:crypto';

/** The SHA-256 of an empty payload, hex. */
export const EMPTY_PAYLOAD_SHA256 = createHash('sha256').update('').digest('hex');

export interface SigningCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string | null;
}

export interface RequestToSign {
  method: string;
  url: URL;
  /** Every header to send besides `host`, `x-amz-date` and `x-amz-security-token`, which signing adds; all are signed. */
  headers: Record<string, string>;
  /** Hex SHA-256 of the body (or `UNSIGNED-PAYLOAD`). */
  payloadHash: string;
}

/** RFC 3986 encoding as SigV4 wants it: every byte but unreserved characters percent-encoded, in upper case. */
function encode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** Each path segment encoded once (S3's rule: the path is not normalized nor encoded twice). */
function canonicalPath(url: URL): string {
  return url.pathname.split('/').map((segment) => encode(decodeURIComponent(segment))).join('/') || '/';
}

function canonicalQuery(url: URL): string {
  return [...url.searchParams].map(([name, value]) => [encode(name), encode(value)] as const)
    .sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`).join('&');
}

const hmac = (key: Buffer | string, data: string): Buffer => createHmac('sha256', key).update(data, 'utf8').digest();

/** `20130524T000000Z` */
export function amzDate(date: Date): string {
  return date.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
}

/**
 * Signs a request with AWS Signature Version 4 (header form): returns the headers to send, `host`, `x-amz-date`,
 * `x-amz-security-token` (temporary credentials) and `authorization` added to the given ones.
 */
export function signV4(request: RequestToSign, credentials: SigningCredentials, scope: { region: string; service: string }, date: Date): Record<string, string> {
  const stamp = amzDate(date);
  const day = stamp.slice(0, 8);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) headers[name.toLowerCase()] = value;
  headers.host = request.url.host;
  headers['x-amz-date'] = stamp;
  if (credentials.sessionToken !== undefined && credentials.sessionToken !== null) headers['x-amz-security-token'] = credentials.sessionToken;
  const names = Object.keys(headers).sort();
  const canonicalHeaders = names.map((name) => `${name}:${(headers[name] ?? '').trim().replace(/\s+/g, ' ')}\n`).join('');
  const signedHeaders = names.join(';');
  const canonicalRequest = [request.method.toUpperCase(), canonicalPath(request.url), canonicalQuery(request.url), canonicalHeaders, signedHeaders, request.payloadHash].join('\n');
  const credentialScope = `${day}/${scope.region}/${scope.service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', stamp, credentialScope, createHash('sha256').update(canonicalRequest, 'utf8').digest('hex')].join('\n');
  const signingKey = hmac(hmac(hmac(hmac(`AWS4${credentials.secretAccessKey}`, day), scope.region), scope.service), 'aws4_request');
  const signature = createHmac('sha256', signingKey).update(stringToSign, 'utf8').digest('hex');
  headers.authorization = `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${credentialScope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return headers;
}
