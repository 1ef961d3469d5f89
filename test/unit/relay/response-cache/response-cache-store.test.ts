import { describe, expect, it } from 'vitest';
import { createRedisConnection } from '../../../../src/redis/redis-connection.js';
import { RedisResponseCacheStore } from '../../../../src/relay/response-cache/redis-response-cache-store.js';
import { LruResponseCacheStore } from '../../../../src/relay/response-cache/response-cache-store.js';
import { silentLogger } from '../../../../src/shared/logger.js';

describe('in-process response cache store', () => {
  it('expires entries after their TTL', async () => {
    let now = 1000;
    const store = new LruResponseCacheStore({ maxEntries: 10, maxBytes: 1000 }, () => now);
    await store.set('a', 'answer', 500);
    expect(await store.get('a')).toBe('answer');
    now += 500;
    expect(await store.get('a')).toBeNull();
    expect(store.size).toBe(0);
  });

  it('keeps at most maxEntries, dropping the least recently used', async () => {
    const store = new LruResponseCacheStore({ maxEntries: 2, maxBytes: 1000 });
    await store.set('a', '1', 60_000);
    await store.set('b', '2', 60_000);
    expect(await store.get('a')).toBe('1');
    await store.set('c', '3', 60_000);
    expect(await store.get('b')).toBeNull();
    expect(await store.get('a')).toBe('1');
    expect(await store.get('c')).toBe('3');
  });

  it('keeps at most maxBytes of text and never an entry larger than that', async () => {
    const store = new LruResponseCacheStore({ maxEntries: 100, maxBytes: 10 });
    await store.set('big', 'x'.repeat(11), 60_000);
    expect(await store.get('big')).toBeNull();
    await store.set('a', 'x'.repeat(6), 60_000);
    await store.set('b', 'y'.repeat(6), 60_000);
    expect(await store.get('a')).toBeNull();
    expect(await store.get('b')).toBe('y'.repeat(6));
    await store.set('b', 'z', 60_000);
    await store.set('c', 'w'.repeat(9), 60_000);
    expect(await store.get('b')).toBe('z');
  });
});

describe('Redis response cache store', () => {
  it('an unreachable Redis reads as a miss within the timeout and a store is skipped, never thrown', async () => {
    const redis = createRedisConnection('redis://127.0.0.1:1', 'test-unreachable');
    redis.on('error', () => undefined);
    const store = new RedisResponseCacheStore(redis, { keyPrefix: 'test:', timeoutMs: 200, logger: silentLogger });
    try {
      const startedAt = performance.now();
      expect(await store.get('k')).toBeNull();
      // Ends at the 200 ms timeout or sooner; the bound leaves a loaded machine room for its stalls.
      expect(performance.now() - startedAt).toBeLessThan(3000);
      await expect(store.set('k', 'v', 1000)).resolves.toBeUndefined();
    } finally {
      redis.disconnect();
    }
  });
});
