import type { CountTokensEndpoint } from '../../codecs/family-route.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { TokenCount } from '../../ir/token-count.js';
import { chooseWire, type RequestedOperation } from '../../relay/choose-wire.js';
import { relayDependencies } from '../../relay/relay-dependencies.js';
import { relayUnary } from '../../relay/relay-unary.js';
import type { GatewayServices } from '../../services.js';
import { countTokensLocally } from '../../tokenize/count-tokens-locally.js';
import type { UpstreamAdapter, UpstreamCountTokens } from '../../upstreams/upstream-adapter.js';
import { authenticate } from '../authenticate.js';
import { responseSink } from '../response-sink.js';
import { readJsonObject } from '../read-body.js';
import type { RouteHandler } from '../request-context.js';
import { sendRaw } from '../respond.js';
import { nativeRoutes } from './native-routes.js';

/**
 * Token counting (never billed): the upstream's own counter when the model's channel has one, otherwise, or when
 * every upstream fails, the local tokenizer. The key's model allowlist still applies.
 */
export function countTokensRoute(services: GatewayServices, endpoint: CountTokensEndpoint): RouteHandler {
  const relay = relayDependencies(services, 2);
  const requested: RequestedOperation = { kind: 'count-tokens', wire: endpoint.wire };
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
    const served = services.catalog.routes(model.id);
    const routes = request.chat === null ? nativeRoutes(services.adapters, served, requested, request.nativeOnly) : served;
    let count: TokenCount | null = null;
    try {
      count = await relayUnary(
        relay,
        responseSink(context),
        null,
        routes,
        {
          request(adapter, route, credential) {
            const wire = chooseWire(adapter, route.channel, requested);
            if (wire.kind === 'pass-through') {
              const upstreamBody = endpoint.wire.passThroughBody(body, route.upstreamModel, false);
              const upstreamRequest = adapter.passThrough?.build(route.channel, credential, wire.operation, route.upstreamModel, upstreamBody);
              if (upstreamRequest === undefined) return null;
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
  if (adapter.countTokens === undefined) throw new Error(`the ${adapter.wire.name} upstream has no token counter`);
  return adapter.countTokens;
}
