import type { RateLimiter } from '../limits/rate-limiter.js';
import type { Clock } from '../shared/clock.js';
import type { UpstreamTimeouts } from '../upstreams/upstream-adapter.js';
import type { ChannelRoute } from './catalog.js';
import type { AttemptTicket, ChannelHealth } from './channel-health.js';
import { channelModelLimit, consumeChannelModelLimit, type ChannelTokenCharge } from './channel-model-limits.js';
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
  ) {
    const strategy = dependencies.strategyOf?.(model);
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

  /** The next channel to try, or null when the pool, the attempts or the time budget is spent. */
  async next(): Promise<Candidate | null> {
    if (this.#attempts >= this.dependencies.maxAttempts) return this.#stop({ kind: 'attempts' });
    if (this.#attempts > 0 && this.#remainingMs() <= 0) return this.#stop({ kind: 'budget' });
    const { health } = this.dependencies;
    while (this.#cursor < this.#ordered.length) {
      const route = this.#ordered[this.#cursor++] as ChannelRoute;
      const ticket = health.acquire(route.channel, this.model);
      if (ticket === null) {
        this.#skippedOpen.push(route);
        continue;
      }
      const candidate = await this.#admit(route, ticket);
      if (candidate !== null) return candidate;
    }
    if (this.#attempts === 0 && !this.#forced && this.#skippedOpen.length > 0) {
      this.#forced = true;
      const route = this.#leastRecentlyFailed();
      const candidate = await this.#admit(route, health.force(route.channel, this.model));
      if (candidate !== null) return candidate;
    }
    return this.#stop(this.#limitedRetryAfterMs !== null && this.#attempts === 0 ? { kind: 'limited', retryAfterMs: this.#limitedRetryAfterMs } : { kind: 'pool' });
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

  async #admit(route: ChannelRoute, ticket: AttemptTicket): Promise<Candidate | null> {
    const limit = this.applyModelLimits ? channelModelLimit(route.channel, this.model) : null;
    let tokenCharge: ChannelTokenCharge | null = null;
    if (limit !== null) {
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
      tokenCharge = decision.tokenCharge;
    }
    this.#attempts += 1;
    return { route, ticket, attempt: this.#attempts, tokenCharge };
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
