import type { IncomingHttpHeaders } from 'node:http';

/**
 * The key as every family's clients may send it: `Authorization: Bearer` first, then `x-api-key` (trimmed).
 * Returns null when neither is present.
 */
export function bearerOrApiKey(headers: IncomingHttpHeaders): string | null {
  const authorization = headers.authorization;
  if (authorization !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match?.[1] !== undefined) return match[1];
  }
  const apiKey = headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey !== '') return apiKey.trim();
  return null;
}

/** True when an Authorization header is present but not a usable Bearer credential. */
export function hasMalformedAuthorization(headers: IncomingHttpHeaders): boolean {
  const authorization = headers.authorization;
  return authorization !== undefined && !/^Bearer\s+\S+\s*$/i.test(authorization);
}
