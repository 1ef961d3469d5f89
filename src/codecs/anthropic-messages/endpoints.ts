import type { CatalogModel } from '../../catalog/catalog-model.js';
import { needsOfChat } from '../../ir/request-needs.js';
import { estimateChatRequestTokens } from '../../shared/estimate-tokens.js';
import type { ChatEndpoint, CountTokensEndpoint, ModelListing } from '../family-route.js';
import { decodeAnthropicCountTokensRequest, encodeAnthropicCountTokensResponse } from './count-tokens.js';
import { anthropicModelObject, encodeAnthropicModelList, type AnthropicModelDescription } from './encode-model-list.js';
import { anthropicMessagesCodec } from './index.js';

/** POST /v1/messages (Anthropic Messages). */
export const anthropicMessagesEndpoint: ChatEndpoint = {
  protocol: 'anthropic-messages',
  readEnvelope(_request, body) {
    const chat = anthropicMessagesCodec.decodeRequest(body, {});
    return {
      codec: anthropicMessagesCodec,
      model: chat.model,
      stream: chat.stream,
      includeUsage: false,
      sse: true,
      maxOutputTokens: chat.maxOutputTokens ?? null,
      promptTokensEstimate: estimateChatRequestTokens(chat),
      needs: needsOfChat(chat),
      chat: () => chat,
    };
  },
};

/** POST /v1/messages/count_tokens. */
export const anthropicCountTokensEndpoint: CountTokensEndpoint = {
  protocol: 'anthropic-messages',
  passThroughHeaders: ['anthropic-version', 'anthropic-beta'],
  decode: (_request, body) => {
    const chat = decodeAnthropicCountTokensRequest(body);
    return { model: chat.model, chat };
  },
  encode: (count) => encodeAnthropicCountTokensResponse(count),
};

function toAnthropicModel(model: CatalogModel): AnthropicModelDescription {
  return { id: model.id, displayName: model.id, createdAt: model.createdAt };
}

/** Anthropic's clients call `/v1/models` and send `anthropic-version` on every call; Anthropic lists the newest first. */
export const anthropicModelListing: ModelListing = {
  recognises: (headers) => headers['anthropic-version'] !== undefined || headers['vendorb-version'] !== undefined,
  encodeList: (models, query) => encodeAnthropicModelList(
    [...models].sort((left, right) => right.createdAt - left.createdAt || left.id.localeCompare(right.id)).map(toAnthropicModel),
    { limit: query.get('limit'), afterId: query.get('after_id'), beforeId: query.get('before_id') },
  ),
  encodeModel: (model) => JSON.stringify(anthropicModelObject(toAnthropicModel(model))),
};
