import type { CountTokensEndpoint } from '../codecs/family-route.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { TokenCount } from '../ir/token-count.js';
import { relayDependencies } from '../relay/relay-dependencies.js';
import type { RequestedOperation } from '../relay/choose-wire.js';
import { relayUnary } from '../relay/relay-unary.js';
import { countTokensExchange } from '../relay/unary-exchanges.js';
import type { GatewayServices } from '../services.js';
import { countTokensLocally } from '../tokenize/count-tokens-locally.js';
import { authenticate } from '../http/authenticate.js';
import { responseSink } from '../http/response-sink.js';
import { readJsonObject } from '../http/read-body.js';
import type { RouteHandler } from '../http/request-context.js';
import { sendRaw } from '../http/respond.js';
import { nativeRoutes } from '../relay/native-routes.js';

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
      count = await relayUnary(relay, responseSink(context), null, routes, countTokensExchange(endpoint, body, chat, context.request.headers), { model: model.id, modelLimits: false });
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
