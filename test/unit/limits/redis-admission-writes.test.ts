/**
 * The admissions a Redis limiter is asked for in one event-loop turn reach Redis in one write, counted by a private
 * Redis server's own read counter (the machine's Redis serves other tests at the same time); a release of a slot
 * near its limit sent in that turn is not held back for the end of it, and releases of slots far from their limits
 * are, to go in one write. The commands the scripts run are counted by the server's command statistics.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { createRedisConnection } from '../../../src/redis/redis-connection.js';
import { RedisRateLimiter } from '../../../src/limits/redis-rate-limiter.js';
import type { AdmissionAsk } from '../../../src/limits/rate-limiter.js';
import { silentLogger } from '../../../src/shared/logger.js';
import { freePort } from '../../e2e/cli/cli-process.js';
import { redisServerAvailable, startPrivateRedisServer, type PrivateRedisServer } from '../../support/private-redis-server.js';
import { T0 } from './rate-limiter-contract.js';

const ADMISSIONS = 20;

describe.skipIf(!redisServerAvailable())('Redis limiter writes', () => {
  let server: PrivateRedisServer;
  let limits: Redis;
  let observer: Redis;
  let limiter: RedisRateLimiter;

  beforeAll(async () => {
    server = await startPrivateRedisServer(await freePort());
    limits = createRedisConnection(server.url, 'limits');
    observer = createRedisConnection(server.url, 'observer');
    await Promise.all([limits, observer].map((connection) => new Promise((resolve) => connection.once('ready', resolve))));
    limiter = new RedisRateLimiter(limits, { keyPrefix: 'writes:', leaseTtlMs: 30_000, logger: silentLogger });
  }, 30_000);

  afterAll(async () => {
    await limiter?.close();
    limits?.disconnect();
    observer?.disconnect();
    await server?.destroy();
  });

  /** Calls of each command since the statistics were last reset, those run inside scripts included. */
  async function commandCalls(): Promise<Record<string, number>> {
    const calls: Record<string, number> = {};
    for (const match of (await observer.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls[match[1] as string] = Number(match[2]);
    return calls;
  }

  /** Reads the server has done; the INFO asking for it is one of them. */
  async function readsProcessed(): Promise<number> {
    const info = await observer.info('stats');
    return Number(/total_reads_processed:(\d+)/.exec(info)?.[1]);
  }

  const ask = (index: number, slot = { id: `key-${index % 4}`, limit: 100 }): AdmissionAsk => ({
    slots: [slot],
    charges: [{ rule: { id: `rpm-${index % 4}`, dimension: 'key-rpm', limit: 1000, windowMs: 60_000 }, cost: 1 }],
  });

  it('sends the admissions of one turn in one write', async () => {
    // The scripts are loaded first, so that no EVAL retry follows.
    const first = await limiter.admit(ask(0), T0);
    if (first.allowed) first.lease?.release();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const before = await readsProcessed();
    const decisions = await Promise.all(Array.from({ length: ADMISSIONS }, (_unused, index) => limiter.admit(ask(index), T0)));
    const after = await readsProcessed();
    expect(decisions.every((decision) => decision.allowed)).toBe(true);
    // The admissions' write, and the second INFO.
    expect(after - before).toBe(2);
    for (const decision of decisions) if (decision.allowed) decision.lease?.release();
  });

  it('runs the admissions of one turn as one script call, in order, a burst beyond the batch as several', async () => {
    await new Promise((resolve) => setTimeout(resolve, 50));
    await observer.config('RESETSTAT');
    // Twenty admissions of one turn for a slot of 12: the first twelve get it, as if each had run alone.
    const slot = { id: 'one-call', limit: 12 };
    const decisions = await Promise.all(Array.from({ length: ADMISSIONS }, (_unused, index) => limiter.admit({ ...ask(index), slots: [slot] }, T0)));
    expect(decisions.map((decision) => decision.allowed)).toEqual(Array.from({ length: ADMISSIONS }, (_unused, index) => index < 12));
    expect((await commandCalls()).evalsha).toBe(1);
    for (const decision of decisions) if (decision.allowed) decision.lease?.release();
    await new Promise((resolve) => setTimeout(resolve, 50));
    await observer.config('RESETSTAT');
    // 150 at once: batches of at most 64 admissions, every one answered.
    const burst = await Promise.all(Array.from({ length: 150 }, (_unused, index) => limiter.admit(ask(index), T0)));
    expect(burst.every((decision) => decision.allowed)).toBe(true);
    expect((await commandCalls()).evalsha).toBe(3);
    for (const decision of burst) if (decision.allowed) decision.lease?.release();
  });

  it('sends the release of a slot near its limit at once, with the admissions asked before it in the same turn', async () => {
    // A slot of 2: this lease fills half of it.
    const held = await limiter.admit(ask(1, { id: 'near', limit: 2 }), T0);
    if (!held.allowed) throw new Error('refused');
    const admitted = limiter.admit(ask(2), T0);
    expect(limits.stream.writableCorked).toBe(1);
    held.lease?.release();
    // The release goes out in the task after this one, not when the turn ends.
    await new Promise((resolve) => queueMicrotask(() => resolve(undefined)));
    expect(limits.stream.writableCorked).toBe(0);
    const decision = await admitted;
    expect(decision.allowed).toBe(true);
    if (decision.allowed) decision.lease?.release();
  });

  it('gathers the releases of slots far from their limits, made in separate tasks of one turn, into one write at its end', async () => {
    const decisions = await Promise.all(Array.from({ length: ADMISSIONS }, (_unused, index) => limiter.admit(ask(index), T0)));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const before = await readsProcessed();
    // Each release in a task of its own, all in one phase of one turn, as answers finishing on separate sockets are.
    await Promise.all(decisions.map((decision) => new Promise<void>((resolve) => setImmediate(() => {
      if (decision.allowed) decision.lease?.release();
      resolve();
    }))));
    expect(limiter.heldLeases).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const after = await readsProcessed();
    // One script call with every release, and the second INFO.
    expect(after - before).toBe(2);
    // They were released: the next admissions find every slot empty again.
    const again = await limiter.admit(ask(0, { id: 'key-0', limit: 1 }), T0);
    expect(again.allowed).toBe(true);
    if (again.allowed) again.lease?.release();
  });

  it('runs one count per slot, charges without reading first, and sets a window\'s expiry only when it starts', async () => {
    const slot = { id: 'commands', limit: 100 };
    const charges = [
      { rule: { id: 'commands-rpm', dimension: 'key-rpm', limit: 1000, windowMs: 60_000 }, cost: 1 },
      { rule: { id: 'commands-tpm', dimension: 'key-tpm', limit: 1_000_000, windowMs: 60_000 }, cost: 50 },
    ] as const;
    await observer.config('RESETSTAT');
    for (let index = 0; index < 10; index += 1) {
      const decision = await limiter.admit({ slots: [slot], charges: [...charges] }, T0);
      if (!decision.allowed) throw new Error('refused');
      decision.lease?.release();
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    const calls = await commandCalls();
    // Unexpired leases are counted, not swept first: expired ones are swept when leases are renewed.
    expect(calls.zcount).toBe(10);
    expect(calls.zcard ?? 0).toBe(0);
    expect(calls.zremrangebyscore ?? 0).toBe(0);
    // Charged at once: no read of a counter before it, and nothing to take back for an admitted request.
    expect(calls.incrby).toBe(20);
    expect(calls.get ?? 0).toBe(0);
    expect(calls.decrby ?? 0).toBe(0);
    // The slot's set gets its expiry with each lease; each of the two windows once, when its counter is created.
    expect(calls.pexpire).toBe(10 + 2);
    const windows = await observer.keys('writes:rl:commands-*');
    expect(windows).toHaveLength(2);
    for (const window of windows) expect(await observer.pttl(window)).toBeGreaterThan(0);
  });

  it('drops the expired leases of a holder that died when the leases of a live one are renewed', async () => {
    const slot = { id: 'swept', limit: 10 };
    const setKey = 'writes:cc:swept';
    const dyingConnection = createRedisConnection(server.url, 'dying');
    const livingConnection = createRedisConnection(server.url, 'living');
    await Promise.all([dyingConnection, livingConnection].map((connection) => new Promise((resolve) => connection.once('ready', resolve))));
    const dying = new RedisRateLimiter(dyingConnection, { keyPrefix: 'writes:', leaseTtlMs: 300, logger: silentLogger });
    // The live holder's lease outlives any stall of a loaded machine between its renewals (every second).
    const living = new RedisRateLimiter(livingConnection, { keyPrefix: 'writes:', leaseTtlMs: 3000, logger: silentLogger });
    try {
      const lost = await dying.admit({ slots: [slot], charges: [] }, T0);
      const kept = await living.admit({ slots: [slot], charges: [] }, T0);
      expect(lost.allowed && kept.allowed).toBe(true);
      // The first holder "crashes": its connection drops, it never releases and never renews.
      dyingConnection.disconnect();
      expect(await observer.zcard(setKey)).toBe(2);
      // Past the dead lease's expiry (300 ms) the live holder renews and sweeps it.
      await expect.poll(() => observer.zcard(setKey), { timeout: 10_000, interval: 50 }).toBe(1);
      if (kept.allowed) kept.lease?.release();
    } finally {
      await Promise.all([dying.close(), living.close()]);
      livingConnection.disconnect();
    }
  });
});
