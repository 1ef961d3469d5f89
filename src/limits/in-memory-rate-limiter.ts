import { decide, windowStart } from './fixed-window.js';
import type { AdmissionAsk, AdmissionDecision, ConcurrencyLease, ConcurrencySlot, LimitDecision, LimitRule, RateLimiter } from './rate-limiter.js';

interface Window {
  startMs: number;
  endMs: number;
  used: number;
}

/** Fixed windows aligned to the epoch, in this process only. Expired windows are swept as the map grows. */
export class InMemoryRateLimiter implements RateLimiter {
  readonly #windows = new Map<string, Window>();
  /** Holders of each concurrency dimension's slots: one token per admitted request. */
  readonly #slots = new Map<string, Set<object>>();
  #nextSweepSize = 10_000;

  async consume(requests: ReadonlyArray<{ rule: LimitRule; cost: number }>, now: number): Promise<LimitDecision> {
    return this.consumeNow(requests, now);
  }

  /** `consume` without the promise, for callers in this process (the Redis backend's fallback). */
  consumeNow(requests: ReadonlyArray<{ rule: LimitRule; cost: number }>, now: number): LimitDecision {
    const windows = requests.map(({ rule }) => this.#window(rule, now));
    const decision = decide(requests, windows.map((window) => window.used), now);
    if (decision.allowed) {
      for (let index = 0; index < windows.length; index += 1) (windows[index] as Window).used += (requests[index] as { cost: number }).cost;
    }
    return decision;
  }

  async adjust(rule: LimitRule, delta: number, chargedAt: number): Promise<void> {
    this.adjustNow(rule, delta, chargedAt);
  }

  /** `adjust` without the promise (settlement's corrections, the Redis backend's fallback). */
  adjustNow(rule: LimitRule, delta: number, chargedAt: number): void {
    const window = this.#windows.get(rule.id);
    if (window !== undefined && window.startMs === windowStart(rule, chargedAt)) window.used = Math.max(0, window.used + delta);
  }

  async admit(ask: AdmissionAsk, now: number): Promise<AdmissionDecision> {
    return this.admitNow(ask, now);
  }

  /** `admit` without the promise, for callers in this process (admission's same-turn path, the Redis backend's fallback). */
  admitNow(ask: AdmissionAsk, now: number): AdmissionDecision {
    for (const slot of ask.slots) if (this.inUse(slot.id) >= slot.limit) return { allowed: false, slot };
    const decision = this.consumeNow(ask.charges, now);
    if (!decision.allowed) return { ...decision, slot: null };
    return { allowed: true, states: decision.states, lease: ask.slots.length === 0 ? null : this.#take(ask.slots) };
  }

  #take(slots: readonly ConcurrencySlot[]): ConcurrencyLease {
    const token = {};
    const taken = slots.map(({ id }) => {
      let holders = this.#slots.get(id);
      if (holders === undefined) this.#slots.set(id, (holders = new Set()));
      holders.add(token);
      return { id, holders };
    });
    const all = this.#slots;
    return {
      release() {
        // Only this lease's own slots, only once: a second release (or one after `close`) frees nothing else.
        for (const { id, holders } of taken) {
          if (!holders.delete(token)) continue;
          if (holders.size === 0 && all.get(id) === holders) all.delete(id);
        }
      },
    };
  }

  /** Slots of `id` in use now (for tests and diagnostics). */
  inUse(id: string): number {
    return this.#slots.get(id)?.size ?? 0;
  }

  async close(): Promise<void> {
    this.#windows.clear();
    this.#slots.clear();
  }

  #window(rule: LimitRule, now: number): Window {
    const startMs = windowStart(rule, now);
    let window = this.#windows.get(rule.id);
    if (window === undefined || window.startMs !== startMs) {
      window = { startMs, endMs: startMs + rule.windowMs, used: 0 };
      this.#windows.set(rule.id, window);
      if (this.#windows.size > this.#nextSweepSize) this.#sweep(now);
    }
    return window;
  }

  #sweep(now: number): void {
    for (const [id, window] of this.#windows) if (window.endMs <= now) this.#windows.delete(id);
    this.#nextSweepSize = Math.max(10_000, this.#windows.size * 2);
  }
}
