/**
 * Breaker decisions shared through Redis (TEST_REDIS_URL): an open on one instance is adopted by another within
 * milliseconds, a close follows, and an instance that starts later reads the current state from the hash.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createRedisConnection } from '../../../src/redis/redis-connection.js';
import { ChannelHealth } from '../../../src/routing/channel-health.js';
import type { BreakerPolicy } from '../../../src/routing/circuit-breaker.js';
import { RedisHealthSync } from '../../../src/routing/redis-health-sync.js';
import { systemClock } from '../../../src/shared/clock.js';
import { silentLogger } from '../../../src/shared/logger.js';
import { RedisCommandProxy } from '../../support/redis-command-proxy.js';
import { channel } from './routing-fixtures.js';

const REDIS_URL = process.env.TEST_REDIS_URL;
const POLICY: BreakerPolicy = { failureThreshold: 1, failureRatePercent: 100, minimumRequests: 1000, windowMs: 60_000, cooldownMs: 60_000, maxCooldownMs: 60_000 };

describe.skipIf(REDIS_URL === undefined)('RedisHealthSync', () => {
  const prefix = `unigate-test:${randomBytes(6).toString('hex')}:`;
  const syncs: RedisHealthSync[] = [];
  const instance = async (url = REDIS_URL ?? ''): Promise<ChannelHealth> => {
    const health = new ChannelHealth(POLICY, systemClock, silentLogger);
    syncs.push(await RedisHealthSync.start(url, prefix, health, silentLogger));
    return health;
  };

  afterAll(async () => {
    await Promise.all(syncs.map((sync) => sync.close()));
    const redis = createRedisConnection(REDIS_URL ?? '', 'test-cleanup');
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it('shares opens and closes between instances, and with instances that start later', async () => {
    const first = await instance();
    const second = await instance();
    const target = channel(`ch_${randomBytes(4).toString('hex')}`);
    first.acquire(target, 'alpha')?.failed({ failureClass: 'server_error', retryAfterMs: null });
    expect(first.isAvailable(target, 'alpha')).toBe(false);
    await expect.poll(() => second.isAvailable(target, 'alpha'), { timeout: 10_000 }).toBe(false);
    expect(second.isAvailable(target, 'beta')).toBe(true);

    const late = await instance();
    expect(late.isAvailable(target, 'alpha')).toBe(false);

    first.force(target, 'alpha').succeeded();
    await expect.poll(() => second.isAvailable(target, 'alpha'), { timeout: 10_000 }).toBe(true);
    await expect.poll(() => late.isAvailable(target, 'alpha'), { timeout: 10_000 }).toBe(true);
    const restarted = await instance();
    expect(restarted.isAvailable(target, 'alpha')).toBe(true);
  });

  it('shares a Retry-After pause', async () => {
    const first = await instance();
    const second = await instance();
    const target = channel(`ch_${randomBytes(4).toString('hex')}`);
    first.acquire(target, 'alpha')?.failed({ failureClass: 'throttled', retryAfterMs: 30_000 });
    await expect.poll(() => second.report(target).models.find((entry) => entry.model === 'alpha')?.openReason, { timeout: 10_000 }).toBe('retry-after');
  });

  it('keeps a close that arrives while an older read of the shared state is still on its way', async () => {
    const proxy = await RedisCommandProxy.start(REDIS_URL ?? '');
    let slowSync: RedisHealthSync | undefined;
    try {
      const first = await instance();
      const target = channel(`ch_${randomBytes(4).toString('hex')}`);
      first.acquire(target, 'alpha')?.failed({ failureClass: 'server_error', retryAfterMs: null });
      const slow = await instance(proxy.url);
      slowSync = syncs.at(-1);
      await expect.poll(() => slow.isAvailable(target, 'alpha'), { timeout: 10_000 }).toBe(false);

      // The subscriber reconnects and reads the hash again; that read's reply is held back while the close is sent.
      proxy.hold('unigate-health');
      const readsBefore = proxy.commands.filter((command) => command.args[0]?.toLowerCase() === 'hgetall').length;
      proxy.drop('unigate-health-events');
      await expect.poll(() => proxy.commands.filter((command) => command.args[0]?.toLowerCase() === 'hgetall').length, { timeout: 5000 }).toBeGreaterThan(readsBefore);
      first.force(target, 'alpha').succeeded();
      await expect.poll(() => slow.isAvailable(target, 'alpha'), { timeout: 10_000 }).toBe(true);

      proxy.release('unigate-health');
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(slow.isAvailable(target, 'alpha')).toBe(true);
    } finally {
      await slowSync?.close();
      await proxy.close();
    }
  });
});
