import { bodyWithoutGatewayState } from '../pass-through-body.js';
import { SAME_ROUTES, type ClientWire, type Wire } from '../wire.js';
import { withoutGatewayThinking } from './without-gateway-state.js';

/** An Anthropic Messages API path under the channel's `/v1`. */
export type AnthropicPath = 'messages' | 'messages/count_tokens';

/**
 * Anthropic's Messages API (`anthropic-messages`): a stream is marked by `stream: true` in the body and always ends
 * with its usage (message_delta). Thinking blocks the gateway made for another provider are left out of the body.
 * It serves no embeddings.
 */
export const anthropicWire: Wire<AnthropicPath> & ClientWire = {
  name: 'anthropic-messages',
  get servedOn(): Wire {
    return anthropicWire;
  },
  passThrough: {
    chat: () => 'messages',
    'count-tokens': () => 'messages/count_tokens',
    embeddings: null,
    responses: null,
    'responses-input-tokens': null,
  },
  passThroughRoutes: { chat: SAME_ROUTES.chat, 'count-tokens': SAME_ROUTES.countTokens, embeddings: null },
  passThroughBody: (body, upstreamModel, _stream, bytes) => bodyWithoutGatewayState(body, upstreamModel, withoutGatewayThinking, bytes),
  answerModelField: 'model',
  gatewayFields: [],
};
