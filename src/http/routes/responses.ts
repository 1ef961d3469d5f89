import { openAIResponsesCodec } from '../../codecs/openai-responses/index.js';
import { resolveModel } from './resolve-model.js';
import { callerPreference, routesByPreference } from './caller-preference.js';
import { decodeResponsesRequest, validateResponsesRequest, type NativeOnlyField } from '../../codecs/openai-responses/decode-request.js';
import { GatewayError, toGatewayError } from '../../errors/gateway-error.js';
import { admit } from '../../relay/admission.js';
import { chooseWire, type RequestedOperation } from '../../relay/choose-wire.js';
import { relayChat } from '../../relay/relay-chat.js';
import { relayDependencies } from '../../relay/relay-dependencies.js';
import { RequestMeter } from '../../relay/request-meter.js';
import type { ChannelRoute } from '../../routing/catalog.js';
import { fitRoutes } from '../../routing/fit-routes.js';
import { countTokensLocally } from '../../tokenize/count-tokens-locally.js';
import { needsOfResponsesBody } from '../../codecs/openai-responses/request-needs.js';
import type { GatewayServices } from '../../services.js';
import type { AdapterRegistry } from '../../upstreams/adapter-registry.js';
import { authenticate } from '../authenticate.js';
import { responseSink } from '../response-sink.js';
import { readJsonObject } from '../read-body.js';
import type { RouteHandler } from '../request-context.js';
import { once } from './chat-endpoint.js';

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
 * POST /v1/responses (OpenAI Responses API): authenticate, validate, price, admit, relay, settle once — the chat
 * route's steps. OpenAI channels get the caller's body untouched; every other channel type gets it translated through
 * the canonical request, with the Responses event sequence rebuilt on the way back.
 */
export function responsesRoute(services: GatewayServices): RouteHandler {
  const relay = relayDependencies(services);
  return async (context) => {
    const { key, account } = await authenticate(context, services);
    const meter = new RequestMeter(services, context.requestId, account.id, key.id, 'openai-responses', context.path, context.startedAt);
    try {
      const body = await readJsonObject(context, services.config.maxBodyBytes);
      // The `provider` field is the gateway's, taken out before the body is validated or sent anywhere.
      const preference = callerPreference(context, 'openai-responses', body);
      const envelope = validateResponsesRequest(body);
      meter.stream = envelope.stream;
      const resolved = resolveModel(services, meter, envelope.model);
      const { model } = resolved;
      let routes = routesByPreference(services, preference, model, resolved.routes);
      meter.promptTokensEstimate = envelope.promptTokensEstimate;
      const codec = openAIResponsesCodec(body);
      if (envelope.nativeOnly !== null) routes = nativeRoutes(services.adapters, routes, { kind: 'chat', codec, stream: envelope.stream, sse: true }, envelope.nativeOnly);
      const chat = once(() => decodeResponsesRequest(body));
      routes = await fitRoutes(envelope.model, routes, {
        needs: needsOfResponsesBody(body),
        bodyBytes: context.bodyBytes ?? Number.POSITIVE_INFINITY,
        estimatedPromptTokens: envelope.promptTokensEstimate,
        outputTokens: envelope.maxOutputTokens ?? 0,
        countPromptTokens: async () => (await countTokensLocally(chat())).inputTokens,
      });
      const estimatedTokens = envelope.promptTokensEstimate + (envelope.maxOutputTokens ?? 0);
      const rateLimitHeaders = await admit(services, { key, account, model, estimatedTokens, meter, family: context.family });
      await relayChat(relay, {
        sink: responseSink(context),
        meter,
        codec,
        routes,
        body,
        chat,
        stream: envelope.stream,
        includeUsage: false,
        sse: true,
        responseHeaders: rateLimitHeaders,
        clientHeaders: {},
        estimatedTokens,
      });
    } catch (error) {
      const failure = toGatewayError(error);
      meter.finish({ status: failure.status, errorCode: failure.code });
      throw error;
    }
  };
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
