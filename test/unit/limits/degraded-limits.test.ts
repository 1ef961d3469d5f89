/**
 * The Redis backend while Redis cannot be reached: in `share` mode each instance enforces its share of every limit
 * (RPM, TPM, concurrency) from the fleet it last saw, and the shares of all instances add up to the limit exactly;
 * in `deny` mode every limited request is refused with 503 and Retry-After.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { GatewayError } from '../../../src/errors/gateway-error.js';
import { shareOfLimit } from '../../../src/limits/limit-share.js';
import type { LimitRule } from '../../../src/limits/rate-limiter.js';
import { RedisRateLimiter, type RedisDegradedMode } from '../../../src/limits/redis-rate-limiter.js';
import type { FleetView } from '../../../src/redis/fleet-membership.js';
import { createRedisConnection, type Redis } from '../../../src/redis/redis-connection.js';
import { silentLogger } from '../../../src/shared/logger.js';
import { acquire } from './rate-limiter-contract.js';

const NOW = 1_700_000_000_000 - (1_700_000_000_000 % 60_000) + 1000;

describe('shareOfLimit', () => {
  it('gives the whole limit to a single instance', () => {
    expect(shareOfLimit(7, 'key:a:rpm', { size: 1, rank: 0 })).toBe(7);
  });

  it('divides a limit so that the shares of all instances add up to it exactly, none differing by more than one', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 1_000_000 }), fc.integer({ min: 1, max: 32 }), fc.string(), (limit, size, ruleId) => {
      const shares = Array.from({ length: size }, (_unused, rank) => shareOfLimit(limit, ruleId, { size, rank }));
      expect(shares.reduce((sum, share) => sum + share, 0)).toBe(limit);
      expect(Math.max(...shares) - Math.min(...shares)).toBeLessThanOrEqual(1);
    }));
  });

  it('hands the remainder to different instances for different rules', () => {
    const favoured = new Set<number>();
    for (let index = 0; index < 50; index += 1) {
      const fleet = (rank: number): FleetView => ({ size: 3, rank });
      favoured.add([0, 1, 2].find((rank) => shareOfLimit(1, `key:${index}:concurrency`, fleet(rank)) === 1) ?? -1);
    }
    expect([...favoured].sort()).toEqual([0, 1, 2]);
  });
});

describe('RedisRateLimiter with Redis unreachable', () => {
  const opened: Array<{ limiter: RedisRateLimiter; connection: Redis }> = [];
  afterEach(async () => {
    for (const { limiter, connection } of opened.splice(0)) {
      await limiter.close();
      connection.disconnect();
    }
  });

  function open(degradedMode: RedisDegradedMode, fleet: FleetView): RedisRateLimiter {
    const connection = createRedisConnection('redis://127.0.0.1:1', 'unreachable');
    connection.on('error', () => undefined);
    const limiter = new RedisRateLimiter(connection, { keyPrefix: 'degraded-test:', leaseTtlMs: 1000, logger: silentLogger, degradedMode, fleet: () => fleet });
    opened.push({ limiter, connection });
    return limiter;
  }

  const rule = (id: string, limit: number): LimitRule => ({ id, dimension: 'key-rpm', limit, windowMs: 60_000 });

  async function admitted(limiter: RedisRateLimiter, limitRule: LimitRule, cost: number, attempts: number): Promise<number> {
    let count = 0;
    for (let index = 0; index < attempts; index += 1) if ((await limiter.consume([{ rule: limitRule, cost }], NOW)).allowed) count += 1;
    return count;
  }

  it('admits between three instances exactly the request limit, each its share', async () => {
    const fleet = [0, 1, 2].map((rank) => open('share', { size: 3, rank }));
    const limitRule = rule('key:k1:rpm', 10);
    const counts = await Promise.all(fleet.map((limiter) => admitted(limiter, limitRule, 1, 10)));
    expect(counts.reduce((sum, count) => sum + count, 0)).toBe(10);
    expect([...counts].sort()).toEqual([3, 3, 4]);
    expect(fleet.every((limiter) => limiter.degraded)).toBe(true);
  });

  it('charges tokens against the share, a token estimate above the share taking the whole share', async () => {
    const [first, second] = [open('share', { size: 2, rank: 0 }), open('share', { size: 2, rank: 1 })];
    const tokens = { ...rule('key:k2:tpm', 1000), dimension: 'key-tpm' };
    expect((await first.consume([{ rule: tokens, cost: 400 }], NOW)).allowed).toBe(true);
    expect((await first.consume([{ rule: tokens, cost: 400 }], NOW)).allowed).toBe(false);
    const large = await second.consume([{ rule: tokens, cost: 1000 }], NOW);
    expect(large.allowed).toBe(true);
    expect(large.allowed && large.states[0]?.remaining).toBe(0);
    expect((await second.consume([{ rule: tokens, cost: 1 }], NOW)).allowed).toBe(false);
  });

  it('holds between two instances exactly the concurrency limit, each its share', async () => {
    const pair = [open('share', { size: 2, rank: 0 }), open('share', { size: 2, rank: 1 })];
    const leases = await Promise.all(pair.map(async (limiter) => [await acquire(limiter, 'key:k3:concurrency', 4), await acquire(limiter, 'key:k3:concurrency', 4), await acquire(limiter, 'key:k3:concurrency', 4)]));
    expect(leases.map((held) => held.filter((lease) => lease !== null).length)).toEqual([2, 2]);
    leases[0]?.[0]?.release();
    expect(await acquire(pair[0] as RedisRateLimiter, 'key:k3:concurrency', 4)).not.toBeNull();
  });

  it('admits slots and windows together against the shares, naming a full slot with its whole limit', async () => {
    const limiter = open('share', { size: 2, rank: 0 });
    const slot = { id: 'key:k5:concurrency', limit: 2 };
    const rpm = rule('key:k5:rpm', 4);
    const first = await limiter.admit({ slots: [slot], charges: [{ rule: rpm, cost: 1 }] }, NOW);
    expect(first.allowed).toBe(true);
    // This instance's share of the slot is 1: the second request is refused for it and charged nothing.
    expect(await limiter.admit({ slots: [slot], charges: [{ rule: rpm, cost: 1 }] }, NOW)).toEqual({ allowed: false, slot });
    if (first.allowed) first.lease?.release();
    const second = await limiter.admit({ slots: [slot], charges: [{ rule: rpm, cost: 1 }] }, NOW);
    expect(second.allowed && second.states[0]?.remaining).toBe(0);
  });

  it('refuses with 503 and Retry-After in deny mode, for rates and slots alike, and charges nothing', async () => {
    const limiter = open('deny', { size: 2, rank: 0 });
    const refusal = await limiter.consume([{ rule: rule('key:k4:rpm', 10), cost: 1 }], NOW).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(GatewayError);
    expect(refusal).toMatchObject({ status: 503, code: 'service_unavailable', retryAfterSeconds: 2 });
    await expect(acquire(limiter, 'key:k4:concurrency', 1)).rejects.toMatchObject({ status: 503 });
    await expect(limiter.admit({ slots: [{ id: 'key:k4:concurrency', limit: 1 }], charges: [{ rule: rule('key:k4:rpm', 10), cost: 1 }] }, NOW)).rejects.toMatchObject({ status: 503 });
    await expect(limiter.adjust(rule('key:k4:rpm', 10), -1, NOW)).resolves.toBeUndefined();
  });
});
