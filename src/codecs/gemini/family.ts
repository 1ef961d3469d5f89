import { bearerOrApiKey } from '../../auth/extract-api-key.js';
import type { ClientFamily } from '../client-family.js';
import { geminiChatEndpoint, geminiCountTokensEndpoint, geminiEmbeddingsEndpoint, geminiModelListing } from './endpoints.js';
import { encodeGeminiError } from './encode-error.js';

/** `/v1beta/models/{model}:{action}` and the same under `/v1/` (the @google/genai SDK uses either). */
function geminiAction(action: string): { path: RegExp; templates: readonly string[] } {
  return {
    path: new RegExp(`^/(?:v1beta|v1)/models/(?<model>[^/]+):${action}$`),
    templates: [`/v1beta/models/{model}:${action}`, `/v1/models/{model}:${action}`],
  };
}

/**
 * The Gemini family: `/v1beta/models/{model}:{action}` and the same actions under `/v1/` (the @google/genai SDK
 * uses either), and the `/v1beta/models` list.
 */
export const geminiFamily: ClientFamily = {
  name: 'gemini',
  // The actions come first: the model lookup's path matches them too.
  routes: [
    { method: 'POST', ...geminiAction('generateContent'), endpoint: 'generateContent', operation: 'chat', chat: geminiChatEndpoint(false) },
    { method: 'POST', ...geminiAction('streamGenerateContent'), endpoint: 'streamGenerateContent', operation: 'chat', chat: geminiChatEndpoint(true) },
    { method: 'POST', ...geminiAction('countTokens'), endpoint: 'countTokens', operation: 'countTokens', countTokens: geminiCountTokensEndpoint },
    { method: 'POST', ...geminiAction('embedContent'), endpoint: 'embedContent', operation: 'embeddings', embeddings: geminiEmbeddingsEndpoint(false) },
    { method: 'POST', ...geminiAction('batchEmbedContents'), endpoint: 'batchEmbedContents', operation: 'embeddings', embeddings: geminiEmbeddingsEndpoint(true) },
    { method: 'GET', path: '/v1beta/models', endpoint: 'models', operation: 'listModels' },
    { method: 'GET', path: '/v1beta/models/:model', endpoint: 'models', operation: 'getModel' },
  ],
  models: geminiModelListing,
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
