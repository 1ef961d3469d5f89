import type { RateLimiter } from '../limits/rate-limiter.js';
import type { Clock } from '../shared/clock.js';
import type { UpstreamTimeouts } from '../upstreams/upstream-adapter.js';
import type { ChannelRoute } from './catalog.js';
import type { AttemptTicket, ChannelHealth } from './channel-health.js';
import { channelModelLimit, consumeChannelModelLimit, type ChannelModelLimit, type ChannelTokenCharge } from './channel-model-limits.js';
import type { BalancingStrategy } from './balancing-strategy.js';
import { orderCandidates } from './order-candidates.js';

/** What routing needs from the composition root; built once (see `routingDependencies`). */
export interface RoutingDependencies {
  health: ChannelHealth;
  limiter: RateLimiter;
  clock: Clock;
  /** Channels tried per request at most. */
  maxAttempts: number;
  /** After this long since the request arrived no further attempt starts, and a retry waits no longer than what is left. */
  retryBudgetMs: number;
  /** The balancing strategy of a public model id; absent: every model is balanced by weight. */
  strategyOf?: (model: string) => BalancingStrategy;
  random?: () => number;
}

/** One channel to try now, admitted by its breakers (and its per-model limit, if it has one). */
export interface Candidate {
  route: ChannelRoute;
  ticket: AttemptTicket;
  /** 1 for the first attempt of the request. */
  attempt: number;
  /** TPM taken from the channel-model's limit, to correct with the real token count. */
  tokenCharge: ChannelTokenCharge | null;
}

/** Why `next` found nothing more to try. */
export type Exhaustion =
  | { kind: 'pool' }
  | { kind: 'attempts' }
  | { kind: 'budget' }
  /** Every candidate not tried was over its per-model limit. */
  | { kind: 'limited'; retryAfterMs: number };

/**
 * The channels one request tries, lazily: routing order (caller preference, priority, then the model's balancing
 * strategy and weighted random), skipping channels and channel-models whose breaker is open and channel-models
 * over their own RPM/TPM. When every candidate is open
 * and nothing was tried yet, the one that failed least recently is tried anyway: an open breaker is a guess,
 * and a caller should not be refused without one real attempt. Attempts and total time are bounded.
 */
export class RoutePlan {
  readonly #ordered: ChannelRoute[];
  readonly #startedAt: number;
  readonly #skippedOpen: ChannelRoute[] = [];
  #cursor = 0;
  #attempts = 0;
  #forced = false;
  #limitedRetryAfterMs: number | null = null;
  #exhaustion: Exhaustion = { kind: 'pool' };

  constructor(
    private readonly dependencies: RoutingDependencies,
    routes: readonly ChannelRoute[],
    private readonly model: string,
    private readonly estimatedTokens: number,
    private readonly applyModelLimits = true,
    /** The model's balancing strategy when the caller has the model at hand (else looked up by id). */
    modelStrategy?: BalancingStrategy,
  ) {
    const strategy = dependencies.strategyOf === undefined ? undefined : (modelStrategy ?? dependencies.strategyOf(model));
    this.#ordered = orderCandidates(routes, dependencies.random, strategy === undefined ? undefined : { strategy, model, load: dependencies.health.load });
    this.#startedAt = dependencies.clock.now();
  }

  get attempts(): number {
    return this.#attempts;
  }

  /** Why the last `next()` returned null. */
  get exhaustion(): Exhaustion {
    return this.#exhaustion;
  }

