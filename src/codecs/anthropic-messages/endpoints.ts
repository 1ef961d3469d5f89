import type { CatalogModel } from '../../catalog/catalog-model.js';
import { decodedChatEnvelope, type ChatEndpoint, type CountTokensEndpoint, type ModelListing } from '../family-route.js';
import { decodeAnthropicCountTokensRequest, encodeAnthropicCountTokensResponse } from './count-tokens.js';
import { hostedToolOfferOfTools } from './decode-options.js';
import { anthropicModelObject, encodeAnthropicModelList, type AnthropicModelDescription } from './encode-model-list.js';
import { anthropicMessagesCodec } from './index.js';
import { anthropicWire } from '../../wire/anthropic/wire.js';
import { KeptMembers } from '../../wire/kept-members.js';
import { memberJsonBytes } from '../../wire/top-level-index.js';
import { rememberToolsSource } from '../../wire/tools-source.js';

/** POST /v1/messages (Anthropic Messages). */
export const anthropicMessagesEndpoint: ChatEndpoint = {
  protocol: 'anthropic-messages',
  wire: anthropicWire,
  // Claude Code sends the same tools (14-60 KB of schemas) and system prompt again each turn of its loop.
  keptMembers: new KeptMembers(['tools', 'system']),
  readEnvelope(_request, body, _added, bytes, scope) {
    const chat = anthropicMessagesCodec.decodeRequest(body, {});
    rememberToolsSource(chat.tools, bytes, 'anthropic-messages', scope);
    // Web fetch has no canonical form but passes through to Anthropic, which bills it per call.
    return { ...decodedChatEnvelope(anthropicMessagesCodec, chat, chat.stream, memberJsonBytes(bytes, 'tools')), hostedTools: hostedToolOfferOfTools(body.tools) };
  },
};

/** POST /v1/messages/count_tokens. */
export const anthropicCountTokensEndpoint: CountTokensEndpoint = {
  wire: anthropicWire,
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
