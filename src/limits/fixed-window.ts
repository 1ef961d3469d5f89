import type { LimitDecision, LimitRule, LimitState } from './rate-limiter.js';

/** Start (epoch ms) of the window of `rule` that contains `now`: windows are aligned to the epoch. */
export function windowStart(rule: LimitRule, now: number): number {
  return now - (now % rule.windowMs);
}

/**
 * The one decision rule of every backend, given what each rule's current window has used so far: a request is
 * admitted when every rule with a positive cost has room for it (all or nothing). When it is not, the blocking
 * rule reported is the one whose window frees last, so `retryAfterMs` is the wait after which every rule that
 * refused has a fresh window.
 */
export function decide(requests: ReadonlyArray<{ rule: LimitRule; cost: number }>, used: ReadonlyArray<number>, now: number): LimitDecision {
  let blocking: LimitState | null = null;
  const states: LimitState[] = [];
  for (let index = 0; index < requests.length; index += 1) {
    const { rule, cost } = requests[index] as { rule: LimitRule; cost: number };
    const before = used[index] ?? 0;
    const resetAtMs = windowStart(rule, now) + rule.windowMs;
    if (cost > 0 && before + cost > rule.limit) {
      if (blocking === null || resetAtMs > blocking.resetAtMs) blocking = { rule, remaining: Math.max(0, rule.limit - before), resetAtMs };
    } else if (blocking === null) {
      states.push({ rule, remaining: Math.max(0, rule.limit - before - cost), resetAtMs });
    }
  }
  if (blocking !== null) return { allowed: false, blocking, retryAfterMs: Math.max(0, blocking.resetAtMs - now) };
  return { allowed: true, states };
}
