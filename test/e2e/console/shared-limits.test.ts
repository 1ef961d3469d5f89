/**
 * With REDIS_URL, the console's anti-bruteforce counts are shared: two gateway instances on one Redis (and one
 * database) refuse a guesser together once the per-IP sign-in window is full, whichever instance it asks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleClient, uniqueEmail } from '../../support/console-client.js';
import { startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { awayFromWindowEdge } from './console-gateway.js';
import { RedisFixture, TEST_REDIS_URL, testKeyPrefix } from '../../unit/limits/redis-test-support.js';

describe.skipIf(TEST_REDIS_URL === undefined)('console limits on Redis', () => {
  const redis = new RedisFixture(TEST_REDIS_URL ?? '', testKeyPrefix());
  let first: TestGateway;
  let second: TestGateway;

  beforeAll(async () => {
    const env = { REDIS_URL: TEST_REDIS_URL ?? '', REDIS_KEY_PREFIX: redis.prefix, TRUST_PROXY: 'all' };
    first = await startTestGateway({ env });
    second = await startTestGateway({ env: { ...env, DATABASE_URL: first.databaseUrl, DATA_DIR: first.dataDirectory } });
  });

  afterAll(async () => {
    await second?.close();
    await first?.close();
    await redis.cleanUp();
  });

  it('counts sign-in attempts from one IP across instances', async () => {
    await awayFromWindowEdge(60_000, 8000);
    const ip = '10.200.0.1';
    const viaFirst = new ConsoleClient(first.consoleUrl, { ip });
    const viaSecond = new ConsoleClient(second.consoleUrl, { ip });
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 10; attempt += 1) {
      const client = attempt % 2 === 0 ? viaFirst : viaSecond;
      statuses.push((await client.signIn(uniqueEmail(), 'some guess 123 x')).status);
    }
    expect(statuses).toEqual(Array(10).fill(401));
    const refused = await viaSecond.signIn(uniqueEmail(), 'some guess 123 x');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await viaFirst.signIn(uniqueEmail(), 'some guess 123 x')).status).toBe(429);
  });
});
