/** One limit dimension, e.g. `key:<id>:rpm` allowing 60 per 60 000 ms. */
export interface LimitRule {
  id: string;
  /** Human name of the dimension for headers and messages, e.g. `key-rpm`. */
  dimension: string;
  limit: number;
  windowMs: number;
}

export interface LimitState {
  rule: LimitRule;
  remaining: number;
  /** Epoch ms when the current window ends. */
  resetAtMs: number;
}

export type LimitDecision =
  | { allowed: true; states: LimitState[] }
  | { allowed: false; blocking: LimitState; retryAfterMs: number };

/** One concurrency dimension, e.g. `key:<id>:concurrency` allowing 4 requests at once. */
export interface ConcurrencySlot {
  id: string;
  limit: number;
}

/** Held concurrency slots. `release` may be called any number of times; only the first call frees them. */
export interface ConcurrencyLease {
  release(): void;
}

/** What one request takes at admission: a slot of every concurrency dimension and a charge to every window. */
export interface AdmissionAsk {
  slots: readonly ConcurrencySlot[];
  charges: ReadonlyArray<{ rule: LimitRule; cost: number }>;
}

/**
 * The answer to an `AdmissionAsk`: admitted with one lease over all its slots (null when it asked for none), refused
 * for the first slot in order that is full (`slot`), or refused by a window (`slot` null).
 */
export type AdmissionDecision =
  | { allowed: true; states: LimitState[]; lease: ConcurrencyLease | null }
  | { allowed: false; slot: ConcurrencySlot }
  | { allowed: false; slot: null; blocking: LimitState; retryAfterMs: number };

/**
 * Cost-aware limits over fixed windows aligned to the epoch (see `fixed-window.ts`), and concurrency slots.
 * `consume` takes `cost` from every rule or from none. Implementations: in-process (default) and Redis (shared
 * between instances); both decide with the same function, so they answer alike.
 */
export interface RateLimiter {
  consume(requests: ReadonlyArray<{ rule: LimitRule; cost: number }>, now: number): Promise<LimitDecision>;
  /**
   * Corrects an earlier charge (e.g. estimated tokens → real tokens); may go negative to refund. The Redis backend
   * sends the corrections and slot releases of one event-loop turn together; the promise settles once they are sent.
   */
  adjust(rule: LimitRule, delta: number, chargedAt: number): Promise<void>;
  /**
   * Takes a slot of every concurrency dimension and charges every window, all or nothing, in one step (one Redis
   * script): the slots are checked first, so a request refused for concurrency is charged nothing, and one refused
   * by a window holds no slot. Slots are held until the lease is released; the Redis backend also frees slots whose
   * holder stopped renewing them (a crashed process) after the lease TTL.
   */
  admit(ask: AdmissionAsk, now: number): Promise<AdmissionDecision>;
  /**
   * `admit` answered in the same turn, by a limiter that holds the exact state of every window and slot in this
   * process (the in-process one). A limiter whose state is elsewhere (Redis) has none: its callers await `admit`.
   */
  admitNow?(ask: AdmissionAsk, now: number): AdmissionDecision;
  /** `adjust` applied in the same turn, by the same kind of limiter as `admitNow`. */
  adjustNow?(rule: LimitRule, delta: number, chargedAt: number): void;
  close(): Promise<void>;
}
