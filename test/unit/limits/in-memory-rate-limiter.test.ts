import { describe, expect, it } from 'vitest';
import { InMemoryRateLimiter } from '../../../src/limits/in-memory-rate-limiter.js';
import { allowed, describeRateLimiterContract, freshRule, T0 } from './rate-limiter-contract.js';

const shared = new InMemoryRateLimiter();
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
    const old = limiter.acquireNow('k', 1);
    expect(limiter.inUse('k')).toBe(1);
    await limiter.close();
    const fresh = limiter.acquireNow('k', 1);
    expect(fresh).not.toBeNull();
    old?.release();
    expect(limiter.inUse('k')).toBe(1);
    expect(limiter.acquireNow('k', 1)).toBeNull();
    fresh?.release();
    expect(limiter.inUse('k')).toBe(0);
  });
});
