import type { ForwardingCodec } from '../client-codec.js';
import { anthropicWire } from '../../wire/anthropic/wire.js';
import { answerFactsOfJson } from '../../wire/answer-facts.js';
import { anthropicAnswerFacts } from '../../wire/anthropic/answer-facts.js';
import { decodeAnthropicRequest } from './decode-request.js';
import { encodeAnthropicStreamError } from './encode-error.js';
import { encodeAnthropicResponse } from './encode-response.js';
import { AnthropicStreamEncoder } from './encode-stream.js';
import { findUsageInMessageJson } from '../../wire/anthropic/usage.js';
import { AnthropicStreamUsageObserver } from './stream-usage-observer.js';
import { withStreamCost } from '../answer-cost.js';

/** The Anthropic Messages client protocol (POST /v1/messages) ⇄ the canonical representation. */
export const anthropicMessagesCodec: ForwardingCodec = {
  wire: anthropicWire,
  usageKey: 'usage',
  // message_delta carries the final counts.
  streamUsageKey: () => 'usage',
  streamContentType: () => 'text/event-stream; charset=utf-8',
  decodeRequest: (body, hints) => decodeAnthropicRequest(body, hints),
  encodeResponse: (response, model) => encodeAnthropicResponse(response, model),
  createStreamEncoder: (options) => withStreamCost(new AnthropicStreamEncoder({ model: options.model, includeUsage: false, sse: true }), options.cost, 'usage'),
  // Anthropic streams are always SSE.
  encodeStreamError: (error) => encodeAnthropicStreamError(error),
  passThrough: {
    headers: ['anthropic-version', 'anthropic-beta'],
    streamPassesThrough: () => true,
    usageFromResponseBody: (body) => findUsageInMessageJson(body),
    answerFactsOfBody: (answer) => answerFactsOfJson(answer, anthropicAnswerFacts),
    createObserver: (cost) => new AnthropicStreamUsageObserver().costing(cost, 'usage'),
  },
};

export { decodeAnthropicCountTokensRequest, encodeAnthropicCountTokensResponse } from './count-tokens.js';
export { anthropicErrorType } from './encode-error.js';
