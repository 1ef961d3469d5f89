import { bearerOrApiKey } from '../../auth/extract-api-key.js';
import { openAIRateLimitHeaders } from '../../limits/rate-limit-headers.js';
import type { ClientFamily } from '../client-family.js';
import { encodeOpenAIError } from './encode-error.js';

/**
 * The OpenAI family: chat completions, Responses, embeddings, media and the model list under `/v1/`. It is also
 * the shape of every path no other family owns.
 */
export const openAIFamily: ClientFamily = {
  name: 'openai',
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
