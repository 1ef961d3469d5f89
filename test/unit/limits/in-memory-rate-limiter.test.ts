import { describe, expect, it } from 'vitest';
import { InMemoryRateLimiter } from '../../../src/limits/in-memory-rate-limiter.js';
import type { ConcurrencyLease } from '../../../src/limits/rate-limiter.js';
import { allowed, describeRateLimiterContract, freshRule, T0 } from './rate-limiter-contract.js';

const shared = new InMemoryRateLimiter();

function takeSlot(limiter: InMemoryRateLimiter): ConcurrencyLease | null {
  const decision = limiter.admitNow({ slots: [{ id: 'k', limit: 1 }], charges: [] }, T0);
  return decision.allowed ? decision.lease : null;
}
describeRateLimiterContract('in process', () => shared);

describe('InMemoryRateLimiter specifics', () => {
  it('keeps live windows when it sweeps expired ones', async () => {
    const limiter = new InMemoryRateLimiter();
    const keep = freshRule(5, 1000);
    for (let index = 0; index < 10_001; index += 1) await limiter.consume([{ rule: freshRule(1, 1000), cost: 1 }], T0);
    allowed(await limiter.consume([{ rule: keep, cost: 3 }], T0 + 5000));
    for (let index = 0; index < 10; index += 1) await limiter.consume([{ rule: freshRule(1, 1000), cost: 1 }], T0 + 5000);
    const blocked = await limiter.consume([{ rule: keep, cost: 3 }], T0 + 5001);
    expect(blocked.allowed ? null : blocked.blocking.remaining).toBe(2);
  });

  it('counts slots in use, and a lease released after close frees nothing of a later holder', async () => {
    const limiter = new InMemoryRateLimiter();
    const old = takeSlot(limiter);
    expect(limiter.inUse('k')).toBe(1);
    await limiter.close();
    const fresh = takeSlot(limiter);
    expect(fresh).not.toBeNull();
    old?.release();
    expect(limiter.inUse('k')).toBe(1);
    expect(takeSlot(limiter)).toBeNull();
    fresh?.release();
    expect(limiter.inUse('k')).toBe(0);
  });
});
