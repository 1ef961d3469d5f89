import type { IncomingHttpHeaders } from 'node:http';

export type KeyFamily = 'openai' | 'anthropic' | 'gemini';

/**
 * Finds the caller's key (spec 5.2-5.3): `Authorization: Bearer` everywhere and first, then `x-api-key`
 * everywhere, then `x-goog-api-key` (and the spec's `x-vendorg-api-key` alias) and `?key=` for the
 * generative-content family. Returns null when none is present.
 */
export function extractApiKey(headers: IncomingHttpHeaders, query: URLSearchParams, family: KeyFamily): string | null {
  const authorization = headers.authorization;
  if (authorization !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match?.[1] !== undefined) return match[1];
  }
  const apiKey = headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey !== '') return apiKey.trim();
  if (family === 'gemini') {
    const google = headers['x-goog-api-key'] ?? headers['x-vendorg-api-key'];
    if (typeof google === 'string' && google !== '') return google.trim();
    const fromQuery = query.get('key');
    if (fromQuery !== null && fromQuery !== '') return fromQuery;
  }
  return null;
}

/** True when an Authorization header is present but not a usable Bearer credential. */
export function hasMalformedAuthorization(headers: IncomingHttpHeaders): boolean {
  const authorization = headers.authorization;
  return authorization !== undefined && !/^Bearer\s+\S+\s*$/i.test(authorization);
}
