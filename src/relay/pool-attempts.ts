import type { ChannelRoute } from '../routing/catalog.js';
import type { Candidate, RoutePlan } from '../routing/route-plan.js';
import type { UpstreamAdapter, UpstreamRequest, UpstreamResponse } from '../upstreams/upstream-adapter.js';
import type { RelayDependencies } from './relay-dependencies.js';
import type { ResponseSink } from './response-sink.js';
import type { AttemptLog } from './attempt-log.js';
import { exhaustedError, outcomeOfSent, sendUpstream, timeoutsOf, type FailedAttempt, type UpstreamOutcome } from './upstream-call.js';
import { callerErrorFromUpstream } from './upstream-error.js';
import { anotherKey, UpstreamAttempt } from './upstream-attempt.js';
import { CallerGone, type CallerSignal } from './caller-signal.js';

/** How one channel's attempt ended: answered (`value`), failed (the next channel may try), or skipped. */
export type PoolOutcome<T> = { kind: 'done'; value: T } | { kind: 'failed'; failure: FailedAttempt } | { kind: 'skipped' };

/**
 * One request's walk over its plan's candidates, for the attempt loops (`tryPool`, and the chat relay's own, which
 * waits for the upstream in the same frame): the signal the caller leaving aborts, the failures so far, and which
 * candidate comes after an attempt that was not done.
 */
export class PoolRun {
  /** Aborted when the caller leaves. */
  readonly signal = new CallerGone();
  /** To call when the walk ended (answered, exhausted or thrown): the caller's leaving is no longer listened for. */
  readonly close: () => void;
  readonly #failures: FailedAttempt[] = [];

  constructor(
    private readonly dependencies: RelayDependencies,
    sink: ResponseSink,
    private readonly plan: RoutePlan,
    private readonly model: string,
  ) {
    this.close = sink.onCallerGone(() => this.signal.abort(new Error('client disconnected')));
  }

  /** After an attempt that failed or was skipped: a rejected upstream key tries the channel's next key first, anything else the next candidate. */
  next(candidate: Candidate, outcome: PoolOutcome<unknown>): Candidate | null | Promise<Candidate | null> {
    if (outcome.kind === 'failed') this.#failures.push(outcome.failure);
    const rejectedKey = outcome.kind === 'failed' && outcome.failure.failureClass === 'credential';
    return (rejectedKey ? anotherKey(this.dependencies, this.plan, candidate) : null) ?? this.plan.next();
  }

  /**
   * No candidate answered: null when none could take the request at all (every one skipped) and `noneTried` is
   * `'null'`; otherwise the plan's exhausted error, thrown (the spec's upstream error when all failed).
   */
  exhausted(noneTried: 'throw'): never;
  exhausted(noneTried: 'null' | 'throw'): null;
  exhausted(noneTried: 'null' | 'throw'): null {
    if (this.#failures.length === 0 && this.plan.exhaustion.kind === 'pool' && noneTried === 'null') return null;
    throw exhaustedError(this.plan, this.#failures, this.model);
  }
}

/**
 * Runs `attempt` on the plan's candidates in routing order until one is done (see `PoolRun`). Null when no channel
 * could take the request at all (every one skipped), or with `noneTried: 'throw'` the plan's exhausted error for that
 * too; the spec's upstream error when all failed.
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
  const pool = new PoolRun(dependencies, sink, plan, model);
  try {
    let candidate = plan.next();
    if (candidate instanceof Promise) candidate = await candidate;
    while (candidate !== null) {
      let outcome: PoolOutcome<T>;
      try {
        outcome = await attempt(candidate, pool.signal);
      } finally {
        candidate.ticket.release();
      }
      if (outcome.kind === 'done') return outcome.value;
      candidate = pool.next(candidate, outcome);
      if (candidate instanceof Promise) candidate = await candidate;
    }
  } finally {
    pool.close();
  }
  return pool.exhausted(noneTried);
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

/** An attempt whose request went out: the promise of its response head, and what sorting that needs. */
export interface StartedAttempt {
  kind: 'started';
  adapter: UpstreamAdapter;
  route: ChannelRoute;
  attempt: UpstreamAttempt;
  /** The transport's promise of the head (see `sendUpstream`). */
  sent: Promise<UpstreamResponse>;
  signal: CallerSignal;
  /** When it was sent (an HTTP-date Retry-After is read against it). */
  now: number;
}

/**
 * The start of an attempt on one channel, in the caller's turn: build the request (or skip the channel) and send it
 * with the channel's timeouts. The caller waits for `sent` and sorts its outcome with `openedOf`.
 */
export function startAttempt(
  dependencies: RelayDependencies,
  sink: ResponseSink,
  attempts: AttemptLog | null,
  plan: RoutePlan,
  candidate: Candidate,
  build: BuildRequest,
  options: { stream: boolean; signal: CallerSignal },
): StartedAttempt | { kind: 'skipped' } {
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
  const now = dependencies.routing.clock.now();
  return { kind: 'started', adapter, route, attempt, sent: sendUpstream(adapter, route, request, { signal: options.signal, timeouts, traceHeaders }), signal: options.signal, now };
}

/**
 * Settles what a started attempt's upstream call came to when it needs no reading: the caller left (`aborted`), a
 * retryable failure (`failed`), or a refusal that is the caller's own (thrown as the caller's error).
 */
export function openedOf(started: StartedAttempt, outcome: UpstreamOutcome): OpenedAttempt | { kind: 'aborted' } | PoolOutcome<never> {
  const { attempt } = started;
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
      return { kind: 'response', adapter: started.adapter, route: started.route, attempt, response: outcome.response };
    default: {
      const unknown: never = outcome;
      throw new Error(`unhandled outcome ${String(unknown)}`);
    }
  }
}

/** `startAttempt`, the wait for the head, and `openedOf`, for relays that read the answer in a function of their own. */
export async function openAttempt(...start: Parameters<typeof startAttempt>): Promise<OpenedAttempt | { kind: 'aborted' } | PoolOutcome<never>> {
  const started = startAttempt(...start);
  if (started.kind === 'skipped') return started;
  return openedOf(started, await outcomeOfSent(started.sent, started.adapter, started.signal, started.now));
}
