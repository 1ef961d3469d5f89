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

export interface ConcurrencyLease {
  release(): void;
}

/**
 * Cost-aware limits. `consume` takes `cost` from every rule or from none. Implementations: in-process (default)
 * and Redis (shared between instances).
 */
export interface RateLimiter {
  consume(requests: ReadonlyArray<{ rule: LimitRule; cost: number }>, now: number): Promise<LimitDecision>;
  /** Corrects an earlier charge (e.g. estimated tokens → real tokens); may go negative to refund. */
  adjust(rule: LimitRule, delta: number, chargedAt: number): Promise<void>;
  /** Takes one of `limit` concurrent slots; null when all are in use. */
  acquire(id: string, limit: number): Promise<ConcurrencyLease | null>;
  close(): Promise<void>;
}
