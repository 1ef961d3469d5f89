import type { UpstreamFailureClass } from './failure-class.js';

export type BreakerState = 'closed' | 'open' | 'half-open';

/** How a breaker decides; every field is a configuration knob (docs/operators.md, "Routing and failover"). */
export interface BreakerPolicy {
  /** Opens after this many failures in a row. */
  failureThreshold: number;
  /** …or when at least this share (percent) of the outcomes in the window failed… */
  failureRatePercent: number;
  /** …and the window holds at least this many outcomes. */
  minimumRequests: number;
  /** Length of the rolling window of recent outcomes. */
  windowMs: number;
  /** First cooldown; it doubles each time a probe fails, up to `maxCooldownMs`. */
  cooldownMs: number;
  maxCooldownMs: number;
}

/** Why a breaker is open: failures, or the upstream's own Retry-After on a 429. */
export type OpenReason = 'failures' | 'retry-after';

/** What a request may do at a breaker: go through normally, go through as the half-open probe, or not at all. */
export type Admission = 'pass' | 'probe' | null;

const BUCKETS = 12;

/** Successes and failures in a rolling window of 12 buckets; recording and reading touch only the arrays. */
class RollingCounts {
  readonly #bucketMs: number;
  readonly #index = new Array<number>(BUCKETS).fill(-1);
  readonly #successes = new Array<number>(BUCKETS).fill(0);
  readonly #failures = new Array<number>(BUCKETS).fill(0);

  constructor(windowMs: number) {
    this.#bucketMs = Math.max(1, Math.ceil(windowMs / BUCKETS));
  }

