import { decodeAnthropicCountTokensRequest, encodeAnthropicCountTokensResponse } from '../../codecs/anthropic-messages/index.js';
import { decodeGeminiCountTokensRequest, encodeGeminiCountTokensResponse } from '../../codecs/gemini/index.js';
import { decodeResponsesRequest, validateResponsesRequest, type NativeOnlyField } from '../../codecs/openai-responses/index.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { ChatRequest } from '../../ir/chat-request.js';
import type { TokenCount } from '../../ir/token-count.js';
import { passThroughBody } from '../../relay/pass-through-body.js';
import { relayDependencies } from '../../relay/relay-dependencies.js';
import { relayUnary } from '../../relay/relay-unary.js';
import type { ChannelRoute } from '../../routing/catalog.js';
import type { GatewayServices } from '../../services.js';
import type { Channel } from '../../storage/records.js';
import { countTokensLocally } from '../../tokenize/count-tokens-locally.js';
import { isClientWire, type UpstreamAdapter, type UpstreamCountTokens, type UpstreamOperation, type WireProtocol } from '../../upstreams/upstream-adapter.js';
import { authenticate } from '../authenticate.js';
import { readJsonObject } from '../read-body.js';
import type { RequestContext, RouteHandler } from '../request-context.js';
import { sendRaw } from '../respond.js';

/**
 * What a count request asks for: the model and the canonical request, or, for a request that needs the upstream's
 * own state (e.g. `previous_response_id`), no canonical request and the field that needs it: then only pass-through
 * channels can count it and there is no local count.
 */
type CountTokensRequest = { model: string; chat: ChatRequest } | { model: string; chat: null; nativeOnly: NativeOnlyField };

interface CountTokensEndpoint {
  /** The operation a channel that speaks this endpoint's wire gets the caller's body with. */
  operation: UpstreamOperation;
  passesThrough(adapter: UpstreamAdapter, channel: Channel): boolean;
  /** Caller headers a same-protocol upstream should see (Anthropic's version and betas). */
  passThroughHeaders?: readonly string[];
  decode(context: RequestContext, body: Record<string, unknown>): CountTokensRequest;
  encode(count: TokenCount): string;
}

/**
 * Token counting (never billed): the upstream's own counter when the model's channel has one, otherwise, or when
 * every upstream fails, the local tokenizer. The key's model allowlist still applies.
 */
function countTokensRoute(services: GatewayServices, endpoint: CountTokensEndpoint): RouteHandler {
  const relay = relayDependencies(services, 2);
  return async (context) => {
    const { key } = await authenticate(context, services);
    const body = await readJsonObject(context, services.config.maxBodyBytes);
    const request = endpoint.decode(context, body);
    const { chat } = request;
    const model = services.catalog.model(request.model);
    if (model === undefined) throw new GatewayError('model_not_found', `The model '${request.model}' does not exist.`, { param: 'model' });
    if (key.allowedModels !== null && !key.allowedModels.includes(model.id)) {
      throw new GatewayError('model_not_allowed', `This API key is not allowed to use model '${model.id}'.`);
    }
    const passesThrough = (route: ChannelRoute): boolean => {
      const adapter = services.adapters.get(route.channel.type);
      return adapter !== undefined && endpoint.passesThrough(adapter, route.channel);
    };
    let routes = services.catalog.routes(model.id);
    if (request.chat === null) {
      routes = routes.filter(passesThrough);
      if (routes.length === 0) throw new GatewayError('unsupported_parameter', request.nativeOnly.message, { param: request.nativeOnly.param });
    }
    let count: TokenCount | null = null;
    try {
      count = await relayUnary(
        relay,
        context,
        null,
        routes,
        {
          request(adapter, route, credential) {
            if (endpoint.passesThrough(adapter, route.channel) && isClientWire(adapter.protocol)) {
              const upstreamBody = passThroughBody(adapter.protocol, body, route.upstreamModel, false);
              const upstreamRequest = adapter.buildPassThrough(route.channel, credential, endpoint.operation, route.upstreamModel, upstreamBody);
              for (const name of endpoint.passThroughHeaders ?? []) {
                const value = context.request.headers[name];
                if (typeof value === 'string') upstreamRequest.headers[name] = value;
              }
              return upstreamRequest;
            }
            // A channel whose upstream has no counter for canonical requests is skipped: counted locally.
            return chat === null ? null : (adapter.countTokens?.build?.(route.channel, credential, chat, route.upstreamModel) ?? null);
          },
          parse: (adapter, _route, upstreamBody) => ({ inputTokens: counterOf(adapter).parse(upstreamBody), source: 'upstream' as const }),
        },
        { model: model.id, modelLimits: false },
      );
    } catch (error) {
      if ((error instanceof GatewayError && error.status < 500) || chat === null) throw error;
      services.logger.warn('upstream token count failed; counting locally', { requestId: context.requestId });
    }
    if (count === null) {
      if (chat === null) throw new GatewayError('upstream_unavailable', `No upstream channel can count this request for model '${model.id}' now.`);
      count = await countTokensLocally(chat);
    }
    sendRaw(context, 200, endpoint.encode(count), 'application/json', { 'x-token-count-source': count.source });
  };
}

