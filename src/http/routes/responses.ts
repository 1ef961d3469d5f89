import { openAIResponsesCodec } from '../../codecs/openai-responses/index.js';
import { decodeResponsesRequest, validateResponsesRequest, type NativeOnlyField } from '../../codecs/openai-responses/decode-request.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { chooseWire, type RequestedOperation } from '../../relay/choose-wire.js';
import type { ChannelRoute } from '../../routing/catalog.js';
import { needsOfResponsesBody } from '../../codecs/openai-responses/request-needs.js';
import type { GatewayServices } from '../../services.js';
import type { AdapterRegistry } from '../../upstreams/adapter-registry.js';
import { authenticate } from '../authenticate.js';
import type { RouteHandler } from '../request-context.js';
import { chatRoute, once, type ChatEndpoint } from './chat-endpoint.js';

/**
 * Requests that need OpenAI's stored state or built-in tools go only to channels serving the Responses API natively;
 * with none in the model's pool they are refused up front with the field that needs it.
 */
function nativeRoutes(adapters: AdapterRegistry, routes: readonly ChannelRoute[], requested: RequestedOperation, field: NativeOnlyField): readonly ChannelRoute[] {
  const native = routes.filter((route) => {
    const adapter = adapters.get(route.channel.type);
    return adapter !== undefined && chooseWire(adapter, route.channel, requested).kind === 'pass-through';
  });
  if (native.length === 0) throw new GatewayError('unsupported_parameter', field.message, { param: field.param });
  return native;
}

/**
 * POST /v1/responses (OpenAI Responses API), in the chat route: OpenAI channels get the caller's body untouched;
 * every other channel type gets it translated through the canonical request, with the Responses event sequence
 * rebuilt on the way back.
 */
export const openAIResponsesEndpoint: ChatEndpoint = {
  protocol: 'openai-responses',
  readEnvelope(_context, body) {
    const envelope = validateResponsesRequest(body);
    const codec = openAIResponsesCodec(body);
    const { nativeOnly } = envelope;
    return {
      codec,
      model: envelope.model,
      stream: envelope.stream,
      includeUsage: false,
      sse: true,
      maxOutputTokens: envelope.maxOutputTokens,
      promptTokensEstimate: envelope.promptTokensEstimate,
      needs: needsOfResponsesBody(body),
      chat: once(() => decodeResponsesRequest(body)),
      // An answer can depend on state OpenAI stores (previous_response_id, conversation), which the key cannot see.
      cacheable: false,
      ...(nativeOnly === null ? {} : { narrowRoutes: (routes, adapters) => nativeRoutes(adapters, routes, { kind: 'chat', codec, stream: envelope.stream, sse: true }, nativeOnly) }),
    };
  },
};

/** POST /v1/responses. */
export function responsesRoute(services: GatewayServices): RouteHandler {
  return chatRoute(services, openAIResponsesEndpoint);
}

/**
 * GET/DELETE /v1/responses/{id}, POST /v1/responses/{id}/cancel, GET /v1/responses/{id}/input_items: the gateway keeps
 * no response bodies (metadata-only usage logs) and does not know which upstream account holds a stored response, so
 * these answer a clear 404 after authentication rather than guessing a channel.
 */
export function storedResponseRoute(services: GatewayServices): RouteHandler {
  return async (context) => {
    await authenticate(context, services);
    throw new GatewayError(
      'not_found',
      `Response '${context.params.id ?? ''}' cannot be retrieved, cancelled or deleted through this gateway: it stores no response bodies. Keep the output on the client (send 'store': false and pass the conversation in 'input').`,
    );
  };
}