  add(now: number, success: boolean): void {
    const index = Math.floor(now / this.#bucketMs);
    const slot = index % BUCKETS;
    if (this.#index[slot] !== index) {
      this.#index[slot] = index;
      this.#successes[slot] = 0;
      this.#failures[slot] = 0;
    }
    if (success) this.#successes[slot] = (this.#successes[slot] as number) + 1;
    else this.#failures[slot] = (this.#failures[slot] as number) + 1;
  }

  totals(now: number): { successes: number; failures: number } {
    const oldest = Math.floor(now / this.#bucketMs) - BUCKETS + 1;
    let successes = 0;
    let failures = 0;
    for (let slot = 0; slot < BUCKETS; slot += 1) {
      if ((this.#index[slot] as number) < oldest) continue;
      successes += this.#successes[slot] as number;
      failures += this.#failures[slot] as number;
    }
    return { successes, failures };
  }

  clear(): void {
    this.#index.fill(-1);
  }
}

/** A breaker's state as shown to the admin and shared between instances. */
export interface BreakerSnapshot {
  state: BreakerState;
  /** Epoch ms until which an open breaker refuses requests (0 when closed). */
  openUntil: number;
  openReason: OpenReason | null;
  /** Failed probes in a row (the cooldown is `cooldownMs · 2^level`). */
  level: number;
  consecutiveFailures: number;
  recent: { successes: number; failures: number };
  lastFailureClass: UpstreamFailureClass | null;
  lastFailureAt: number | null;
  lastSuccessAt: number | null;
}

/**
 * One circuit breaker. closed → open after `failureThreshold` failures in a row, or a failure rate of at least
 * `failureRatePercent` over `minimumRequests` or more outcomes in the window; open → half-open once the cooldown
 * has passed (the next request takes the single probe slot); half-open → closed when the probe succeeds, → open
 * with a doubled cooldown when it fails. A 429 with Retry-After opens it for exactly that long (`openFor`).
 * Time comes in as `now` (epoch ms) so the state machine is pure and testable with a manual clock.
 */
export class CircuitBreaker {
  #state: BreakerState = 'closed';
  #openUntil = 0;
  #openReason: OpenReason | null = null;
  #level = 0;
  #consecutiveFailures = 0;
  #probeInFlight = false;
  #lastFailureClass: UpstreamFailureClass | null = null;
  #lastFailureAt: number | null = null;
  #lastSuccessAt: number | null = null;
  /** Recent outcomes, for the admin. */
  readonly #recent: RollingCounts;
  /** Outcomes since the breaker last closed, for the failure-rate rule. */
  readonly #sinceClosed: RollingCounts;

  constructor(private readonly policy: BreakerPolicy) {
    this.#recent = new RollingCounts(policy.windowMs);
    this.#sinceClosed = new RollingCounts(policy.windowMs);
  }

  get state(): BreakerState {
    return this.#state;
  }

  get openUntil(): number {
    return this.#openUntil;
  }

  get lastFailureAt(): number | null {
    return this.#lastFailureAt;
  }

  get consecutiveFailures(): number {
    return this.#consecutiveFailures;
  }

  /** Would a request be admitted now (without taking the probe slot)? */
  isAvailable(now: number): boolean {
    if (this.#state === 'closed') return true;
    if (this.#state === 'open') return now >= this.#openUntil;
    return !this.#probeInFlight;
  }

  /** Admits a request: 'pass' when closed, 'probe' for the one request let through after the cooldown, else null. */
  admit(now: number): Admission {
    if (this.#state === 'closed') return 'pass';
    if (this.#state === 'open') {
      if (now < this.#openUntil) return null;
      this.#state = 'half-open';
    }
    if (this.#probeInFlight) return null;
    this.#probeInFlight = true;
    return 'probe';
  }

  /** A probe that ended without a verdict (the caller left, or the caller's request was wrong) frees its slot. */
  releaseProbe(): void {
    this.#probeInFlight = false;
  }

  /**
   * A successful answer. It closes the breaker when it was the probe or a forced attempt (`decisive`); a success
   * of a request admitted before the breaker opened only counts. `counted: false` resets the run of failures
   * without adding to the statistics (the channel was reachable, but the answer is the channel-model's to count).
   */
  recordSuccess(now: number, decisive: boolean, counted = true): void {
    if (counted) {
      this.#recent.add(now, true);
      this.#sinceClosed.add(now, true);
      this.#lastSuccessAt = now;
    }
    this.#consecutiveFailures = 0;
    if (decisive) this.#probeInFlight = false;
    if (this.#state !== 'closed' && decisive) this.#close();
  }

  /**
   * A failed answer. With the upstream's Retry-After the breaker opens for exactly that long; otherwise a failed
   * probe re-opens it with a doubled cooldown, and in the closed state the thresholds apply.
   */
  recordFailure(now: number, failureClass: UpstreamFailureClass, probe: boolean, retryAfterMs: number | null = null): void {
    this.#recent.add(now, false);
    this.#sinceClosed.add(now, false);
    this.#lastFailureClass = failureClass;
    this.#lastFailureAt = now;
    this.#consecutiveFailures += 1;
    if (retryAfterMs !== null) {
      if (probe) this.#probeInFlight = false;
      this.openFor(now, retryAfterMs);
      return;
    }
    if (probe) {
      this.#probeInFlight = false;
      if (this.#state === 'half-open') {
        this.#level += 1;
        this.#open(now, this.#cooldown(), 'failures');
      }
      return;
    }
    if (this.#state !== 'closed') return;
    if (this.#consecutiveFailures >= this.policy.failureThreshold || this.#rateExceeded(now)) this.#open(now, this.#cooldown(), 'failures');
  }

  /** The upstream asked for a pause (429 Retry-After): open for that long, whatever the counts say. */
  openFor(now: number, ms: number): void {
    const until = now + ms;
    if (this.#state === 'open' && this.#openUntil >= until) return;
    this.#open(now, ms, 'retry-after');
  }

  /** Takes a state decided elsewhere (another instance, through Redis). Counts stay local. */
  adopt(state: 'open' | 'closed', openUntil: number, level: number, reason: OpenReason | null): void {
    if (state === 'closed') {
      if (this.#state !== 'closed') this.#close();
      return;
    }
    this.#state = 'open';
    this.#openUntil = openUntil;
    this.#openReason = reason;
    this.#level = level;
  }

  snapshot(now: number): BreakerSnapshot {
    return {
      state: this.#state === 'open' && now >= this.#openUntil ? 'half-open' : this.#state,
      openUntil: this.#state === 'closed' ? 0 : this.#openUntil,
      openReason: this.#state === 'closed' ? null : this.#openReason,
      level: this.#level,
      consecutiveFailures: this.#consecutiveFailures,
      recent: this.#recent.totals(now),
      lastFailureClass: this.#lastFailureClass,
      lastFailureAt: this.#lastFailureAt,
      lastSuccessAt: this.#lastSuccessAt,
    };
  }

  #cooldown(): number {
    return Math.min(this.policy.maxCooldownMs, this.policy.cooldownMs * 2 ** Math.min(this.#level, 30));
  }

  #rateExceeded(now: number): boolean {
    const { successes, failures } = this.#sinceClosed.totals(now);
    const total = successes + failures;
    return total >= this.policy.minimumRequests && failures * 100 >= this.policy.failureRatePercent * total;
  }

  #open(now: number, ms: number, reason: OpenReason): void {
    this.#state = 'open';
    this.#openUntil = now + ms;
    this.#openReason = reason;
  }

  #close(): void {
    this.#state = 'closed';
    this.#openUntil = 0;
    this.#openReason = null;
    this.#level = 0;
    this.#consecutiveFailures = 0;
    this.#probeInFlight = false;
    // The failures that opened it are history now; the rate rule starts from a clean window.
    this.#sinceClosed.clear();
  }
}
