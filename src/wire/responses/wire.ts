import { openAIWire } from '../openai/wire.js';
import { bodyWithoutGatewayState } from '../pass-through-body.js';
import type { ClientWire } from '../wire.js';
import { withoutGatewayReasoning } from './without-gateway-state.js';

/**
 * OpenAI's Responses API as its clients send it (`openai-responses`). No upstream speaks it as its own wire: it is
 * served on OpenAI's (`POST /responses`, `/responses/input_tokens`) by the channels whose adapter says so, and
 * translated everywhere else. Reasoning items the gateway made for another provider are left out of the body.
 */
export const responsesWire: ClientWire = {
  name: 'openai-responses',
  servedOn: openAIWire,
  passThroughRoutes: {
    chat: (operation) => ({ kind: 'responses', stream: operation.stream }),
    'count-tokens': () => ({ kind: 'responses-input-tokens' }),
    embeddings: null,
  },
  passThroughBody: (body, upstreamModel, _stream, bytes) => bodyWithoutGatewayState(body, upstreamModel, withoutGatewayReasoning, bytes),
  answerModelField: 'model',
  gatewayFields: ['provider'],
};
