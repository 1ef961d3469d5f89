/** The behaviour both RateLimiter backends share, run against each (in process always, Redis when TEST_REDIS_URL is set). */
import { describe, expect, it } from 'vitest';
import type { ConcurrencyLease, LimitDecision, LimitRule, RateLimiter } from '../../../src/limits/rate-limiter.js';

export const MINUTE = 60_000;
/** A multiple of 60 000: a window starts here. */
export const T0 = 1_700_000_040_000;

let ruleCounter = 0;
/** A rule with a unique id, so tests sharing one backend (and one Redis prefix) never see each other's counters. */
export function freshRule(limit: number, windowMs = MINUTE, dimension = 'test'): LimitRule {
  ruleCounter += 1;
  return { id: `r${ruleCounter}-${Math.random().toString(36).slice(2, 8)}`, dimension, limit, windowMs };
}

export function allowed(decision: LimitDecision): Extract<LimitDecision, { allowed: true }> {
  if (!decision.allowed) throw new Error(`expected allowed, blocked by ${decision.blocking.rule.id}`);
  return decision;
}

export function denied(decision: LimitDecision): Extract<LimitDecision, { allowed: false }> {
  if (decision.allowed) throw new Error('expected a denial');
  return decision;
}

/** One slot of `id` taken through `admit`, as admission takes slots: the lease, or null when every slot is in use. */
export async function acquire(limiter: RateLimiter, id: string, limit: number): Promise<ConcurrencyLease | null> {
  const decision = await limiter.admit({ slots: [{ id, limit }], charges: [] }, Date.now());
  return decision.allowed ? decision.lease : null;
}

