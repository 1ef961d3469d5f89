import type { ChannelRoute } from '../routing/catalog.js';
import type { Candidate, RoutePlan } from '../routing/route-plan.js';
import type { UpstreamAdapter, UpstreamRequest, UpstreamResponse } from '../upstreams/upstream-adapter.js';
import type { RelayDependencies } from './relay-dependencies.js';
import type { ResponseSink } from './response-sink.js';
import type { AttemptLog } from './attempt-log.js';
import { callUpstream, exhaustedError, timeoutsOf, type FailedAttempt } from './upstream-call.js';
import { callerErrorFromUpstream } from './upstream-error.js';
import { anotherKey, UpstreamAttempt } from './upstream-attempt.js';
import { CallerGone, type CallerSignal } from './caller-signal.js';

/** How one channel's attempt ended: answered (`value`), failed (the next channel may try), or skipped. */
export type PoolOutcome<T> = { kind: 'done'; value: T } | { kind: 'failed'; failure: FailedAttempt } | { kind: 'skipped' };

/**
 * Runs `attempt` on the plan's candidates in routing order until one is done: a rejected upstream key tries the
 * channel's next key first, every other failure the next candidate. The caller leaving aborts the signal. Null when
 * no channel could take the request at all (every one skipped), or with `noneTried: 'throw'` the plan's exhausted
 * error for that too; the spec's upstream error when all failed.
 */
export async function tryPool<T>(dependencies: RelayDependencies, sink: ResponseSink, plan: RoutePlan, model: string, attempt: PoolAttempt<T>): Promise<T | null>;
export async function tryPool<T>(dependencies: RelayDependencies, sink: ResponseSink, plan: RoutePlan, model: string, attempt: PoolAttempt<T>, noneTried: 'throw'): Promise<T>;
export async function tryPool<T>(
  dependencies: RelayDependencies,
  sink: ResponseSink,
  plan: RoutePlan,
  model: string,
  attempt: PoolAttempt<T>,
  noneTried: 'null' | 'throw' = 'null',
): Promise<T | null> {
  const abort = new CallerGone();
  const stopListening = sink.onCallerGone(() => abort.abort(new Error('client disconnected')));
  const failures: FailedAttempt[] = [];
  try {
    let candidate = plan.next();
    if (candidate instanceof Promise) candidate = await candidate;
    while (candidate !== null) {
      let outcome: PoolOutcome<T>;
      try {
        outcome = await attempt(candidate, abort);
      } finally {
        candidate.ticket.release();
      }
      if (outcome.kind === 'done') return outcome.value;
      if (outcome.kind === 'failed') failures.push(outcome.failure);
      const rejectedKey = outcome.kind === 'failed' && outcome.failure.failureClass === 'credential';
      candidate = (rejectedKey ? anotherKey(dependencies, plan, candidate) : null) ?? plan.next();
      if (candidate instanceof Promise) candidate = await candidate;
    }
  } finally {
    stopListening();
  }
  if (failures.length === 0 && plan.exhaustion.kind === 'pool' && noneTried === 'null') return null;
  throw exhaustedError(plan, failures, model);
}

/** One channel's attempt of a request, on the caller's signal. */
export type PoolAttempt<T> = (candidate: Candidate, signal: CallerSignal) => Promise<PoolOutcome<T>>;

/** Builds one channel's request; null skips the channel. */
export type BuildRequest = (adapter: UpstreamAdapter, route: ChannelRoute, credential: string) => UpstreamRequest | null;

/** A channel's upstream answered 2xx: the response to read, with the attempt to report its end to. */
export interface OpenedAttempt {
  kind: 'response';
  adapter: UpstreamAdapter;
  route: ChannelRoute;
  attempt: UpstreamAttempt;
  response: UpstreamResponse;
}

/**
 * The common start of an attempt on one channel: build the request (or skip the channel), call the upstream with
 * the channel's timeouts, and settle what needs no reading: the caller left (`aborted`), a retryable failure
 * (`failed`), or a refusal that is the caller's own (thrown as the caller's error).
 */
export async function openAttempt(
  dependencies: RelayDependencies,
  sink: ResponseSink,
  attempts: AttemptLog | null,
  plan: RoutePlan,
  candidate: Candidate,
  build: BuildRequest,
  options: { stream: boolean; signal: CallerSignal },
): Promise<OpenedAttempt | { kind: 'aborted' } | PoolOutcome<never>> {
  const { route } = candidate;
  const adapter = dependencies.adapters.get(route.channel.type) as UpstreamAdapter;
  const credential = dependencies.credentials.next(route.channel);
  const request = build(adapter, route, credential);
  if (request === null) {
    plan.skip(candidate);
    return { kind: 'skipped' };
  }
  const attempt = new UpstreamAttempt(dependencies, candidate, credential, sink.requestId, attempts);
  const timeouts = plan.timeouts(candidate, timeoutsOf(route, options.stream));
  const traceHeaders = attempt.sending(request.url);
  const outcome = await callUpstream(adapter, route, request, { signal: options.signal, timeouts, now: dependencies.routing.clock.now(), traceHeaders });
  switch (outcome.kind) {
    case 'aborted':
      attempt.aborted();
      return { kind: 'aborted' };
    case 'refused':
      attempt.upstreamStatus(outcome.status);
      attempt.refused();
      throw callerErrorFromUpstream(outcome.status, outcome.body);
    case 'retry':
      attempt.upstreamStatus(outcome.status);
      attempt.failedBeforeAnswer(outcome.failureClass, outcome.retryAfterMs);
      return { kind: 'failed', failure: { failureClass: outcome.failureClass, retryAfterMs: outcome.retryAfterMs } };
    case 'response':
      attempt.upstreamStatus(outcome.response.status);
      return { kind: 'response', adapter, route, attempt, response: outcome.response };
    default: {
      const unknown: never = outcome;
      throw new Error(`unhandled outcome ${String(unknown)}`);
    }
  }
}
