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

/** One held concurrency slot. `release` may be called any number of times; only the first call frees the slot. */
export interface ConcurrencyLease {
  release(): void;
}

/**
 * Cost-aware limits over fixed windows aligned to the epoch (see `fixed-window.ts`). `consume` takes `cost` from
 * every rule or from none. Implementations: in-process (default) and Redis (shared between instances); both decide
 * with the same function, so they answer alike.
 */
export interface RateLimiter {
  consume(requests: ReadonlyArray<{ rule: LimitRule; cost: number }>, now: number): Promise<LimitDecision>;
  /** Corrects an earlier charge (e.g. estimated tokens → real tokens); may go negative to refund. */
  adjust(rule: LimitRule, delta: number, chargedAt: number): Promise<void>;
  /**
   * Takes one of `limit` concurrent slots; null when all are in use. A slot is held until its lease is released;
   * the Redis backend also frees slots whose holder stopped renewing them (a crashed process) after the lease TTL.
   */
  acquire(id: string, limit: number): Promise<ConcurrencyLease | null>;
  close(): Promise<void>;
}
