import type { CountTokensEndpoint, EmbeddingsEndpoint } from '../codecs/family-route.js';
import type { ChatRequest } from '../ir/chat-request.js';
import type { EmbeddingRequest, EmbeddingResponse } from '../ir/embedding.js';
import type { TokenCount } from '../ir/token-count.js';
import type { UpstreamAdapter, UpstreamCountTokens } from '../upstreams/upstream-adapter.js';
import { chooseWire, type RequestedOperation } from './choose-wire.js';
import type { UnaryExchange } from './relay-unary.js';

/** An embeddings answer in the caller's wire, with the input tokens it is billed for. */
export interface EmbeddingsAnswer {
  body: Buffer | string;
  inputTokens: number;
}

/**
 * The embeddings exchange of one request: a channel that speaks the caller's wire gets the caller's body and its
 * answer goes back as it came (its tokens as it reports them, else `estimate`); any other gets the canonical request
 * through its adapter's embeddings part (a channel without one is skipped) and its answer is encoded in the
 * caller's wire under the model the caller named.
 */
export function embeddingsExchange(
  endpoint: EmbeddingsEndpoint,
  body: Record<string, unknown>,
  request: EmbeddingRequest,
  encode: (response: EmbeddingResponse) => string,
  estimate: number,
): UnaryExchange<EmbeddingsAnswer> {
  const requested: RequestedOperation = { kind: 'embeddings', wire: endpoint.wire, batch: endpoint.batch };
  return {
    request(adapter, route, credential) {
      const wire = chooseWire(adapter, route.channel, requested);
      if (wire.kind === 'pass-through') return adapter.passThrough?.build(route.channel, credential, wire.operation, route.upstreamModel, endpoint.wire.passThroughBody(body, route.upstreamModel, false, null)) ?? null;
      // A channel whose upstream serves no embeddings is skipped.
      return adapter.embeddings?.build(route.channel, credential, request, route.upstreamModel) ?? null;
    },
    parse(adapter, route, upstreamBody) {
      if (chooseWire(adapter, route.channel, requested).kind === 'pass-through') return { body: upstreamBody, inputTokens: endpoint.reportedTokens(upstreamBody) ?? estimate };
      const embeddings = adapter.embeddings as NonNullable<typeof adapter.embeddings>;
      const parsed = embeddings.parse(upstreamBody, request);
      return { body: encode({ ...parsed, model: request.model }), inputTokens: parsed.inputTokens };
    },
  };
}

/**
 * The token-count exchange of one request: a channel that speaks the caller's wire counts the caller's body (with
 * the caller's headers it should see); any other counts the canonical request with its adapter's counter, when it
 * has one for canonical requests (`chat` null: the request has no canonical form, such channels are skipped).
 */
export function countTokensExchange(
  endpoint: CountTokensEndpoint,
  body: Record<string, unknown>,
  chat: ChatRequest | null,
  callerHeaders: Readonly<Record<string, string | string[] | undefined>>,
): UnaryExchange<TokenCount> {
  const requested: RequestedOperation = { kind: 'count-tokens', wire: endpoint.wire };
  return {
    request(adapter, route, credential) {
      const wire = chooseWire(adapter, route.channel, requested);
      if (wire.kind === 'pass-through') {
        const upstreamBody = endpoint.wire.passThroughBody(body, route.upstreamModel, false, null);
        const upstreamRequest = adapter.passThrough?.build(route.channel, credential, wire.operation, route.upstreamModel, upstreamBody);
        if (upstreamRequest === undefined) return null;
        for (const name of endpoint.passThroughHeaders ?? []) {
          const value = callerHeaders[name];
          if (typeof value === 'string') upstreamRequest.headers[name] = value;
        }
        return upstreamRequest;
      }
      // A channel whose upstream has no counter for canonical requests is skipped: counted locally.
      return chat === null ? null : (adapter.countTokens?.build?.(route.channel, credential, chat, route.upstreamModel) ?? null);
    },
    parse: (adapter, _route, upstreamBody) => ({ inputTokens: counterOf(adapter).parse(upstreamBody), source: 'upstream' as const }),
  };
}

/** The counter of an adapter a count request was sent to (only adapters with one are sent one). */
function counterOf(adapter: UpstreamAdapter): UpstreamCountTokens {
  if (adapter.countTokens === undefined) throw new Error(`the ${adapter.wire.name} upstream has no token counter`);
  return adapter.countTokens;
}
