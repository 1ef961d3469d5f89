import { resolveModel } from './resolve-model.js';
import type { EmbeddingsEndpoint } from '../../codecs/family-route.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { Usage } from '../../ir/usage.js';
import { chooseWire, type RequestedOperation } from '../../relay/choose-wire.js';
import { relayUnary } from '../../relay/relay-unary.js';
import type { GatewayServices } from '../../services.js';
import { estimateTextTokens } from '../../shared/estimate-tokens.js';
import { meteredRoute } from '../metered-route.js';
import { readJsonObject } from '../read-body.js';
import type { RouteHandler } from '../request-context.js';
import { sendRaw } from '../respond.js';

function inputTokensOf(usage: number): Usage {
  return { input: { total: usage, noCache: usage, cacheRead: 0, cacheWrite: 0 }, output: { total: 0, text: 0, reasoning: 0 } };
}

/** The embeddings operation of any family, in the metered frame. */
export function embeddingsRoute(services: GatewayServices, endpoint: EmbeddingsEndpoint): RouteHandler {
  const requested: RequestedOperation = { kind: 'embeddings', wire: endpoint.wire, batch: endpoint.batch };
  return meteredRoute(services, endpoint.label, async (call) => {
    const { context, meter } = call;
    const body = await readJsonObject(context, services.config.maxBodyBytes);
    const { request, encode } = endpoint.decode(context, body);
    const { model, routes } = resolveModel(services, meter, request.model, { kind: 'embedding', endpoint: `POST ${context.path}` });
    const estimate = request.inputs.reduce((sum, input) => sum + estimateTextTokens(input), 0);
    meter.expect({ promptTokens: estimate });
    const rateLimitHeaders = await call.admit({ model, estimatedTokens: estimate });
    const result = await relayUnary(call.relay, call.sink, meter, routes, {
      request(adapter, route, credential) {
        const wire = chooseWire(adapter, route.channel, requested);
        if (wire.kind === 'pass-through') return adapter.passThrough?.build(route.channel, credential, wire.operation, route.upstreamModel, endpoint.wire.passThroughBody(body, route.upstreamModel, false)) ?? null;
        // A channel whose upstream serves no embeddings is skipped.
        return adapter.embeddings?.build(route.channel, credential, request, route.upstreamModel) ?? null;
      },
      parse(adapter, route, upstreamBody) {
        if (chooseWire(adapter, route.channel, requested).kind === 'pass-through') return { body: upstreamBody, inputTokens: endpoint.reportedTokens(upstreamBody) ?? estimate };
        const embeddings = adapter.embeddings as NonNullable<typeof adapter.embeddings>;
        const parsed = embeddings.parse(upstreamBody, request);
        return { body: encode({ ...parsed, model: request.model }), inputTokens: parsed.inputTokens };
      },
    });
    if (result === null) throw new GatewayError('bad_request', `Model '${model.id}' has no channel that serves embeddings.`, { param: 'model' });
    meter.markFirstByte();
    const usage = inputTokensOf(result.inputTokens);
    const priced = meter.priced(result.body, { usage }, endpoint.usageKey);
    sendRaw(context, 200, priced.body, 'application/json', { ...rateLimitHeaders, ...priced.headers });
    meter.finish({ status: 200, usage });
  });
}
