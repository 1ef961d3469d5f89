import { decodedChatEnvelope, type ChatEndpoint, type CountTokensEndpoint, type EmbeddingsEndpoint, type ModelListing } from '../family-route.js';
import { decodeGeminiCountTokensRequest, encodeGeminiCountTokensResponse } from './count-tokens.js';
import { decodeGeminiBatchEmbedContentsRequest, decodeGeminiEmbedContentRequest } from './decode-embedding-request.js';
import { encodeGeminiBatchEmbedContentsResponse, encodeGeminiEmbedContentResponse } from './encode-embedding-response.js';
import { encodeGeminiModel, encodeGeminiModelList } from './encode-model-list.js';
import { geminiCodec, geminiCodecFor } from './index.js';
import { geminiWire } from '../../wire/gemini/wire.js';

/** POST /v1beta/models/{model}:generateContent and :streamGenerateContent (also under /v1/). */
export function geminiChatEndpoint(stream: boolean): ChatEndpoint {
  return {
    protocol: 'gemini',
    wire: geminiWire,
    readEnvelope(request, body) {
      const chat = geminiCodec.decodeRequest(body, { pathModel: request.params.model ?? '', stream });
      return decodedChatEnvelope(geminiCodecFor({ sse: request.query.get('alt') === 'sse' }), chat, stream);
    },
  };
}

/** POST /v1beta/models/{model}:countTokens (also under /v1/). */
export const geminiCountTokensEndpoint: CountTokensEndpoint = {
  wire: geminiWire,
  decode: (request, body) => {
    const chat = decodeGeminiCountTokensRequest(body, { pathModel: request.params.model ?? '' });
    return { model: chat.model, chat };
  },
  encode: encodeGeminiCountTokensResponse,
};

/** POST /v1beta/models/{model}:embedContent and :batchEmbedContents (also under /v1/). */
export function geminiEmbeddingsEndpoint(batch: boolean): EmbeddingsEndpoint {
  return {
    wire: geminiWire,
    label: 'gemini-embeddings',
    batch,
    decode(request, body) {
      const hints = { pathModel: request.params.model ?? '' };
      return batch
        ? { request: decodeGeminiBatchEmbedContentsRequest(body, hints), encode: encodeGeminiBatchEmbedContentsResponse }
        : { request: decodeGeminiEmbedContentRequest(body, hints), encode: encodeGeminiEmbedContentResponse };
    },
    // Gemini's embedding answers carry no token counts (the local estimate is billed) and no usage object.
    usageKey: null,
    reportedTokens: () => null,
  };
}

/**
 * GET /v1beta/models and one model. Google's SDK also calls `/v1/models`, with its key as `x-goog-api-key` or
 * `?key=`; a Bearer token or `x-api-key` says another family's client.
 */
export const geminiModelListing: ModelListing = {
  recognises(headers, query) {
    if (headers.authorization !== undefined || headers['x-api-key'] !== undefined) return false;
    return headers['x-goog-api-key'] !== undefined || query.has('key');
  },
  encodeList: (models, query) => encodeGeminiModelList(models.map((model) => ({ id: model.id, kind: model.kind })), {
    pageSize: query.get('pageSize'),
    pageToken: query.get('pageToken'),
  }),
  encodeModel: (model) => encodeGeminiModel({ id: model.id, kind: model.kind }),
};
