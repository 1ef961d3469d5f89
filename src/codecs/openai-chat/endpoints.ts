import { listedModelJson } from '../../catalog/model-json.js';
import { estimateMessagesTokens } from '../../shared/estimate-tokens.js';
import { once, type ChatEndpoint, type EmbeddingsEndpoint, type ModelListing } from '../family-route.js';
import { decodeOpenAIEmbeddingRequest } from './decode-embedding-request.js';
import { encodeOpenAIEmbeddingResponse } from './encode-embedding-response.js';
import { openAIChatCodec, openAIChatCodecFor } from './index.js';
import { openAIWire } from '../../wire/openai/wire.js';
import { hostedToolOfferOfOpenAIChatBody, needsOfOpenAIChatBody } from './request-needs.js';
import { validateOpenAIChatRequest } from './validate-request.js';

/** POST /v1/chat/completions: validated up front, decoded to the IR only if a translated channel needs it. */
export const openAIChatEndpoint: ChatEndpoint = {
  protocol: 'openai-chat',
  wire: openAIWire,
  readEnvelope(_request, body) {
    const envelope = validateOpenAIChatRequest(body);
    return {
      codec: openAIChatCodecFor(envelope),
      model: envelope.model,
      stream: envelope.stream,
      maxOutputTokens: envelope.maxOutputTokens,
      promptTokensEstimate: estimateMessagesTokens(body.messages),
      needs: needsOfOpenAIChatBody(body),
      hostedTools: hostedToolOfferOfOpenAIChatBody(body),
      chat: once(() => openAIChatCodec.decodeRequest(body, {})),
    };
  },
};

function openAIReportedTokens(body: Buffer): number | null {
  try {
    const tokens = (JSON.parse(body.toString('utf8')) as { usage?: { prompt_tokens?: unknown } }).usage?.prompt_tokens;
    return typeof tokens === 'number' ? tokens : null;
  } catch {
    return null;
  }
}

/** POST /v1/embeddings. */
export const openAIEmbeddingsEndpoint: EmbeddingsEndpoint = {
  wire: openAIWire,
  label: 'openai-embeddings',
  batch: true,
  decode(_request, body) {
    const decoded = decodeOpenAIEmbeddingRequest(body);
    return { request: decoded.request, encode: (response) => encodeOpenAIEmbeddingResponse(response, { model: decoded.request.model, encodingFormat: decoded.encodingFormat }) };
  },
  usageKey: 'usage',
  reportedTokens: openAIReportedTokens,
};

/**
 * GET /v1/models: dated snapshots and other aliases are listed under their own ids, as OpenAI lists its snapshots.
 * It recognises no client of its own: it is the list of every caller no other family recognises.
 */
export const openAIModelListing: ModelListing = {
  encodeList: (models) => JSON.stringify({ object: 'list', data: models.flatMap((model) => [model.id, ...model.aliases].map((name) => listedModelJson(model, name))) }),
  encodeModel: (model, askedId) => JSON.stringify(listedModelJson(model, askedId)),
};
