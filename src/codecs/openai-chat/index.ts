import type { ClientCodec } from '../client-codec.js';
import { openAIWire } from '../../wire/openai/wire.js';
import { answerFactsOfJson } from '../../wire/answer-facts.js';
import { openAIChatAnswerFacts } from '../../wire/openai/answer-facts.js';
import { decodeOpenAIChatRequest } from './decode-request.js';
import { encodeOpenAIStreamError } from './encode-error.js';
import { encodeOpenAIChatResponse } from './encode-response.js';
import { OpenAIChatStreamEncoder } from './encode-stream.js';
import { findUsageInJson } from '../../wire/openai/usage.js';
import { OpenAIPassThroughObserver } from './stream-usage-observer.js';

/** The OpenAI chat-completions client protocol (POST /v1/chat/completions). */
export const openAIChatCodec: ClientCodec = {
  wire: openAIWire,
  usageKey: 'usage',
  streamUsageKey: (options) => (options.includeUsage ? 'usage' : null),
  // OpenAI clients send nothing but the body that an upstream needs (the key is the gateway's to replace).
  passThroughHeaders: [],
  streamContentType: () => 'text/event-stream; charset=utf-8',
  streamPassesThrough: () => true,
  decodeRequest: (body, hints) => decodeOpenAIChatRequest(body, hints),
  encodeResponse: (response, model) => encodeOpenAIChatResponse(response, model),
  createStreamEncoder: (options) => new OpenAIChatStreamEncoder(options),
  // OpenAI streams are always SSE; `sse` is Gemini's switch.
  encodeStreamError: (error) => encodeOpenAIStreamError(error),
  usageFromResponseBody: (body) => findUsageInJson(body),
  answerFactsOfBody: (answer) => answerFactsOfJson(answer, openAIChatAnswerFacts),
  createPassThroughObserver: (options) => new OpenAIPassThroughObserver(options.includeUsage),
};

export { decodeOpenAIChatRequest } from './decode-request.js';
export { decodeOpenAIEmbeddingRequest, type DecodedEmbeddingRequest, type EmbeddingEncodingFormat } from './decode-embedding-request.js';
export { encodeOpenAIEmbeddingResponse } from './encode-embedding-response.js';
export { encodeOpenAIChatResponse } from './encode-response.js';
export { OpenAIChatStreamEncoder } from './encode-stream.js';
