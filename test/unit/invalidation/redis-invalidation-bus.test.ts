/** Cache invalidation over Redis pub/sub between two buses (as two instances), against the machine's Redis. */
import { afterAll, describe, expect, it } from 'vitest';
import { LocalInvalidationBus, type Invalidation } from '../../../src/invalidation/invalidation-bus.js';
import { RedisInvalidationBus } from '../../../src/invalidation/redis-invalidation-bus.js';
import type { Redis } from '../../../src/redis/redis-connection.js';
import { silentLogger, type Logger } from '../../../src/shared/logger.js';
import { RedisFixture, TEST_REDIS_URL, testKeyPrefix } from '../limits/redis-test-support.js';

async function until(predicate: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('LocalInvalidationBus', () => {
  it('delivers to every handler before publish returns, even when one throws; never live', () => {
    const bus = new LocalInvalidationBus();
    const seen: Invalidation[] = [];
    bus.subscribe(() => {
      throw new Error('broken cache');
    });
    const unsubscribe = bus.subscribe((message) => void seen.push(message));
    bus.publish({ kind: 'key', id: 'k1' });
    expect(seen).toEqual([{ kind: 'key', id: 'k1' }]);
    unsubscribe();
    bus.publish({ kind: 'all' });
    expect(seen).toHaveLength(1);
    expect(bus.live).toBe(false);
  });
});

describe.skipIf(TEST_REDIS_URL === undefined)('RedisInvalidationBus', () => {
  const fixture = new RedisFixture(TEST_REDIS_URL ?? '', testKeyPrefix());
  const channel = `${fixture.prefix}invalidations`;
  const buses: RedisInvalidationBus[] = [];
  const open = async (logger: Logger = silentLogger, ackTimeoutMs?: number): Promise<{ bus: RedisInvalidationBus; seen: Invalidation[]; subscriber: Redis }> => {
    const subscriber = fixture.connect('subscriber');
    const bus = await RedisInvalidationBus.start(fixture.connect('publisher'), subscriber, channel, logger, ackTimeoutMs);
    buses.push(bus);
    const seen: Invalidation[] = [];
    bus.subscribe((message) => void seen.push(message));
    return { bus, seen, subscriber };
  };

  afterAll(async () => {
    for (const bus of buses) await bus.close();
    await fixture.cleanUp();
  });

  it('delivers here at once and to the other instance within milliseconds, once each', async () => {
    const first = await open();
    const second = await open();
    expect(first.bus.live).toBe(true);
    const started = Date.now();
    first.bus.publish({ kind: 'key', id: 'key_1' });
    expect(first.seen).toEqual([{ kind: 'key', id: 'key_1' }]);
    await until(() => second.seen.length > 0);
    expect(second.seen).toEqual([{ kind: 'key', id: 'key_1' }]);
    // Pub/sub is the second bus's only way to hear of it, so this bounds only how long the delivery waited: a
    // loaded machine can hold either process for hundreds of milliseconds, a delivery that waited on a poll or a
    // reconnect would take seconds.
    expect(Date.now() - started).toBeLessThan(2000);
    second.bus.publish({ kind: 'tier', name: 'pro' });
    await until(() => first.seen.length > 1);
    expect(first.seen).toEqual([{ kind: 'key', id: 'key_1' }, { kind: 'tier', name: 'pro' }]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(second.seen).toHaveLength(2);
  });

  it('returns from publish only once every other instance applied the change, even a slow one', async () => {
    // The publisher gives up waiting after its confirmation timeout, with a warning: that it returned on the
    // confirmations and not on the timeout is read from the warning's absence, with a timeout a loaded machine's
    // stalls cannot reach (the default second could be, and the wait would then end by timing out).
    const warnings: string[] = [];
    const first = await open({ ...silentLogger, warn: (message) => void warnings.push(message) }, 30_000);
    const second = await open();
    const third = await open();
    let slowApplied = false;
    third.bus.subscribe(async () => {
      await new Promise((resolve) => setTimeout(resolve, 150));
      slowApplied = true;
    });
    const started = Date.now();
    await first.bus.publish({ kind: 'account', id: 'acc_slow' });
    expect(second.seen).toEqual([{ kind: 'account', id: 'acc_slow' }]);
    expect(slowApplied).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(warnings).toEqual([]);
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('ignores malformed messages and drops everything after a reconnect (messages may have been missed)', async () => {
    const { bus, seen, subscriber } = await open();
    const raw = fixture.connect('raw');
    await raw.publish(channel, 'not json');
    await raw.publish(channel, JSON.stringify({ origin: 'x', message: { kind: 'key' } }));
    await raw.publish(channel, JSON.stringify({ origin: 'x', message: { kind: 'account', id: 'acct_1' } }));
    await until(() => seen.length > 0);
    expect(seen).toEqual([{ kind: 'account', id: 'acct_1' }]);
    subscriber.disconnect(true);
    await until(() => seen.length > 1);
    expect(seen.at(-1)).toEqual({ kind: 'all' });
    await until(() => bus.live);
    await raw.publish(channel, JSON.stringify({ origin: 'x', message: { kind: 'key', id: 'after' } }));
    await until(() => seen.at(-1)?.kind === 'key');
    expect(seen.at(-1)).toEqual({ kind: 'key', id: 'after' });
  });
});
