import type { ConcurrencyLease, LimitDecision, LimitRule, LimitState, RateLimiter } from './rate-limiter.js';

interface Window {
  startMs: number;
  endMs: number;
  used: number;
}

/** Fixed windows aligned to the epoch, in this process only. Expired windows are swept as the map grows. */
export class InMemoryRateLimiter implements RateLimiter {
  readonly #windows = new Map<string, Window>();
  readonly #slots = new Map<string, number>();
  #nextSweepSize = 10_000;

  async consume(requests: ReadonlyArray<{ rule: LimitRule; cost: number }>, now: number): Promise<LimitDecision> {
    const states: LimitState[] = [];
    const windows: Window[] = [];
    for (const { rule, cost } of requests) {
      const window = this.#window(rule, now);
      const resetAtMs = window.startMs + rule.windowMs;
      if (window.used + cost > rule.limit && cost > 0) {
        return { allowed: false, blocking: { rule, remaining: Math.max(0, rule.limit - window.used), resetAtMs }, retryAfterMs: resetAtMs - now };
      }
      windows.push(window);
      states.push({ rule, remaining: 0, resetAtMs });
    }
    requests.forEach(({ rule, cost }, index) => {
      const window = windows[index] as Window;
      window.used += cost;
      (states[index] as LimitState).remaining = Math.max(0, rule.limit - window.used);
    });
    return { allowed: true, states };
  }

  async adjust(rule: LimitRule, delta: number, chargedAt: number): Promise<void> {
    const window = this.#windows.get(rule.id);
    if (window !== undefined && window.startMs === windowStart(rule, chargedAt)) window.used = Math.max(0, window.used + delta);
  }

  async acquire(id: string, limit: number): Promise<ConcurrencyLease | null> {
    const inUse = this.#slots.get(id) ?? 0;
    if (inUse >= limit) return null;
    this.#slots.set(id, inUse + 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        const left = (this.#slots.get(id) ?? 1) - 1;
        if (left <= 0) this.#slots.delete(id);
        else this.#slots.set(id, left);
      },
    };
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

function windowStart(rule: LimitRule, now: number): number {
  return now - (now % rule.windowMs);
}
