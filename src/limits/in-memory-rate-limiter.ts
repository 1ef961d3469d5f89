import { decide, windowStart } from './fixed-window.js';
import type { ConcurrencyLease, LimitDecision, LimitRule, RateLimiter } from './rate-limiter.js';

interface Window {
  startMs: number;
  endMs: number;
  used: number;
}

/** Fixed windows aligned to the epoch, in this process only. Expired windows are swept as the map grows. */
export class InMemoryRateLimiter implements RateLimiter {
  readonly #windows = new Map<string, Window>();
  readonly #slots = new Map<string, Set<ConcurrencyLease>>();
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

  adjustNow(rule: LimitRule, delta: number, chargedAt: number): void {
    const window = this.#windows.get(rule.id);
    if (window !== undefined && window.startMs === windowStart(rule, chargedAt)) window.used = Math.max(0, window.used + delta);
  }

  async acquire(id: string, limit: number): Promise<ConcurrencyLease | null> {
    return this.acquireNow(id, limit);
  }

  acquireNow(id: string, limit: number): ConcurrencyLease | null {
    let holders = this.#slots.get(id);
    if (holders !== undefined && holders.size >= limit) return null;
    if (holders === undefined) this.#slots.set(id, (holders = new Set()));
    const slots = this.#slots;
    const lease: ConcurrencyLease = {
      release() {
        // Only this lease's own slot, only once: a second release (or one after `close`) frees nothing else.
        if (!holders.delete(lease)) return;
        if (holders.size === 0 && slots.get(id) === holders) slots.delete(id);
      },
    };
    holders.add(lease);
    return lease;
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