  /**
   * The next channel to try, or null when the pool, the attempts or the time budget is spent. A promise only when a
   * channel-model limit has to be consumed from the limiter; otherwise the answer at once.
   */
  next(): Candidate | null | Promise<Candidate | null> {
    if (this.#attempts >= this.dependencies.maxAttempts) return this.#stop({ kind: 'attempts' });
    if (this.#attempts > 0 && this.#remainingMs() <= 0) return this.#stop({ kind: 'budget' });
    return this.#scan();
  }

  /**
   * The same channel once more (its upstream rejected one key and it has another): a new attempt, within the
   * same bounds; null when the attempts or the budget are spent or the channel's breakers now refuse.
   */
  again(candidate: Candidate): Candidate | null {
    if (this.#attempts >= this.dependencies.maxAttempts || this.#remainingMs() <= 0) return null;
    const ticket = this.dependencies.health.acquire(candidate.route.channel, this.model);
    if (ticket === null) return null;
    this.#attempts += 1;
    return { route: candidate.route, ticket, attempt: this.#attempts, tokenCharge: null };
  }

  /** A candidate the relay could not use after all (no request for this operation): not an attempt. */
  skip(candidate: Candidate): void {
    candidate.ticket.release();
    this.#attempts -= 1;
    const charge = candidate.tokenCharge;
    if (charge !== null) this.dependencies.limiter.adjust(charge.rule, -charge.estimate, charge.chargedAt).catch(() => undefined);
  }

  /** A retry waits for its first byte no longer than the budget has left; the first attempt keeps the channel's own. */
  timeouts(candidate: Candidate, timeouts: UpstreamTimeouts): UpstreamTimeouts {
    if (candidate.attempt === 1) return timeouts;
    return { ...timeouts, firstByteMs: Math.max(1, Math.min(timeouts.firstByteMs, this.#remainingMs())) };
  }

  /**
   * The first route from the cursor on that its breakers admit (else, once and before any attempt, the one of those
   * with open breakers that failed least recently), taken when its channel-model limit, if it has one, admits too:
   * one over its limit is passed over for the next. Null when none is left.
   */
  #scan(): Candidate | null | Promise<Candidate | null> {
    const { health } = this.dependencies;
    let route: ChannelRoute | null = null;
    let ticket: AttemptTicket | null = null;
    while (ticket === null && this.#cursor < this.#ordered.length) {
      route = this.#ordered[this.#cursor++] as ChannelRoute;
      ticket = health.acquire(route.channel, this.model);
      if (ticket === null) this.#skippedOpen.push(route);
    }
    if (ticket === null && this.#attempts === 0 && !this.#forced && this.#skippedOpen.length > 0) {
      this.#forced = true;
      route = this.#leastRecentlyFailed();
      ticket = health.force(route.channel, this.model);
    }
    if (ticket === null || route === null) {
      return this.#stop(this.#limitedRetryAfterMs !== null && this.#attempts === 0 ? { kind: 'limited', retryAfterMs: this.#limitedRetryAfterMs } : { kind: 'pool' });
    }
    const limit = this.applyModelLimits ? channelModelLimit(route.channel, this.model) : null;
    if (limit !== null) return this.#admitLimited(route, ticket, limit).then((candidate) => candidate ?? this.#scan());
    this.#attempts += 1;
    return { route, ticket, attempt: this.#attempts, tokenCharge: null };
  }

  /** Consumes the channel-model's own limit; null (the ticket released) when the route is over it. */
  async #admitLimited(route: ChannelRoute, ticket: AttemptTicket, limit: ChannelModelLimit): Promise<Candidate | null> {
    let decision;
    try {
      decision = await consumeChannelModelLimit(this.dependencies.limiter, route.channel, this.model, limit, this.estimatedTokens, this.dependencies.clock.now());
    } catch (error) {
      ticket.release();
      throw error;
    }
    if (!decision.allowed) {
      ticket.release();
      this.#limitedRetryAfterMs = Math.min(this.#limitedRetryAfterMs ?? Number.POSITIVE_INFINITY, decision.retryAfterMs);
      return null;
    }
    this.#attempts += 1;
    return { route, ticket, attempt: this.#attempts, tokenCharge: decision.tokenCharge };
  }

  #leastRecentlyFailed(): ChannelRoute {
    const { health } = this.dependencies;
    let best = this.#skippedOpen[0] as ChannelRoute;
    let bestFailedAt = health.lastFailureAt(best.channel, this.model);
    for (const route of this.#skippedOpen) {
      const failedAt = health.lastFailureAt(route.channel, this.model);
      if (failedAt < bestFailedAt) {
        best = route;
        bestFailedAt = failedAt;
      }
    }
    return best;
  }

  #remainingMs(): number {
    return this.dependencies.retryBudgetMs - (this.dependencies.clock.now() - this.#startedAt);
  }

  #stop(exhaustion: Exhaustion): null {
    this.#exhaustion = exhaustion;
    return null;
  }
}
