/**
 * A gateway with REDIS_URL: the same answers as in process (exact Retry-After and reset at the window edges, with an
 * injected clock; TPM corrected; concurrency released), counters under REDIS_KEY_PREFIX; and a gateway whose Redis
 * cannot be reached still starts and limits in process meanwhile.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/shared/clock.js';
import { seedAccount, startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { RedisFixture, TEST_REDIS_URL, testKeyPrefix } from '../../unit/limits/redis-test-support.js';
import { addSimulatorModel, sleep } from '../admin/helpers.js';
import { chatWith, expectOk, expectRateLimited, MINUTE, nextWindow, rateLimitHeadersOf } from './limits-support.js';

const MODEL = 'redis-sim';
const SLOW = 'redis-slow';

describe.skipIf(TEST_REDIS_URL === undefined)('a gateway on Redis', () => {
  const redis = new RedisFixture(TEST_REDIS_URL ?? '', testKeyPrefix());
  const clock = new ManualClock(Math.floor(Date.now() / MINUTE) * MINUTE);
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({ clock, env: { REDIS_URL: TEST_REDIS_URL ?? '', REDIS_KEY_PREFIX: redis.prefix } });
    await addSimulatorModel(gateway, MODEL, undefined, { settings: { output_tokens: 6 } });
    // Two seconds: long enough to see its lease held and another request refused, however loaded the machine.
    await addSimulatorModel(gateway, SLOW, undefined, { settings: { output_tokens: 6, latency_ms: 2000 } });
  });

  afterAll(async () => {
    await gateway?.close();
    await redis.cleanUp();
  });

  it('refuses until the last millisecond of the window with an exact Retry-After, and admits at its first', async () => {
    const { key, keyId } = await seedAccount(gateway, { key: { rpm: 2 } });
    const start = nextWindow(clock, 12_000);
    const first = await chatWith(gateway, key, { model: MODEL });
    expectOk(first);
    expect(rateLimitHeadersOf(first)).toEqual({ limit: 2, remaining: 1, reset: (start + MINUTE) / 1000, dimension: 'key-rpm' });
    expectOk(await chatWith(gateway, key, { model: MODEL }));
    expect(expectRateLimited(await chatWith(gateway, key, { model: MODEL }), 'key-rpm')).toBe(48);
    clock.set(start + MINUTE - 1);
    expect(expectRateLimited(await chatWith(gateway, key, { model: MODEL }))).toBe(1);
    clock.set(start + MINUTE);
    expect(rateLimitHeadersOf(await chatWith(gateway, key, { model: MODEL }))).toMatchObject({ remaining: 1, reset: (start + 2 * MINUTE) / 1000 });
    const stored = await redis.connect().keys(`${redis.prefix}rl:key:${keyId}:rpm:*`);
    expect(stored.sort()).toEqual([`${redis.prefix}rl:key:${keyId}:rpm:${start}`, `${redis.prefix}rl:key:${keyId}:rpm:${start + MINUTE}`]);
  });

  it('corrects the TPM estimate by the real usage', async () => {
    const { key, keyId } = await seedAccount(gateway, { key: { tpm: 1000 } });
    nextWindow(clock, 1000);
    const first = await chatWith(gateway, key, { model: MODEL, maxTokens: 400 });
    expectOk(first);
    const estimate = 1000 - rateLimitHeadersOf(first).remaining;
    const usage = (first.body as { usage: { total_tokens: number } }).usage.total_tokens;
    // The correction is sent to Redis right after the answer: the window's count becomes the real usage.
    const counted = async (): Promise<number> => {
      const windows = await redis.connect().keys(`${redis.prefix}rl:key:${keyId}:tpm:*`);
      return (await Promise.all(windows.map((window) => redis.connect().get(window)))).reduce((sum, value) => sum + Number(value ?? 0), 0);
    };
    await expect.poll(counted, { timeout: 10_000, interval: 20 }).toBe(usage);
    expect(rateLimitHeadersOf(await chatWith(gateway, key, { model: MODEL, maxTokens: 400 })).remaining).toBe(1000 - usage - estimate);
  });

  it('holds a concurrency lease while the request runs and releases it after', async () => {
    const { key, keyId } = await seedAccount(gateway, { key: { concurrency: 1 } });
    const slow = chatWith(gateway, key, { model: SLOW });
    const leases = (): Promise<number> => redis.connect().zcard(`${redis.prefix}cc:key:${keyId}:concurrency`);
    await expect.poll(leases, { timeout: 10_000, interval: 20 }).toBe(1);
    expectRateLimited(await chatWith(gateway, key, { model: MODEL }));
    expectOk(await slow);
    await expect.poll(leases, { timeout: 10_000, interval: 20 }).toBe(0);
    expectOk(await chatWith(gateway, key, { model: MODEL }));
  });
});

describe('a gateway whose Redis cannot be reached', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({ env: { REDIS_URL: 'redis://127.0.0.1:1', REDIS_KEY_PREFIX: testKeyPrefix() } });
    await addSimulatorModel(gateway, MODEL, undefined, { settings: { output_tokens: 6 } });
  });

  afterAll(async () => {
    await gateway?.close();
  });

  it('starts, serves, and enforces limits in process meanwhile, saying so in the log', async () => {
    const { key } = await seedAccount(gateway, { key: { rpm: 1 } });
    if (Date.now() % MINUTE > MINUTE - 2000) await sleep(2100);
    expectOk(await chatWith(gateway, key, { model: MODEL }));
    expectRateLimited(await chatWith(gateway, key, { model: MODEL }), 'key-rpm');
    expect(gateway.logs.some((line) => line.includes('cannot subscribe to cache invalidations'))).toBe(true);
  });
});
