import { describe, expect, it } from 'vitest';
import { InMemoryRateLimiter } from '../../src/limits/in-memory-rate-limiter.js';
import type { LimitDecision, LimitRule } from '../../src/limits/rate-limiter.js';

const MINUTE = 60_000;
const T0 = 1_700_000_040_000; // a multiple of 60 000: a window starts here
const rule = (id: string, limit: number, windowMs = MINUTE): LimitRule => ({ id, dimension: id, limit, windowMs });

function allowed(decision: LimitDecision): Extract<LimitDecision, { allowed: true }> {
  if (!decision.allowed) throw new Error(`expected allowed, blocked by ${decision.blocking.rule.id}`);
  return decision;
}

function denied(decision: LimitDecision): Extract<LimitDecision, { allowed: false }> {
  if (decision.allowed) throw new Error('expected a denial');
  return decision;
}

describe('InMemoryRateLimiter.consume', () => {
  it('reports remaining and the epoch-aligned reset for every rule', async () => {
    expect(T0 % MINUTE).toBe(0);
    const limiter = new InMemoryRateLimiter();
    const rpm = rule('k:rpm', 10);
    const tpm = rule('k:tpm', 1000);
    const decision = allowed(await limiter.consume([{ rule: rpm, cost: 1 }, { rule: tpm, cost: 300 }], T0 + 12_345));
    expect(decision.states).toEqual([
      { rule: rpm, remaining: 9, resetAtMs: T0 + MINUTE },
      { rule: tpm, remaining: 700, resetAtMs: T0 + MINUTE },
    ]);
  });

  it('allows up to the limit exactly, then blocks with the remaining and retry time', async () => {
    const limiter = new InMemoryRateLimiter();
    const r = rule('r', 3);
    for (let index = 0; index < 3; index += 1) allowed(await limiter.consume([{ rule: r, cost: 1 }], T0 + index));
    const blocked = denied(await limiter.consume([{ rule: r, cost: 1 }], T0 + 20_000));
    expect(blocked.blocking).toEqual({ rule: r, remaining: 0, resetAtMs: T0 + MINUTE });
    expect(blocked.retryAfterMs).toBe(40_000);
  });

  it('is all-or-nothing across rules', async () => {
    const limiter = new InMemoryRateLimiter();
    const a = rule('a', 10);
    const b = rule('b', 3);
    allowed(await limiter.consume([{ rule: a, cost: 2 }, { rule: b, cost: 2 }], T0));
    const blocked = denied(await limiter.consume([{ rule: a, cost: 2 }, { rule: b, cost: 2 }], T0 + 1));
    expect(blocked.blocking.rule).toBe(b);
    expect(blocked.blocking.remaining).toBe(1);
    // `a` was not charged by the denied request: 8 is still left.
    expect(allowed(await limiter.consume([{ rule: a, cost: 8 }], T0 + 2)).states[0]?.remaining).toBe(0);
  });

  it('charges nothing when the first rule blocks', async () => {
    const limiter = new InMemoryRateLimiter();
    const a = rule('a', 1);
    const b = rule('b', 5);
    allowed(await limiter.consume([{ rule: a, cost: 1 }], T0));
    denied(await limiter.consume([{ rule: a, cost: 1 }, { rule: b, cost: 5 }], T0));
    expect(allowed(await limiter.consume([{ rule: b, cost: 5 }], T0)).states[0]?.remaining).toBe(0);
  });

  it('blocks a cost larger than what remains, reporting what remains', async () => {
    const limiter = new InMemoryRateLimiter();
    const tpm = rule('tpm', 1000);
    allowed(await limiter.consume([{ rule: tpm, cost: 900 }], T0));
    expect(denied(await limiter.consume([{ rule: tpm, cost: 101 }], T0)).blocking.remaining).toBe(100);
    allowed(await limiter.consume([{ rule: tpm, cost: 100 }], T0));
  });

  it('lets a zero-cost request through an exhausted rule', async () => {
    const limiter = new InMemoryRateLimiter();
    const r = rule('r', 1);
    allowed(await limiter.consume([{ rule: r, cost: 1 }], T0));
    expect(allowed(await limiter.consume([{ rule: r, cost: 0 }], T0)).states[0]?.remaining).toBe(0);
  });

  it('starts a fresh window at the boundary, not before', async () => {
    const limiter = new InMemoryRateLimiter();
    const r = rule('r', 2);
    allowed(await limiter.consume([{ rule: r, cost: 2 }], T0 + 100));
    const justBefore = denied(await limiter.consume([{ rule: r, cost: 1 }], T0 + MINUTE - 1));
    expect(justBefore.retryAfterMs).toBe(1);
    const next = allowed(await limiter.consume([{ rule: r, cost: 1 }], T0 + MINUTE));
    expect(next.states[0]).toEqual({ rule: r, remaining: 1, resetAtMs: T0 + 2 * MINUTE });
  });

  it('keeps rules apart by id', async () => {
    const limiter = new InMemoryRateLimiter();
    allowed(await limiter.consume([{ rule: rule('x', 1), cost: 1 }], T0));
    allowed(await limiter.consume([{ rule: rule('y', 1), cost: 1 }], T0));
  });

  it('keeps live windows when it sweeps expired ones', async () => {
    const limiter = new InMemoryRateLimiter();
    const keep = rule('keep', 5, 1000);
    for (let index = 0; index < 10_001; index += 1) await limiter.consume([{ rule: rule(`old${index}`, 1, 1000), cost: 1 }], T0);
    allowed(await limiter.consume([{ rule: keep, cost: 3 }], T0 + 5000));
    for (let index = 0; index < 10; index += 1) await limiter.consume([{ rule: rule(`new${index}`, 1, 1000), cost: 1 }], T0 + 5000);
    expect(denied(await limiter.consume([{ rule: keep, cost: 3 }], T0 + 5001)).blocking.remaining).toBe(2);
  });
});

