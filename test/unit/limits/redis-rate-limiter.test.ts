/**
 * The Redis backend against the machine's Redis (TEST_REDIS_URL): the shared contract, exactness across two
 * limiters on separate connections (as two instances), leases that expire when their holder dies and are renewed
 * while it lives, and the in-process fallback when Redis cannot be reached.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisConnection } from '../../../src/redis/redis-connection.js';
import { RedisRateLimiter } from '../../../src/limits/redis-rate-limiter.js';
import { RedisScript } from '../../../src/limits/redis-script.js';
import { silentLogger } from '../../../src/shared/logger.js';
import { acquire, allowed, denied, describeRateLimiterContract, freshRule, settle, T0 } from './rate-limiter-contract.js';
import { RedisFixture, TEST_REDIS_URL, testKeyPrefix } from './redis-test-support.js';

describe.skipIf(TEST_REDIS_URL === undefined)('RedisRateLimiter', () => {
  const fixture = new RedisFixture(TEST_REDIS_URL ?? '', testKeyPrefix());
  const open = (leaseTtlMs = 30_000, prefix = fixture.prefix): RedisRateLimiter =>
    new RedisRateLimiter(fixture.connect('limits'), { keyPrefix: prefix, leaseTtlMs, logger: silentLogger });
  let first: RedisRateLimiter;
  let second: RedisRateLimiter;
  let turn = 0;
  /** Until its connection is ready a limiter limits in process, holding no lease in Redis. */
  const ready = async (limiter: RedisRateLimiter): Promise<void> => {
    const redis = limiter['redis'];
    if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
  };

  beforeAll(async () => {
    first = open();
    second = open();
    await Promise.all(fixture.connections.map((connection) => new Promise((resolve) => connection.once('ready', resolve))));
  });

  afterAll(async () => {
    await first.close();
    await second.close();
    await fixture.cleanUp();
  });

  // Every call of the contract goes to one of two limiters in turn: the counters must be the shared ones.
  describeRateLimiterContract('redis', () => {
    turn += 1;
    return turn % 2 === 0 ? first : second;
  });

  it('admits exactly the limit between two instances racing', async () => {
    const rule = freshRule(25);
    const decisions = await Promise.all(Array.from({ length: 100 }, (_unused, index) => (index % 2 === 0 ? first : second).consume([{ rule, cost: 1 }], T0 + 1)));
    expect(decisions.filter((decision) => decision.allowed)).toHaveLength(25);
  });

  it('hands out exactly the limit of leases between two instances racing', async () => {
    const id = freshRule(1).id;
    const leases = await Promise.all(Array.from({ length: 40 }, (_unused, index) => acquire(index % 2 === 0 ? first : second, id, 5)));
    expect(leases.filter((lease) => lease !== null)).toHaveLength(5);
    for (const lease of leases) lease?.release();
  });

  it('sends a release before the next task runs, so the caller it answered can take the slot again at once', async () => {
    const id = freshRule(1).id;
    const lease = await acquire(first, id, 1);
    expect(lease).not.toBeNull();
    lease?.release();
    // The caller had its answer and comes straight back, within the same event-loop turn; on one connection Redis
    // runs commands in the order they were sent, so the release must already be on the wire.
    await Promise.resolve();
    const again = await acquire(first, id, 1);
    expect(again).not.toBeNull();
    again?.release();
  });

  it('stores counters under the configured prefix, one key per rule and window, expiring after the window', async () => {
    const rule = freshRule(5);
    allowed(await first.consume([{ rule, cost: 2 }], Date.now()));
    const keys = await fixture.connections[0]?.keys(`${fixture.prefix}rl:${rule.id}:*`);
    expect(keys).toHaveLength(1);
    const ttl = await fixture.connections[0]?.pttl(keys?.[0] ?? '');
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(65_000);
  });

  it('keeps other prefixes apart', async () => {
    const other = open(30_000, `${fixture.prefix}other:`);
    await ready(other);
    try {
      const rule = freshRule(1);
      allowed(await first.consume([{ rule, cost: 1 }], T0));
      allowed(await other.consume([{ rule, cost: 1 }], T0));
      denied(await first.consume([{ rule, cost: 1 }], T0));
    } finally {
      await other.close();
    }
  });

  it('gives back the slots of an instance that died without releasing them, after the lease TTL', async () => {
    const dying = open(400);
    await new Promise((resolve) => dying['redis'].once('ready', resolve));
    const id = freshRule(1).id;
    expect(await acquire(dying, id, 1)).not.toBeNull();
    expect(await acquire(first, id, 1)).toBeNull();
    // The process "crashes": its connection drops, nothing is released and nothing renews.
    dying['redis'].disconnect();
    const started = Date.now();
    let lease = null;
    while (lease === null && Date.now() - started < 10_000) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      lease = await acquire(first, id, 1);
    }
    expect(lease).not.toBeNull();
    // Soon after its 400 ms TTL, with room for a loaded machine; a lease that was not given back would hold 30 s.
    expect(Date.now() - started).toBeLessThan(3000);
    lease?.release();
    await dying.close();
  });

  it('renews the leases it holds, so a long stream keeps its slot past the TTL', async () => {
    // Renewed every 500 ms: a loaded machine may stall the holder for a few hundred milliseconds between renewals
    // without its lease running out, which a 300 ms TTL (renewed every 100 ms) did not allow.
    const holder = open(1500);
    await ready(holder);
    const id = freshRule(1).id;
    const lease = await acquire(holder, id, 1);
    expect(lease).not.toBeNull();
    expect(holder.heldLeases).toBe(1);
    // Well past the TTL: only renewals keep the lease.
    await new Promise((resolve) => setTimeout(resolve, 4000));
    expect(await acquire(first, id, 1)).toBeNull();
    lease?.release();
    expect(holder.heldLeases).toBe(0);
    await settle();
    const next = await acquire(first, id, 1);
    expect(next).not.toBeNull();
    next?.release();
    await holder.close();
  });

  it('loads a script the server does not know yet (NOSCRIPT) and runs it by its digest afterwards', async () => {
    const marker = Math.floor(Math.random() * 1e9);
    const script = new RedisScript(`return ${marker} + tonumber(ARGV[1])`);
    const connection = fixture.connect('scripts');
    expect(await script.run(connection, [], [1])).toBe(marker + 1);
    expect(await script.run(connection, [], [2])).toBe(marker + 2);
  });

  it('falls back to in-process limits while Redis cannot be reached', async () => {
    const unreachable = createRedisConnection('redis://127.0.0.1:1', 'unreachable');
    unreachable.on('error', () => undefined);
    const warnings: string[] = [];
    const limiter = new RedisRateLimiter(unreachable, { keyPrefix: fixture.prefix, leaseTtlMs: 1000, logger: { ...silentLogger, warn: (message) => warnings.push(message) } });
    try {
      const rule = freshRule(2);
      allowed(await limiter.consume([{ rule, cost: 1 }], T0));
      allowed(await limiter.consume([{ rule, cost: 1 }], T0));
      denied(await limiter.consume([{ rule, cost: 1 }], T0));
      const lease = await acquire(limiter, 'fallback', 1);
      expect(lease).not.toBeNull();
      expect(await acquire(limiter, 'fallback', 1)).toBeNull();
      lease?.release();
      expect(await acquire(limiter, 'fallback', 1)).not.toBeNull();
    } finally {
      await limiter.close();
      unreachable.disconnect();
    }
  });
});
