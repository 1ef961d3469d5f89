import { GatewayError } from '../errors/gateway-error.js';
import type { ChannelRoute } from '../routing/catalog.js';
import { RoutePlan, type Candidate } from '../routing/route-plan.js';
import type { UpstreamAdapter, UpstreamRequest } from '../upstreams/upstream-adapter.js';
import type { RelayDependencies } from './relay-dependencies.js';
import type { ResponseSink } from './response-sink.js';
import type { AttemptLog } from './attempt-log.js';
import { failureClassOf, readWholeBody } from './upstream-call.js';
import { openAttempt, tryPool, type PoolOutcome } from './pool-attempts.js';
import type { CallerSignal } from './caller-signal.js';

/**
 * One exchange of a non-streaming JSON operation (embeddings, token counts) against one channel: the request
 * to send, and what to make of a 2xx body. Returning null from `request` skips the channel.
 */
export interface UnaryExchange<Result> {
  request(adapter: UpstreamAdapter, route: ChannelRoute, credential: string): UpstreamRequest | null;
  parse(adapter: UpstreamAdapter, route: ChannelRoute, body: Buffer): Result;
}

export interface UnaryOptions {
  /** The public model id the routes serve. */
  model: string;
  /** Whether channel-model RPM/TPM apply (default true; token counting does not use up a model's generation limit). */
  modelLimits?: boolean;
}

function callerLeft(): GatewayError {
  return new GatewayError('bad_request', 'The client closed the request.', { status: 499 });
}

/**
 * Tries the model's channels in routing order for a unary operation (the same routing as chat: breakers,
 * per-model limits, bounded attempts and time); retries on upstream failure, relays the upstream's refusals, and
 * returns the first parsed answer. Null when no channel could take the request at all.
 */
export async function relayUnary<Result>(
  dependencies: RelayDependencies,
  sink: ResponseSink,
  attempts: AttemptLog | null,
  routes: readonly ChannelRoute[],
  exchange: UnaryExchange<Result>,
  options: UnaryOptions,
): Promise<Result | null> {
  const { model } = options;
  const plan = new RoutePlan(dependencies.routing, routes, model, attempts?.request.promptTokensEstimate ?? 0, options.modelLimits ?? true);
  return tryPool(dependencies, sink, plan, model, (candidate, signal) => attemptOne(dependencies, sink, attempts, plan, candidate, exchange, signal));
}

async function attemptOne<Result>(
  dependencies: RelayDependencies,
  sink: ResponseSink,
  attempts: AttemptLog | null,
  plan: RoutePlan,
  candidate: Candidate,
  exchange: UnaryExchange<Result>,
  signal: CallerSignal,
): Promise<PoolOutcome<Result>> {
  const opened = await openAttempt(dependencies, sink, attempts, plan, candidate, (adapter, route, credential) => exchange.request(adapter, route, credential), { stream: false, signal });
  if (opened.kind === 'aborted') throw callerLeft();
  if (opened.kind !== 'response') return opened;
  const { adapter, route, attempt, response } = opened;
  let result: Result;
  try {
    result = exchange.parse(adapter, route, await readWholeBody(response.body));
  } catch (error) {
    if (signal.aborted) {
      attempt.aborted();
      throw callerLeft();
    }
    const failureClass = failureClassOf(error, true);
    attempt.failedBeforeAnswer(failureClass, null);
    return { kind: 'failed', failure: { failureClass, retryAfterMs: null } };
  }
  attempt.chargeTokens();
  attempt.succeeded();
  return { kind: 'done', value: result };
}
