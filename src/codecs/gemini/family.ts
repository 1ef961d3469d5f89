import { bearerOrApiKey } from '../../auth/extract-api-key.js';
import type { ClientFamily } from '../client-family.js';
import { encodeGeminiError } from './encode-error.js';

/**
 * The Gemini family: `/v1beta/models/{model}:{action}` and the same actions under `/v1/` (the @google/genai SDK
 * uses either), and the `/v1beta/models` list.
 */
export const geminiFamily: ClientFamily = {
  name: 'gemini',
  ownsPath: (path) => path.startsWith('/v1beta/') || (path.startsWith('/v1/models/') && path.includes(':')),
  // Google's clients send `x-goog-api-key` (the specification's `x-vendorg-api-key` alias too) or `?key=`; a
  // Bearer token or `x-api-key` is taken first, as on every family.
  readApiKey(headers, query) {
    const common = bearerOrApiKey(headers);
    if (common !== null) return common;
    const google = headers['x-goog-api-key'] ?? headers['x-vendorg-api-key'];
    if (typeof google === 'string' && google !== '') return google.trim();
    const fromQuery = query.get('key');
    return fromQuery !== null && fromQuery !== '' ? fromQuery : null;
  },
  keyHint: 'Send it in the "x-goog-api-key" header or as the "key" query parameter, as Google\'s clients do.',
  encodeError: (error) => encodeGeminiError(error),
  // Google's clients read no rate-limit headers of their own: the generic set only.
  addRateLimitHeaders() {},
};
