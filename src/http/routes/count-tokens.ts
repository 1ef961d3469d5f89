import type { KeyFamily } from '../../auth/extract-api-key.js';
import { decodeAnthropicCountTokensRequest, encodeAnthropicCountTokensResponse } from '../../codecs/anthropic-messages/index.js';
import { decodeGeminiCountTokensRequest, encodeGeminiCountTokensResponse } from '../../codecs/gemini/index.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { ChatRequest } from '../../ir/chat-request.js';
import type { TokenCount } from '../../ir/token-count.js';
import { passThroughBody } from '../../relay/pass-through-body.js';
import { relayDependencies } from '../../relay/relay-dependencies.js';
import { relayUnary } from '../../relay/relay-unary.js';
import type { GatewayServices } from '../../services.js';
import { countTokensLocally } from '../../tokenize/count-tokens-locally.js';
import type { WireProtocol } from '../../upstreams/upstream-adapter.js';
import { authenticate } from '../authenticate.js';
import { readJsonObject } from '../read-body.js';
import type { RequestContext, RouteHandler } from '../request-context.js';
import { sendRaw } from '../respond.js';

interface CountTokensEndpoint {
  protocol: WireProtocol;
  keyFamily: KeyFamily;
  decode(context: RequestContext, body: Record<string, unknown>): ChatRequest;
  encode(count: TokenCount): string;
}

/**
 * Token counting (never billed): the upstream's own counter when the model's channel has one, otherwise, or when
 * every upstream fails, the local tokenizer. The key's model allowlist still applies.
 */
function countTokensRoute(services: GatewayServices, endpoint: CountTokensEndpoint): RouteHandler {
  const relay = relayDependencies(services, 2);
  return async (context) => {
    const { key } = await authenticate(context, services, endpoint.keyFamily);
    const body = await readJsonObject(context, services.config.maxBodyBytes);
    const chat = endpoint.decode(context, body);
    const model = services.catalog.model(chat.model);
    if (model === undefined) throw new GatewayError('model_not_found', `The model '${chat.model}' does not exist.`, { param: 'model' });
    if (key.allowedModels !== null && !key.allowedModels.includes(model.id)) {
      throw new GatewayError('model_not_allowed', `This API key is not allowed to use model '${model.id}'.`);
    }
    let count: TokenCount | null = null;
    try {
      count = await relayUnary(
        relay,
        context,
        null,
        services.catalog.routes(model.id),
        {
          request(adapter, route, credential) {
            if (adapter.protocol === endpoint.protocol) {
              const upstreamBody = passThroughBody(adapter.protocol, body, route.upstreamModel, false);
              return adapter.buildPassThrough(route.channel, credential, { kind: 'count-tokens' }, route.upstreamModel, upstreamBody);
            }
            return adapter.buildCountTokensRequest(route.channel, credential, chat, route.upstreamModel);
          },
          parse: (adapter, _route, upstreamBody) => ({ inputTokens: adapter.parseCountTokensResponse(upstreamBody), source: 'upstream' as const }),
        },
        { model: model.id, modelLimits: false },
      );
    } catch (error) {
      if (error instanceof GatewayError && error.status < 500) throw error;
      services.logger.warn('upstream token count failed; counting locally', { requestId: context.requestId });
    }
    count ??= await countTokensLocally(chat);
    sendRaw(context, 200, endpoint.encode(count), 'application/json', { 'x-token-count-source': count.source });
  };
}

/** POST /v1/messages/count_tokens. */
export function anthropicCountTokensRoute(services: GatewayServices): RouteHandler {
  return countTokensRoute(services, {
    protocol: 'anthropic-messages',
    keyFamily: 'anthropic',
    decode: (_context, body) => decodeAnthropicCountTokensRequest(body),
    encode: (count) => encodeAnthropicCountTokensResponse(count),
  });
}

/** POST /v1beta/models/{model}:countTokens (also under /v1/). */
export function geminiCountTokensRoute(services: GatewayServices): RouteHandler {
  return countTokensRoute(services, {
    protocol: 'gemini',
    keyFamily: 'gemini',
    decode: (context, body) => decodeGeminiCountTokensRequest(body, { pathModel: context.params.model ?? '' }),
    encode: encodeGeminiCountTokensResponse,
  });
}
