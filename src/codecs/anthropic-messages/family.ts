import { bearerOrApiKey } from '../../auth/extract-api-key.js';
import { anthropicRateLimitHeaders } from '../../limits/rate-limit-headers.js';
import type { ClientFamily } from '../client-family.js';
import { anthropicCountTokensEndpoint, anthropicMessagesEndpoint, anthropicModelListing } from './endpoints.js';
import { encodeAnthropicError } from './encode-error.js';

/** The Anthropic family: `/v1/messages` and its token counter; its clients list models on OpenAI's `/v1/models`. */
export const anthropicFamily: ClientFamily = {
  name: 'anthropic',
  routes: [
    { method: 'POST', path: '/v1/messages', endpoint: 'messages', operation: 'chat', chat: anthropicMessagesEndpoint },
    { method: 'POST', path: '/v1/messages/count_tokens', endpoint: 'count_tokens', operation: 'countTokens', countTokens: anthropicCountTokensEndpoint },
  ],
  models: anthropicModelListing,
  ownsPath: (path) => path.startsWith('/v1/messages'),
  readApiKey: (headers) => bearerOrApiKey(headers),
  keyHint: 'Send it in the "x-api-key" header ("x-api-key: <API_KEY>"), as Anthropic\'s clients do.',
  encodeError: (error) => encodeAnthropicError(error),
  // Anthropic's clients read `anthropic-ratelimit-requests|tokens|input-tokens|output-tokens-*`, the reset as RFC
  // 3339. One token window counts input and output together, so it bounds both the input and the output set.
  addRateLimitHeaders(headers, { requests, tokens }) {
    if (requests !== null) anthropicRateLimitHeaders(headers, 'requests', requests);
    if (tokens === null) return;
    anthropicRateLimitHeaders(headers, 'tokens', tokens);
    anthropicRateLimitHeaders(headers, 'input-tokens', tokens);
    anthropicRateLimitHeaders(headers, 'output-tokens', tokens);
  },
};