/** The counter of an adapter a count request was sent to (only adapters with one are sent one). */
function counterOf(adapter: UpstreamAdapter): UpstreamCountTokens {
  if (adapter.countTokens === undefined) throw new Error(`the ${adapter.protocol} upstream has no token counter`);
  return adapter.countTokens;
}

/** Channels whose adapter speaks the endpoint's own protocol take the caller's body. */
const sameProtocol = (protocol: WireProtocol) => (adapter: UpstreamAdapter): boolean => adapter.protocol === protocol;

/** POST /v1/messages/count_tokens. */
export function anthropicCountTokensRoute(services: GatewayServices): RouteHandler {
  return countTokensRoute(services, {
    operation: { kind: 'count-tokens' },
    passesThrough: sameProtocol('anthropic-messages'),
    passThroughHeaders: ['anthropic-version', 'anthropic-beta'],
    decode: (_context, body) => {
      const chat = decodeAnthropicCountTokensRequest(body);
      return { model: chat.model, chat };
    },
    encode: (count) => encodeAnthropicCountTokensResponse(count),
  });
}

/** POST /v1beta/models/{model}:countTokens (also under /v1/). */
export function geminiCountTokensRoute(services: GatewayServices): RouteHandler {
  return countTokensRoute(services, {
    operation: { kind: 'count-tokens' },
    passesThrough: sameProtocol('gemini'),
    decode: (context, body) => {
      const chat = decodeGeminiCountTokensRequest(body, { pathModel: context.params.model ?? '' });
      return { model: chat.model, chat };
    },
    encode: encodeGeminiCountTokensResponse,
  });
}

/**
 * POST /v1/responses/input_tokens (OpenAI Responses API): OpenAI channels count the caller's body themselves
 * (`previous_response_id` and `conversation` only there); every other channel counts the translated request, or the
 * local tokenizer does.
 */
export function responsesInputTokensRoute(services: GatewayServices): RouteHandler {
  const operation: UpstreamOperation = { kind: 'responses-input-tokens' };
  return countTokensRoute(services, {
    operation,
    passesThrough: (adapter, channel) => adapter.servesPassThrough?.(channel, operation) === true,
    decode: (_context, body) => {
      const envelope = validateResponsesRequest(body);
      if (envelope.nativeOnly !== null) return { model: envelope.model, chat: null, nativeOnly: envelope.nativeOnly };
      return { model: envelope.model, chat: decodeResponsesRequest(body) };
    },
    encode: (count) => JSON.stringify({ object: 'response.input_tokens', input_tokens: count.inputTokens }),
  });
}
