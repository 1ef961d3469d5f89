/**
 * Failure windows on Redis: two instances count into one window, the instance whose failure reaches the limit is the
 * one that reports the lockout, the other learns it (and then knows it without asking again); while Redis cannot be
 * reached each instance counts on its own.
 */
import { once } from 'node:events';
import { afterAll, describe, expect, it } from 'vitest';
import { RedisFailedAttemptGuard } from '../../../src/auth/redis-failed-attempt-guard.js';
import { createRedisConnection } from '../../../src/redis/redis-connection.js';
import { createLogger } from '../../../src/shared/logger.js';
import { RedisFixture, TEST_REDIS_URL, testKeyPrefix } from '../limits/redis-test-support.js';

const logger = createLogger('error', () => undefined);
const OPTIONS = { limit: 3, windowMs: 60_000, maxEntries: 100, logger };

describe.skipIf(TEST_REDIS_URL === undefined)('RedisFailedAttemptGuard', () => {
  const redis = new RedisFixture(TEST_REDIS_URL ?? '', testKeyPrefix());

  afterAll(async () => {
    await redis.cleanUp();
  });

  it('shares one window between instances; the failure reaching the limit starts it, the others learn it', async () => {
    const connections = [redis.connect('a'), redis.connect('b')];
    await Promise.all(connections.map((connection) => (connection.status === 'ready' ? undefined : once(connection, 'ready'))));
    const [a, b] = connections.map((connection) => new RedisFailedAttemptGuard(connection, { ...OPTIONS, keyPrefix: redis.prefix })) as [RedisFailedAttemptGuard, RedisFailedAttemptGuard];
    const now = Date.now();
    expect(await a.recordFailure('api-key', '203.0.113.9', now)).toEqual({ started: false, lockedForSeconds: null });
    expect(await b.recordFailure('api-key', '203.0.113.9', now)).toEqual({ started: false, lockedForSeconds: null });
    expect(await b.check('api-key', '203.0.113.9', now)).toBeNull();
    expect(await a.recordFailure('api-key', '203.0.113.9', now)).toEqual({ started: true, lockedForSeconds: null });
    // B has not seen it yet: nothing known locally, the shared window says so.
    expect(b.refusedFor('api-key', '203.0.113.9', now)).toBeNull();
    expect(await b.check('api-key', '203.0.113.9', now)).toBe(60);
    expect(b.refusedFor('api-key', '203.0.113.9', now)).toBe(60);
    // Another surface and another address have windows of their own.
    expect(await b.check('admin-token', '203.0.113.9', now)).toBeNull();
    expect(await b.check('api-key', '203.0.113.10', now)).toBeNull();
    // A failure counted after the start is answered as refused, not as a new start.
    const late = await b.recordFailure('api-key', '203.0.113.9', now);
    expect(late.started).toBe(false);
    expect(late.lockedForSeconds).toBeGreaterThan(0);
    await a.close();
    await b.close();
  });

  it('counts in its own memory while Redis cannot be reached', async () => {
    const unreachable = createRedisConnection('redis://127.0.0.1:1', 'unreachable');
    unreachable.on('error', () => undefined);
    const guard = new RedisFailedAttemptGuard(unreachable, { ...OPTIONS, keyPrefix: redis.prefix });
    const now = Date.now();
    expect((await guard.recordFailure('api-key', '198.51.100.1', now)).started).toBe(false);
    expect((await guard.recordFailure('api-key', '198.51.100.1', now)).started).toBe(false);
    expect((await guard.recordFailure('api-key', '198.51.100.1', now)).started).toBe(true);
    expect(await guard.check('api-key', '198.51.100.1', now)).toBe(60);
    await guard.close();
    unreachable.disconnect();
  });
});
