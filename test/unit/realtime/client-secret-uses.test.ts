import { describe, expect, it } from 'vitest';
import { InMemoryRateLimiter } from '../../../src/limits/in-memory-rate-limiter.js';
import { RedisRateLimiter } from '../../../src/limits/redis-rate-limiter.js';
import { silentLogger } from '../../../src/shared/logger.js';
import { RedisFixture, TEST_REDIS_URL, testKeyPrefix } from '../limits/redis-test-support.js';
import { admitSecretSession, windowCovering } from '../../../src/realtime/client-secret-uses.js';
import type { ClientSecretGrant } from '../../../src/realtime/client-secret.js';

describe('a limited client secret\'s sessions', () => {
  it('are counted in one epoch-aligned window holding the whole of the time it may open them', () => {
    for (const [from, until] of [[1_764_000_000_123, 1_764_000_060_123], [0, 0], [1_764_999_999_999, 1_765_072_000_000], [86_399_999, 86_400_001]] as const) {
      const size = windowCovering(from, until);
      expect(Math.floor(from / size)).toBe(Math.floor(until / size));
      expect(size).toBeLessThanOrEqual(4 * (until - from + 1) + 2);
    }
  });

  it('are refused past their number or their time, and a secret without a limit is never counted', async () => {
    const limiter = new InMemoryRateLimiter();
    const now = 1_764_000_000_000;
    const grant: ClientSecretGrant = { keyId: 'k', model: 'm', expiresAt: now + 600_000, sessionId: 'sess_1', session: null, sessions: { uses: 2, createdAt: now, newSessionsUntil: now + 60_000 } };
    await admitSecretSession(limiter, grant, now + 1);
    await admitSecretSession(limiter, grant, now + 59_000);
    await expect(admitSecretSession(limiter, grant, now + 59_500)).rejects.toThrow(/all the sessions it may \(2\)/);
    await expect(admitSecretSession(limiter, { ...grant, sessionId: 'sess_2' }, now + 60_001)).rejects.toThrow(/newSessionExpireTime/);
    const unlimited: ClientSecretGrant = { keyId: 'k', model: 'm', expiresAt: now + 600_000, sessionId: 'sess_3', session: null };
    for (let use = 0; use < 5; use += 1) await admitSecretSession(limiter, unlimited, now + use);
  });
});

describe.skipIf(TEST_REDIS_URL === undefined)('a limited client secret\'s sessions on Redis', () => {
  it('are counted once across instances sharing Redis, and the count expires soon after the secret stops opening sessions', async () => {
    const fixture = new RedisFixture(TEST_REDIS_URL ?? '', testKeyPrefix());
    const open = (): RedisRateLimiter => new RedisRateLimiter(fixture.connect('limits'), { keyPrefix: fixture.prefix, leaseTtlMs: 30_000, logger: silentLogger });
    const [first, second] = [open(), open()];
    await Promise.all(fixture.connections.map((connection) => new Promise((resolve) => connection.once('ready', resolve))));
    try {
      const now = Date.now();
      const grant: ClientSecretGrant = { keyId: 'k', model: 'm', expiresAt: now + 600_000, sessionId: `sess_${now}`, session: null, sessions: { uses: 1, createdAt: now, newSessionsUntil: now + 60_000 } };
      await admitSecretSession(first, grant, now + 10);
      await expect(admitSecretSession(second, grant, now + 20)).rejects.toThrow(/all the sessions it may \(1\)/);
      const admin = fixture.connect('inspect');
      const [, keys] = await admin.scan('0', 'MATCH', `${fixture.prefix}*realtime-secret*`, 'COUNT', 1000);
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) {
        const ttl = await admin.pttl(key);
        expect(ttl).toBeGreaterThan(0);
        expect(ttl).toBeLessThanOrEqual(4 * 60_001 + 2);
      }
    } finally {
      await first.close();
      await second.close();
      await fixture.cleanUp();
    }
  });
});