describe('InMemoryRateLimiter.adjust', () => {
  it('refunds within the window the charge was made in', async () => {
    const limiter = new InMemoryRateLimiter();
    const tpm = rule('tpm', 100);
    allowed(await limiter.consume([{ rule: tpm, cost: 100 }], T0 + 10));
    await limiter.adjust(tpm, -60, T0 + 10);
    expect(allowed(await limiter.consume([{ rule: tpm, cost: 60 }], T0 + 20)).states[0]?.remaining).toBe(0);
    denied(await limiter.consume([{ rule: tpm, cost: 1 }], T0 + 20));
  });

  it('charges extra', async () => {
    const limiter = new InMemoryRateLimiter();
    const tpm = rule('tpm', 100);
    allowed(await limiter.consume([{ rule: tpm, cost: 10 }], T0));
    await limiter.adjust(tpm, 85, T0);
    expect(allowed(await limiter.consume([{ rule: tpm, cost: 5 }], T0 + 1)).states[0]?.remaining).toBe(0);
  });

  it('never goes below zero used', async () => {
    const limiter = new InMemoryRateLimiter();
    const tpm = rule('tpm', 10);
    allowed(await limiter.consume([{ rule: tpm, cost: 5 }], T0));
    await limiter.adjust(tpm, -1000, T0);
    denied(await limiter.consume([{ rule: tpm, cost: 11 }], T0));
    allowed(await limiter.consume([{ rule: tpm, cost: 10 }], T0));
  });

  it('ignores corrections for an earlier window', async () => {
    const limiter = new InMemoryRateLimiter();
    const tpm = rule('tpm', 10);
    allowed(await limiter.consume([{ rule: tpm, cost: 10 }], T0 + 59_000));
    allowed(await limiter.consume([{ rule: tpm, cost: 10 }], T0 + MINUTE + 1));
    await limiter.adjust(tpm, -10, T0 + 59_000);
    denied(await limiter.consume([{ rule: tpm, cost: 1 }], T0 + MINUTE + 2));
    await limiter.adjust(tpm, 5, T0 + 59_000);
    await limiter.adjust(tpm, -5, T0 + MINUTE + 3);
    expect(allowed(await limiter.consume([{ rule: tpm, cost: 5 }], T0 + MINUTE + 4)).states[0]?.remaining).toBe(0);
  });

  it('does nothing for a rule never consumed', async () => {
    const limiter = new InMemoryRateLimiter();
    await expect(limiter.adjust(rule('nothing', 1), 5, T0)).resolves.toBeUndefined();
    allowed(await limiter.consume([{ rule: rule('nothing', 1), cost: 1 }], T0));
  });
});

describe('InMemoryRateLimiter concurrency', () => {
  it('hands out at most `limit` leases and takes them back on release', async () => {
    const limiter = new InMemoryRateLimiter();
    const first = await limiter.acquire('key', 2);
    const second = await limiter.acquire('key', 2);
    expect(first).not.toBeNull();
    expect(second).not.toBeNull();
    expect(await limiter.acquire('key', 2)).toBeNull();
    first?.release();
    const third = await limiter.acquire('key', 2);
    expect(third).not.toBeNull();
    expect(await limiter.acquire('key', 2)).toBeNull();
  });

  it('ignores a second release of the same lease', async () => {
    const limiter = new InMemoryRateLimiter();
    const first = await limiter.acquire('key', 2);
    await limiter.acquire('key', 2);
    first?.release();
    first?.release();
    first?.release();
    expect(await limiter.acquire('key', 2)).not.toBeNull();
    expect(await limiter.acquire('key', 2)).toBeNull();
  });

  it('keeps ids apart', async () => {
    const limiter = new InMemoryRateLimiter();
    expect(await limiter.acquire('a', 1)).not.toBeNull();
    expect(await limiter.acquire('b', 1)).not.toBeNull();
    expect(await limiter.acquire('a', 1)).toBeNull();
  });

  it('frees every slot once all leases are released', async () => {
    const limiter = new InMemoryRateLimiter();
    const leases = await Promise.all([1, 2, 3].map(() => limiter.acquire('k', 3)));
    for (const lease of leases) lease?.release();
    const again = await Promise.all([1, 2, 3].map(() => limiter.acquire('k', 3)));
    expect(again.every((lease) => lease !== null)).toBe(true);
    expect(await limiter.acquire('k', 3)).toBeNull();
  });

  it('close clears windows and slots', async () => {
    const limiter = new InMemoryRateLimiter();
    const r = rule('r', 1);
    allowed(await limiter.consume([{ rule: r, cost: 1 }], T0));
    await limiter.acquire('k', 1);
    await limiter.close();
    allowed(await limiter.consume([{ rule: r, cost: 1 }], T0));
    expect(await limiter.acquire('k', 1)).not.toBeNull();
  });
});
