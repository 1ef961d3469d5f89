import { resolveModel } from './resolve-model.js';
import type { EmbeddingsEndpoint } from '../codecs/family-route.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Usage } from '../ir/usage.js';
import { AnswerPrice } from '../billing/answer-report.js';
import { embeddingsExchange } from '../relay/unary-exchanges.js';
import { relayUnary } from '../relay/relay-unary.js';
import type { GatewayServices } from '../services.js';
import { estimateTextTokens } from '../shared/estimate-tokens.js';
import { meteredRoute } from './metered-frame.js';
import { forwardHeaderCustomer, readRequestIdentity } from '../customers/request-identity.js';
import { readJsonObject } from '../http/read-body.js';
import type { RouteHandler } from '../http/request-context.js';

function inputTokensOf(usage: number): Usage {
  return { input: { total: usage, noCache: usage, cacheRead: 0, cacheWrite: 0 }, output: { total: 0, text: 0, reasoning: 0 } };
}

/** The embeddings operation of any family, in the metered frame. */
export function embeddingsRoute(services: GatewayServices, endpoint: EmbeddingsEndpoint): RouteHandler {
  return meteredRoute(services, endpoint.label, async (call) => {
    const { context, meter } = call;
    const body = await readJsonObject(context, services.config.maxBodyBytes);
    meter.identity = readRequestIdentity(endpoint.wire.name, context.request.headers, body);
    forwardHeaderCustomer(endpoint.wire.name, context.request.headers, body, meter.identity);
    const { request, encode } = endpoint.decode(context, body);
    const { model, routes } = resolveModel(services, meter, request.model, { kind: 'embedding', endpoint: `POST ${context.path}` });
    const estimate = request.inputs.reduce((sum, input) => sum + estimateTextTokens(input), 0);
    meter.expect({ promptTokens: estimate });
    const { rateLimitHeaders } = await call.admit({ model, estimatedTokens: estimate });
    const result = await relayUnary(call.relay, call.sink, meter, routes, embeddingsExchange(endpoint, body, request, encode, estimate), { model: model.id });
    if (result === null) throw new GatewayError('bad_request', `Model '${model.id}' has no channel that serves embeddings.`, { param: 'model' });
    const usage = inputTokensOf(result.inputTokens);
    const price = new AnswerPrice(model);
    const priced = price.priced(result.body, { usage }, endpoint.usageKey);
    call.sink.send({ status: 200, body: priced.body, contentType: 'application/json', headers: { ...rateLimitHeaders, ...priced.headers } });
    return { status: 200, usage, price };
  });
}
