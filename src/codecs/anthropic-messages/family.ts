import { bearerOrApiKey } from '../../auth/extract-api-key.js';
import { anthropicRateLimitHeaders } from '../../limits/rate-limit-headers.js';
import type { ClientFamily } from '../client-family.js';
import { encodeAnthropicError } from './encode-error.js';

/** The Anthropic family: `/v1/messages` and its token counter. */
export const anthropicFamily: ClientFamily = {
  name: 'anthropic',
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
