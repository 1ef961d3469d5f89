import { GatewayError } from '../errors/gateway-error.js';
import type { RequestContext } from '../http/request-context.js';
import type { ChannelRoute } from '../routing/catalog.js';
import { orderCandidates } from '../routing/order-candidates.js';
import type { Logger } from '../shared/logger.js';
import type { AdapterRegistry } from '../upstreams/adapter-registry.js';
import type { UpstreamAdapter, UpstreamRequest } from '../upstreams/upstream-adapter.js';
import type { CredentialRotation } from './credential-rotation.js';
import type { RequestMeter } from './request-meter.js';
import { callUpstream } from './upstream-call.js';
import { callerErrorFromUpstream } from './upstream-error.js';

export interface UnaryRelayDependencies {
  adapters: AdapterRegistry;
  credentials: CredentialRotation;
  logger: Logger;
  maxAttempts: number;
}

/**
 * One exchange of a non-streaming JSON operation (embeddings, token counts) against one channel: the request
 * to send, and what to make of a 2xx body. Returning null from `request` skips the channel.
 */
export interface UnaryExchange<Result> {
  request(adapter: UpstreamAdapter, route: ChannelRoute, credential: string): UpstreamRequest | null;
  parse(adapter: UpstreamAdapter, route: ChannelRoute, body: Buffer): Result;
}

/**
 * Tries the model's channels in routing order for a unary operation; retries on upstream failure, relays the
 * upstream's refusals, and returns the first parsed answer. Null when no channel could take the request at all.
 */
export async function relayUnary<Result>(
  dependencies: UnaryRelayDependencies,
  context: RequestContext,
  meter: RequestMeter | null,
  routes: readonly ChannelRoute[],
  exchange: UnaryExchange<Result>,
): Promise<Result | null> {
  const abort = new AbortController();
  const onClose = (): void => {
    if (!context.response.writableFinished) abort.abort(new Error('client disconnected'));
  };
  context.response.once('close', onClose);
  let lastFailure: GatewayError | null = null;
  try {
    for (const route of orderCandidates(routes).slice(0, dependencies.maxAttempts)) {
      const adapter = dependencies.adapters.get(route.channel.type);
      if (adapter === undefined) continue;
      const credential = dependencies.credentials.next(route.channel);
      const request = exchange.request(adapter, route, credential);
      if (request === null) continue;
      if (meter !== null) {
        meter.attempts += 1;
        meter.channelId = route.channel.id;
      }
      const outcome = await callUpstream(adapter, route, request, { signal: abort.signal, stream: false });
      if (outcome.kind === 'aborted') throw new GatewayError('bad_request', 'The client closed the request.', { status: 499 });
      if (outcome.kind === 'refused') throw callerErrorFromUpstream(outcome.status, outcome.body);
      if (outcome.kind === 'retry') {
        if (outcome.credentialRejected) dependencies.credentials.reportRejected(route.channel, credential);
        dependencies.logger.warn('upstream attempt failed', { requestId: context.requestId, channelId: route.channel.id, code: outcome.failure.code });
        lastFailure = outcome.failure;
        continue;
      }
      const chunks: Buffer[] = [];
      try {
        for await (const chunk of outcome.response.body) chunks.push(chunk);
        return exchange.parse(adapter, route, Buffer.concat(chunks));
      } catch (error) {
        if (abort.signal.aborted) throw new GatewayError('bad_request', 'The client closed the request.', { status: 499 });
        lastFailure = error instanceof GatewayError ? error : new GatewayError('upstream_error', 'The upstream provider sent an answer the gateway could not read.');
      }
    }
  } finally {
    context.response.off('close', onClose);
  }
  if (lastFailure !== null) throw lastFailure;
  return null;
}
