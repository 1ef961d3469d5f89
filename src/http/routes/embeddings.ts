import { resolveModel } from './resolve-model.js';
import {
  decodeGeminiBatchEmbedContentsRequest, decodeGeminiEmbedContentRequest, encodeGeminiBatchEmbedContentsResponse, encodeGeminiEmbedContentResponse,
} from '../../codecs/gemini/index.js';
import { decodeOpenAIEmbeddingRequest, encodeOpenAIEmbeddingResponse } from '../../codecs/openai-chat/index.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { EmbeddingRequest, EmbeddingResponse } from '../../ir/embedding.js';
import type { Usage } from '../../ir/usage.js';
import { chooseWire, type RequestedOperation } from '../../relay/choose-wire.js';
import { relayUnary } from '../../relay/relay-unary.js';
import type { GatewayServices } from '../../services.js';
import { estimateTextTokens } from '../../shared/estimate-tokens.js';
import type { WireProtocol } from '../../upstreams/upstream-adapter.js';
import { meteredRoute } from '../metered-route.js';
import { readJsonObject } from '../read-body.js';
import type { RequestContext, RouteHandler } from '../request-context.js';
import { sendRaw } from '../respond.js';

interface EmbeddingsEndpoint {
  protocol: WireProtocol;
  label: string;
  batch: boolean;
  decode(context: RequestContext, body: Record<string, unknown>): { request: EmbeddingRequest; encode: (response: EmbeddingResponse) => string };
  /** The caller's body for a same-protocol upstream. */
  passThroughBody(body: Record<string, unknown>, upstreamModel: string): string;
  /** Input tokens an upstream answer in this protocol reports, if it does. */
  reportedTokens(body: Buffer): number | null;
}

function inputTokensOf(usage: number): Usage {
  return { input: { total: usage, noCache: usage, cacheRead: 0, cacheWrite: 0 }, output: { total: 0, text: 0, reasoning: 0 } };
}

function embeddingsRoute(services: GatewayServices, endpoint: EmbeddingsEndpoint): RouteHandler {
  const requested: RequestedOperation = { kind: 'embeddings', protocol: endpoint.protocol, batch: endpoint.batch };
  return meteredRoute(services, endpoint.label, async (call) => {
    const { context, meter } = call;
    const body = await readJsonObject(context, services.config.maxBodyBytes);
    const { request, encode } = endpoint.decode(context, body);
    const { model, routes } = resolveModel(services, meter, request.model);
    const estimate = request.inputs.reduce((sum, input) => sum + estimateTextTokens(input), 0);
    meter.expect({ promptTokens: estimate });
    const rateLimitHeaders = await call.admit({ model, estimatedTokens: estimate });
    const result = await relayUnary(call.relay, call.sink, meter, routes, {
      request(adapter, route, credential) {
        const wire = chooseWire(adapter, route.channel, requested);
        if (wire.kind === 'pass-through') return adapter.buildPassThrough(route.channel, credential, wire.operation, route.upstreamModel, endpoint.passThroughBody(body, route.upstreamModel));
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
    const priced = meter.priced(result.body, { usage }, endpoint.protocol === 'openai-chat' ? 'usage' : null);
    sendRaw(context, 200, priced.body, 'application/json', { ...rateLimitHeaders, ...priced.headers });
    meter.finish({ status: 200, usage });
  });
}

function openAIReportedTokens(body: Buffer): number | null {
  try {
    const tokens = (JSON.parse(body.toString('utf8')) as { usage?: { prompt_tokens?: unknown } }).usage?.prompt_tokens;
    return typeof tokens === 'number' ? tokens : null;
  } catch {
    return null;
  }
}

/** POST /v1/embeddings. */
export function openAIEmbeddingsRoute(services: GatewayServices): RouteHandler {
  return embeddingsRoute(services, {
    protocol: 'openai-chat',
    label: 'openai-embeddings',
    batch: true,
    decode(_context, body) {
      const decoded = decodeOpenAIEmbeddingRequest(body);
      return { request: decoded.request, encode: (response) => encodeOpenAIEmbeddingResponse(response, { model: decoded.request.model, encodingFormat: decoded.encodingFormat }) };
    },
    passThroughBody: (body, upstreamModel) => JSON.stringify({ ...body, model: upstreamModel }),
    reportedTokens: openAIReportedTokens,
  });
}

/** POST /v1beta/models/{model}:embedContent and :batchEmbedContents (also under /v1/). */
export function geminiEmbeddingsRoute(services: GatewayServices, batch: boolean): RouteHandler {
  return embeddingsRoute(services, {
    protocol: 'gemini',
    label: 'gemini-embeddings',
    batch,
    decode(context, body) {
      const hints = { pathModel: context.params.model ?? '' };
      return batch
        ? { request: decodeGeminiBatchEmbedContentsRequest(body, hints), encode: encodeGeminiBatchEmbedContentsResponse }
        : { request: decodeGeminiEmbedContentRequest(body, hints), encode: encodeGeminiEmbedContentResponse };
    },
    passThroughBody: (body) => JSON.stringify(body),
    // Gemini's embedding answers carry no token counts: the local estimate is billed.
    reportedTokens: () => null,
  });
}
