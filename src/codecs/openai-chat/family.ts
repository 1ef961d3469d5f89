import { bearerOrApiKey } from '../../auth/extract-api-key.js';
import { openAIRateLimitHeaders } from '../../limits/rate-limit-headers.js';
import type { ClientFamily } from '../client-family.js';
import { openAIResponsesEndpoint, responsesInputTokensEndpoint } from '../openai-responses/endpoints.js';
import { openAIChatEndpoint, openAIEmbeddingsEndpoint, openAIModelListing } from './endpoints.js';
import { encodeOpenAIError } from './encode-error.js';

/**
 * The OpenAI family: chat completions, Responses, embeddings, media and the model list under `/v1/`. It is also
 * the shape of every path no other family owns. Its media, billing and stored-response routes are the HTTP layer's
 * own (src/http/routes/api-routes.ts).
 */
export const openAIFamily: ClientFamily = {
  name: 'openai',
  routes: [
    { method: 'POST', path: '/v1/chat/completions', endpoint: 'chat.completions', operation: 'chat', chat: openAIChatEndpoint },
    { method: 'POST', path: '/v1/embeddings', endpoint: 'embeddings', operation: 'embeddings', embeddings: openAIEmbeddingsEndpoint },
    { method: 'POST', path: '/v1/responses', endpoint: 'responses', operation: 'chat', chat: openAIResponsesEndpoint },
    { method: 'POST', path: '/v1/responses/input_tokens', endpoint: 'responses.input_tokens', operation: 'countTokens', countTokens: responsesInputTokensEndpoint },
    { method: 'GET', path: '/v1/models', endpoint: 'models', operation: 'listModels' },
    { method: 'GET', path: '/v1/models/:model', endpoint: 'models', operation: 'getModel' },
  ],
  models: openAIModelListing,
  ownsPath: () => true,
  readApiKey: (headers) => bearerOrApiKey(headers),
  keyHint: 'Send it as "Authorization: Bearer <API_KEY>".',
  encodeError: (error) => encodeOpenAIError(error),
  // OpenAI's clients read `x-ratelimit-*-requests|tokens`, the reset written as a duration.
  addRateLimitHeaders(headers, { requests, tokens }, now) {
    if (requests !== null) openAIRateLimitHeaders(headers, 'requests', requests, now);
    if (tokens !== null) openAIRateLimitHeaders(headers, 'tokens', tokens, now);
  },
};