export function describeRateLimiterContract(name: string, limiterOf: () => RateLimiter): void {
  describe(`${name}: windows`, () => {
    it('reports remaining and the epoch-aligned reset for every rule', async () => {
      const rpm = freshRule(10);
      const tpm = freshRule(1000);
      const decision = allowed(await limiterOf().consume([{ rule: rpm, cost: 1 }, { rule: tpm, cost: 300 }], T0 + 12_345));
      expect(decision.states).toEqual([
        { rule: rpm, remaining: 9, resetAtMs: T0 + MINUTE },
        { rule: tpm, remaining: 700, resetAtMs: T0 + MINUTE },
      ]);
    });

    it('admits exactly the limit, then refuses with what remains and the time to the window end', async () => {
      const rule = freshRule(3);
      for (let index = 0; index < 3; index += 1) allowed(await limiterOf().consume([{ rule, cost: 1 }], T0 + index));
      const blocked = denied(await limiterOf().consume([{ rule, cost: 1 }], T0 + 20_000));
      expect(blocked.blocking).toEqual({ rule, remaining: 0, resetAtMs: T0 + MINUTE });
      expect(blocked.retryAfterMs).toBe(40_000);
    });

    it('admits exactly the limit out of many concurrent requests', async () => {
      const rule = freshRule(7);
      const decisions = await Promise.all(Array.from({ length: 40 }, () => limiterOf().consume([{ rule, cost: 1 }], T0 + 5)));
      expect(decisions.filter((decision) => decision.allowed)).toHaveLength(7);
    });

    it('is all-or-nothing across rules', async () => {
      const a = freshRule(10);
      const b = freshRule(3);
      allowed(await limiterOf().consume([{ rule: a, cost: 2 }, { rule: b, cost: 2 }], T0));
      const blocked = denied(await limiterOf().consume([{ rule: a, cost: 2 }, { rule: b, cost: 2 }], T0 + 1));
      expect(blocked.blocking.rule).toEqual(b);
      expect(blocked.blocking.remaining).toBe(1);
      expect(allowed(await limiterOf().consume([{ rule: a, cost: 8 }], T0 + 2)).states[0]?.remaining).toBe(0);
    });

    it('names the blocking rule whose window frees last, so Retry-After is enough for all of them', async () => {
      const minute = freshRule(1, MINUTE);
      const hour = freshRule(1, 60 * MINUTE);
      const at = T0 + 30_000;
      allowed(await limiterOf().consume([{ rule: minute, cost: 1 }, { rule: hour, cost: 1 }], at));
      const blocked = denied(await limiterOf().consume([{ rule: minute, cost: 1 }, { rule: hour, cost: 1 }], at + 1));
      expect(blocked.blocking.rule).toEqual(hour);
      const hourEnd = at - (at % (60 * MINUTE)) + 60 * MINUTE;
      expect(blocked.retryAfterMs).toBe(hourEnd - at - 1);
      // Only the minute rule refuses: its window end is the answer.
      const onlyMinute = denied(await limiterOf().consume([{ rule: minute, cost: 1 }, { rule: freshRule(5, 60 * MINUTE), cost: 1 }], at + 2));
      expect(onlyMinute.blocking.rule).toEqual(minute);
      expect(onlyMinute.retryAfterMs).toBe(T0 + MINUTE - at - 2);
    });

    it('refuses a cost larger than what remains, reporting what remains', async () => {
      const tpm = freshRule(1000);
      allowed(await limiterOf().consume([{ rule: tpm, cost: 900 }], T0));
      expect(denied(await limiterOf().consume([{ rule: tpm, cost: 101 }], T0)).blocking.remaining).toBe(100);
      allowed(await limiterOf().consume([{ rule: tpm, cost: 100 }], T0));
    });

    it('lets a zero-cost request through an exhausted rule', async () => {
      const rule = freshRule(1);
      allowed(await limiterOf().consume([{ rule, cost: 1 }], T0));
      expect(allowed(await limiterOf().consume([{ rule, cost: 0 }], T0)).states[0]?.remaining).toBe(0);
    });

    it('starts a fresh window exactly at the boundary, not a millisecond before', async () => {
      const rule = freshRule(2);
      allowed(await limiterOf().consume([{ rule, cost: 2 }], T0 + 100));
      const justBefore = denied(await limiterOf().consume([{ rule, cost: 1 }], T0 + MINUTE - 1));
      expect(justBefore.retryAfterMs).toBe(1);
      const next = allowed(await limiterOf().consume([{ rule, cost: 1 }], T0 + MINUTE));
      expect(next.states[0]).toEqual({ rule, remaining: 1, resetAtMs: T0 + 2 * MINUTE });
    });

    it('keeps rules apart by id', async () => {
      allowed(await limiterOf().consume([{ rule: freshRule(1), cost: 1 }], T0));
      allowed(await limiterOf().consume([{ rule: freshRule(1), cost: 1 }], T0));
    });
  });

  describe(`${name}: adjust`, () => {
    it('refunds within the window the charge was made in', async () => {
      const tpm = freshRule(100);
      allowed(await limiterOf().consume([{ rule: tpm, cost: 100 }], T0 + 10));
      await limiterOf().adjust(tpm, -60, T0 + 10);
      expect(allowed(await limiterOf().consume([{ rule: tpm, cost: 60 }], T0 + 20)).states[0]?.remaining).toBe(0);
      denied(await limiterOf().consume([{ rule: tpm, cost: 1 }], T0 + 20));
    });

    it('charges extra', async () => {
      const tpm = freshRule(100);
      allowed(await limiterOf().consume([{ rule: tpm, cost: 10 }], T0));
      await limiterOf().adjust(tpm, 85, T0);
      expect(allowed(await limiterOf().consume([{ rule: tpm, cost: 5 }], T0 + 1)).states[0]?.remaining).toBe(0);
    });

    it('never goes below zero used', async () => {
      const tpm = freshRule(10);
      allowed(await limiterOf().consume([{ rule: tpm, cost: 5 }], T0));
      await limiterOf().adjust(tpm, -1000, T0);
      denied(await limiterOf().consume([{ rule: tpm, cost: 11 }], T0));
      allowed(await limiterOf().consume([{ rule: tpm, cost: 10 }], T0));
    });

    it('leaves the current window alone when correcting a charge of an earlier one', async () => {
      const tpm = freshRule(10);
      allowed(await limiterOf().consume([{ rule: tpm, cost: 10 }], T0 + 59_000));
      allowed(await limiterOf().consume([{ rule: tpm, cost: 10 }], T0 + MINUTE + 1));
      await limiterOf().adjust(tpm, -10, T0 + 59_000);
      denied(await limiterOf().consume([{ rule: tpm, cost: 1 }], T0 + MINUTE + 2));
      await limiterOf().adjust(tpm, -5, T0 + MINUTE + 3);
      expect(allowed(await limiterOf().consume([{ rule: tpm, cost: 5 }], T0 + MINUTE + 4)).states[0]?.remaining).toBe(0);
    });

    it('does nothing for a rule never consumed', async () => {
      const rule = freshRule(1);
      await expect(limiterOf().adjust(rule, 5, T0)).resolves.toBeUndefined();
      allowed(await limiterOf().consume([{ rule, cost: 1 }], T0));
    });
  });

  describe(`${name}: concurrency`, () => {
    it('hands out at most `limit` leases and takes them back on release', async () => {
      const id = freshRule(1).id;
      const first = await acquire(limiterOf(), id, 2);
      const second = await acquire(limiterOf(), id, 2);
      expect(first).not.toBeNull();
      expect(second).not.toBeNull();
      expect(await acquire(limiterOf(), id, 2)).toBeNull();
      first?.release();
      await settle();
      expect(await acquire(limiterOf(), id, 2)).not.toBeNull();
      expect(await acquire(limiterOf(), id, 2)).toBeNull();
    });

    it('frees a lease once however often it is released', async () => {
      const id = freshRule(1).id;
      const first = await acquire(limiterOf(), id, 2);
      await acquire(limiterOf(), id, 2);
      first?.release();
      first?.release();
      first?.release();
      await settle();
      expect(await acquire(limiterOf(), id, 2)).not.toBeNull();
      expect(await acquire(limiterOf(), id, 2)).toBeNull();
    });

    it('hands out exactly `limit` leases to many concurrent callers', async () => {
      const id = freshRule(1).id;
      const leases = await Promise.all(Array.from({ length: 30 }, () => acquire(limiterOf(), id, 4)));
      expect(leases.filter((lease) => lease !== null)).toHaveLength(4);
      for (const lease of leases) lease?.release();
      await settle();
      const again = await Promise.all(Array.from({ length: 10 }, () => acquire(limiterOf(), id, 4)));
      expect(again.filter((lease) => lease !== null)).toHaveLength(4);
    });

    it('keeps ids apart', async () => {
      const a = freshRule(1).id;
      const b = freshRule(1).id;
      expect(await acquire(limiterOf(), a, 1)).not.toBeNull();
      expect(await acquire(limiterOf(), b, 1)).not.toBeNull();
      expect(await acquire(limiterOf(), a, 1)).toBeNull();
    });
  });

  describe(`${name}: admit (slots and windows in one step)`, () => {
    it('takes every slot and charges every window, and one release frees every slot', async () => {
      const key = { id: freshRule(1).id, limit: 1 };
      const account = { id: freshRule(1).id, limit: 2 };
      const rpm = freshRule(10);
      const decision = await limiterOf().admit({ slots: [key, account], charges: [{ rule: rpm, cost: 1 }] }, T0 + 5);
      if (!decision.allowed) throw new Error('expected admission');
      expect(decision.states).toEqual([{ rule: rpm, remaining: 9, resetAtMs: T0 + MINUTE }]);
      expect(await acquire(limiterOf(), key.id, 1)).toBeNull();
      decision.lease?.release();
      await settle();
      expect(await acquire(limiterOf(), key.id, 1)).not.toBeNull();
      expect(await acquire(limiterOf(), account.id, 1)).not.toBeNull();
    });

    it('refuses for the first full slot in order and charges no window', async () => {
      const key = { id: freshRule(1).id, limit: 1 };
      const account = { id: freshRule(1).id, limit: 1 };
      const rpm = freshRule(1);
      expect(await acquire(limiterOf(), account.id, 1)).not.toBeNull();
      const refused = await limiterOf().admit({ slots: [key, account], charges: [{ rule: rpm, cost: 1 }] }, T0);
      expect(refused).toEqual({ allowed: false, slot: account });
      // The key's slot was not kept and the window was not charged.
      expect(await acquire(limiterOf(), key.id, 1)).not.toBeNull();
      allowed(await limiterOf().consume([{ rule: rpm, cost: 1 }], T0));
      expect(await acquire(limiterOf(), key.id, 1)).toBeNull();
      const both = await limiterOf().admit({ slots: [key, account], charges: [] }, T0);
      expect(both).toEqual({ allowed: false, slot: key });
    });

    it('refuses for a full window like consume does, holding no slot', async () => {
      const slot = { id: freshRule(1).id, limit: 1 };
      const rpm = freshRule(1);
      allowed(await limiterOf().consume([{ rule: rpm, cost: 1 }], T0 + 20_000));
      const refused = await limiterOf().admit({ slots: [slot], charges: [{ rule: rpm, cost: 1 }] }, T0 + 20_000);
      expect(refused).toEqual({ allowed: false, slot: null, blocking: { rule: rpm, remaining: 0, resetAtMs: T0 + MINUTE }, retryAfterMs: 40_000 });
      expect(await acquire(limiterOf(), slot.id, 1)).not.toBeNull();
    });

    it('admits exactly as many as the tighter of slots and windows out of many concurrent requests', async () => {
      const slot = { id: freshRule(1).id, limit: 6 };
      const rpm = freshRule(4);
      const decisions = await Promise.all(Array.from({ length: 30 }, () => limiterOf().admit({ slots: [slot], charges: [{ rule: rpm, cost: 1 }] }, T0 + 7)));
      expect(decisions.filter((decision) => decision.allowed)).toHaveLength(4);
      // The admitted hold 4 of the 6 slots: two are left.
      expect(await acquire(limiterOf(), slot.id, 6)).not.toBeNull();
      expect(await acquire(limiterOf(), slot.id, 6)).not.toBeNull();
      expect(await acquire(limiterOf(), slot.id, 6)).toBeNull();
    });
  });
}

/** Lets a fire-and-forget release reach its backend. */
export async function settle(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 20));
}
