import type { ForwardingCodec, StreamFraming } from '../client-codec.js';
import { openAIWire } from '../../wire/openai/wire.js';
import { answerFactsOfJson } from '../../wire/answer-facts.js';
import { openAIChatAnswerFacts } from '../../wire/openai/answer-facts.js';
import { decodeOpenAIChatRequest } from './decode-request.js';
import { encodeOpenAIStreamError } from './encode-error.js';
import { encodeOpenAIChatResponse } from './encode-response.js';
import { OpenAIChatStreamEncoder } from './encode-stream.js';
import { findUsageInJson } from '../../wire/openai/usage.js';
import { OpenAIPassThroughObserver } from './stream-usage-observer.js';
import { withStreamCost } from '../answer-cost.js';

/** The OpenAI chat-completions client protocol (POST /v1/chat/completions), for a caller that asked for the usage chunk or not. */
function openAIChatCodecOf(includeUsage: boolean): ForwardingCodec {
  // The usage chunk carries the final usage; a stream without it carries none.
  const streamUsageKey = includeUsage ? 'usage' : null;
  return {
  wire: openAIWire,
  usageKey: 'usage',
  streamUsageKey: () => streamUsageKey,
  streamContentType: () => 'text/event-stream; charset=utf-8',
  decodeRequest: (body, hints) => decodeOpenAIChatRequest(body, hints),
  encodeResponse: (response, model) => encodeOpenAIChatResponse(response, model),
  createStreamEncoder: (options) => withStreamCost(new OpenAIChatStreamEncoder({ model: options.model, includeUsage, sse: true }), options.cost, streamUsageKey),
  // OpenAI streams are always SSE.
  encodeStreamError: (error) => encodeOpenAIStreamError(error),
  passThrough: {
    // OpenAI clients send nothing but the body that an upstream needs (the key is the gateway's to replace).
    headers: [],
    streamPassesThrough: () => true,
    usageFromResponseBody: (body) => findUsageInJson(body),
    answerFactsOfBody: (answer) => answerFactsOfJson(answer, openAIChatAnswerFacts),
    createObserver: (cost) => new OpenAIPassThroughObserver(includeUsage).costing(cost, streamUsageKey),
  },
  };
}

const WITH_USAGE_CHUNK = openAIChatCodecOf(true);
const WITHOUT_USAGE_CHUNK = openAIChatCodecOf(false);

/** The codec of a request that did not ask for the usage chunk (what decoding and whole answers use). */
export const openAIChatCodec = WITHOUT_USAGE_CHUNK;

/** The codec of a request, by whether it asked for the stream's usage chunk (`stream_options.include_usage`). */
export function openAIChatCodecFor(framing: Pick<StreamFraming, 'includeUsage'>): ForwardingCodec {
  return framing.includeUsage ? WITH_USAGE_CHUNK : WITHOUT_USAGE_CHUNK;
}

export { decodeOpenAIChatRequest } from './decode-request.js';
export { decodeOpenAIEmbeddingRequest, type DecodedEmbeddingRequest, type EmbeddingEncodingFormat } from './decode-embedding-request.js';
export { encodeOpenAIEmbeddingResponse } from './encode-embedding-response.js';
export { encodeOpenAIChatResponse } from './encode-response.js';
export { OpenAIChatStreamEncoder } from './encode-stream.js';
