import type { ForwardingCodec, StreamFraming } from '../client-codec.js';
import { geminiWire } from '../../wire/gemini/wire.js';
import { answerFactsOfJson } from '../../wire/answer-facts.js';
import { geminiAnswerFacts } from '../../wire/gemini/answer-facts.js';
import { decodeGeminiRequest } from './decode-request.js';
import { encodeGeminiStreamError } from './encode-error.js';
import { encodeGeminiResponse } from './encode-response.js';
import { GeminiStreamEncoder } from './encode-stream.js';
import { findGeminiUsageInJson } from '../../wire/gemini/usage.js';
import { GeminiStreamUsageObserver } from './stream-usage-observer.js';
import { withStreamCost } from '../answer-cost.js';

/**
 * The Gemini client protocol (`/v1beta/models/{model}:generateContent` and friends). Routes give the model from
 * the URL as `pathModel` and streaming from the endpoint; the stream framing comes from `alt=sse` (`wantsSse`).
 */
function geminiCodecOf(sse: boolean): ForwardingCodec {
  return {
  wire: geminiWire,
  usageKey: 'usageMetadata',
  // The closing chunk carries the final totals.
  streamUsageKey: () => 'usageMetadata',
  // `alt=sse` streams Server-Sent Events; without it the stream is one JSON array, rebuilt from canonical parts.
  streamContentType: () => (sse ? 'text/event-stream; charset=utf-8' : 'application/json; charset=utf-8'),
  decodeRequest: decodeGeminiRequest,
  encodeResponse: encodeGeminiResponse,
  createStreamEncoder: (options) => withStreamCost(new GeminiStreamEncoder({ model: options.model, includeUsage: false, sse }), options.cost, 'usageMetadata'),
  encodeStreamError: (error) => encodeGeminiStreamError(error, { sse }),
  passThrough: {
    headers: [],
    // A streamed JSON array is rebuilt from canonical parts (the upstream is always asked for SSE).
    streamPassesThrough: () => sse,
    usageFromResponseBody: findGeminiUsageInJson,
    answerFactsOfBody: (answer) => answerFactsOfJson(answer, geminiAnswerFacts),
    createObserver: (cost) => new GeminiStreamUsageObserver().costing(cost, 'usageMetadata'),
  },
  };
}

const SSE = geminiCodecOf(true);
const JSON_ARRAY = geminiCodecOf(false);

/** The codec of a request streamed as Server-Sent Events (`alt=sse`), and of every request that is not streamed. */
export const geminiCodec = SSE;

/** The codec of a request, by its stream framing: `alt=sse`, or the streamed JSON array. */
export function geminiCodecFor(framing: Pick<StreamFraming, 'sse'>): ForwardingCodec {
  return framing.sse ? SSE : JSON_ARRAY;
}

export { decodeGeminiRequest } from './decode-request.js';
export { decodeGeminiCountTokensRequest, encodeGeminiCountTokensResponse } from './count-tokens.js';
export { decodeGeminiBatchEmbedContentsRequest, decodeGeminiEmbedContentRequest, MAX_BATCH_EMBED_REQUESTS } from './decode-embedding-request.js';
export { encodeGeminiBatchEmbedContentsResponse, encodeGeminiEmbedContentResponse } from './encode-embedding-response.js';
export { encodeGeminiError, encodeGeminiStreamError, googleStatusFor } from './encode-error.js';
export { encodeGeminiModel, encodeGeminiModelList, geminiModelObject, type GeminiModelDescription } from './encode-model-list.js';
export { encodeGeminiResponse } from './encode-response.js';
export { GeminiStreamEncoder } from './encode-stream.js';
export { GeminiJsonArrayReframer, wantsSse } from './json-array-reframer.js';
export { findGeminiUsageInJson, usageFromGemini } from '../../wire/gemini/usage.js';
export { GeminiStreamUsageObserver } from './stream-usage-observer.js';
