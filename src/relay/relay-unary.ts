import { GatewayError } from '../errors/gateway-error.js';
import type { RequestContext } from '../http/request-context.js';
import type { ChannelRoute } from '../routing/catalog.js';
import { RoutePlan, type Candidate } from '../routing/route-plan.js';
import type { UpstreamAdapter, UpstreamRequest } from '../upstreams/upstream-adapter.js';
import type { RelayDependencies } from './relay-dependencies.js';
import type { RequestMeter } from './request-meter.js';
import { callUpstream, exhaustedError, failureClassOf, timeoutsOf, type FailedAttempt } from './upstream-call.js';
import { callerErrorFromUpstream } from './upstream-error.js';
import { anotherKey, UpstreamAttempt } from './upstream-attempt.js';

/**
 * One exchange of a non-streaming JSON operation (embeddings, token counts) against one channel: the request
 * to send, and what to make of a 2xx body. Returning null from `request` skips the channel.
 */
export interface UnaryExchange<Result> {
  request(adapter: UpstreamAdapter, route: ChannelRoute, credential: string): UpstreamRequest | null;
  parse(adapter: UpstreamAdapter, route: ChannelRoute, body: Buffer): Result;
}

export interface UnaryOptions {
  /** The public model id (default: the meter's). */
  model?: string;
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
  context: RequestContext,
  meter: RequestMeter | null,
  routes: readonly ChannelRoute[],
  exchange: UnaryExchange<Result>,
  options: UnaryOptions = {},
): Promise<Result | null> {
  const model = options.model ?? meter?.model?.id ?? meter?.modelId ?? '';
  const abort = new AbortController();
  const onClose = (): void => {
    if (!context.response.writableFinished) abort.abort(new Error('client disconnected'));
  };
  context.response.once('close', onClose);
  const plan = new RoutePlan(dependencies.routing, routes, model, meter?.promptTokensEstimate ?? 0, options.modelLimits ?? true);
  const failures: FailedAttempt[] = [];
  try {
    let candidate = await plan.next();
    while (candidate !== null) {
      let outcome: UnaryOutcome<Result>;
      try {
        outcome = await attemptOne(dependencies, context, meter, plan, candidate, exchange, abort.signal);
      } finally {
        candidate.ticket.release();
      }
      if (outcome.kind === 'answered') return outcome.result;
      if (outcome.kind === 'failed') failures.push(outcome.failure);
      const rejectedKey = outcome.kind === 'failed' && outcome.failure.failureClass === 'credential';
      candidate = (rejectedKey ? anotherKey(dependencies, plan, candidate) : null) ?? (await plan.next());
    }
  } finally {
    context.response.off('close', onClose);
  }
  if (failures.length === 0 && plan.exhaustion.kind === 'pool') return null;
  throw exhaustedError(plan, failures, model);
}

type UnaryOutcome<Result> = { kind: 'answered'; result: Result } | { kind: 'failed'; failure: FailedAttempt } | { kind: 'skipped' };

async function attemptOne<Result>(
  dependencies: RelayDependencies,
  context: RequestContext,
  meter: RequestMeter | null,
  plan: RoutePlan,
  candidate: Candidate,
  exchange: UnaryExchange<Result>,
  signal: AbortSignal,
): Promise<UnaryOutcome<Result>> {
  const { route } = candidate;
  const adapter = dependencies.adapters.get(route.channel.type) as UpstreamAdapter;
  const credential = dependencies.credentials.next(route.channel);
  const request = exchange.request(adapter, route, credential);
  if (request === null) {
    plan.skip(candidate);
    return { kind: 'skipped' };
  }
  const attempt = new UpstreamAttempt(dependencies, candidate, credential, context.requestId, meter);
  const timeouts = plan.timeouts(candidate, timeoutsOf(route, false));
  const outcome = await callUpstream(adapter, route, request, { signal, timeouts, now: dependencies.routing.clock.now() });
  switch (outcome.kind) {
    case 'aborted':
      attempt.aborted();
      throw callerLeft();
    case 'refused':
      attempt.refused();
      throw callerErrorFromUpstream(outcome.status, outcome.body);
    case 'retry':
      attempt.failedBeforeAnswer(outcome.failureClass, outcome.retryAfterMs);
      return { kind: 'failed', failure: { failureClass: outcome.failureClass, retryAfterMs: outcome.retryAfterMs } };
    case 'response': {
      const chunks: Buffer[] = [];
      let result: Result;
      try {
        for await (const chunk of outcome.response.body) chunks.push(chunk);
        result = exchange.parse(adapter, route, Buffer.concat(chunks));
      } catch (error) {
        if (signal.aborted) {
          attempt.aborted();
          throw callerLeft();
        }
        const failureClass = failureClassOf(error, true);
        attempt.failedBeforeAnswer(failureClass, null);
        return { kind: 'failed', failure: { failureClass, retryAfterMs: null } };
      }
      attempt.chargeTokensToMeter();
      attempt.succeeded();
      return { kind: 'answered', result };
    }
    default: {
      const unknown: never = outcome;
      throw new Error(`unhandled outcome ${String(unknown)}`);
    }
  }
}
