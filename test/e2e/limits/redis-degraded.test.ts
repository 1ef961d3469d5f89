/**
 * Redis going away under a fleet: two `unigate serve` processes on one database and a Redis server of the test's
 * own. While Redis is up they announce themselves in it; once it is killed, each enforces its share of every limit
 * (RPM 10 → 5 each, concurrency 2 → 1 each), money is still charged for every answer, /readyz stays ready and says
 * `degraded`, and the metric says so too; an instance set to REDIS_DEGRADED_MODE=deny answers 503 with Retry-After
 * in the caller's family instead. When Redis is back, the limits are shared (exact across both) again.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { familyErrorProblem } from '../../support/family-error.js';
import { redisServerAvailable, startPrivateRedisServer, type PrivateRedisServer } from '../../support/private-redis-server.js';
import { call, type HttpAnswer } from '../admin/helpers.js';
import { freePort, killAll, waitUntil } from '../cli/cli-process.js';
import { ledgerEntries, startServeCluster, type LedgerEntryJson, type ServeCluster, type ServeInstance } from '../serve-cluster.js';
import { MINUTE } from './limits-support.js';

const canRun = redisServerAvailable();

describe.skipIf(!canRun)('limits while Redis is unreachable', () => {
  let redis: PrivateRedisServer;
  let cluster: ServeCluster;
  let a: ServeInstance;
  let b: ServeInstance;
  let deny: ServeInstance;

  beforeAll(async () => {
    redis = await startPrivateRedisServer(await freePort());
    cluster = await startServeCluster(2, [
      'models:',
      '  - { id: fleet-fast, pricing: { input_per_mtok: 1, output_per_mtok: 1 } }',
      '  - { id: fleet-slow, pricing: { input_per_mtok: 1, output_per_mtok: 1 } }',
      'channels:',
      '  - { name: fleet-fast, type: simulator, models: [fleet-fast], settings: { output_tokens: 4 } }',
      '  - { name: fleet-slow, type: simulator, models: [fleet-slow], settings: { output_tokens: 4, latency_ms: 1500 } }',
    ], { REDIS_URL: redis.url, REDIS_KEY_PREFIX: `degraded-${randomBytes(4).toString('hex')}:` });
    [a, b] = cluster.instances as [ServeInstance, ServeInstance];
    // Its own fleet (another key prefix), so it does not count in the others' shares.
    deny = await cluster.start('deny', { REDIS_DEGRADED_MODE: 'deny', REDIS_KEY_PREFIX: `degraded-deny-${randomBytes(4).toString('hex')}:` });
  }, 90_000);

  afterAll(async () => {
    killAll();
    await cluster?.close();
    await redis?.destroy();
  });

  const chat = (instance: ServeInstance, key: string, model = 'fleet-fast'): Promise<HttpAnswer> =>
    call(instance.url, 'POST', '/v1/chat/completions', { token: key, body: { model, messages: [{ role: 'user', content: 'hi' }] } });

  async function newKey(attributes: Record<string, unknown>): Promise<{ key: string; accountId: string }> {
    const account = await cluster.admin<{ id: string }>('POST', '/admin/accounts', { email: `degraded-${randomBytes(5).toString('hex')}@example.com` });
    expect(account.status, account.text).toBe(201);
    expect((await cluster.admin('POST', `/admin/accounts/${account.body.id}/credits`, { amount_usd: 10 })).status).toBe(200);
    const key = await cluster.admin<{ key: string }>('POST', `/admin/accounts/${account.body.id}/keys`, attributes);
    expect(key.status, key.text).toBe(201);
    return { key: key.body.key, accountId: account.body.id };
  }

  async function metric(instance: ServeInstance, name: string): Promise<number> {
    const answer = await call(instance.url, 'GET', '/metrics', { token: cluster.adminToken });
    const line = answer.text.split('\n').find((entry) => entry.startsWith(`${name} `));
    return line === undefined ? Number.NaN : Number(line.split(' ')[1]);
  }

  const count = (answers: HttpAnswer[], status: number): number => answers.filter((answer) => answer.status === status).length;

  /** Waits for a fresh minute window when less than `needMs` is left of this one. */
  async function roomInWindow(needMs: number): Promise<void> {
    if (MINUTE - (Date.now() % MINUTE) < needMs) await new Promise((resolve) => setTimeout(resolve, MINUTE - (Date.now() % MINUTE) + 50));
  }

  it('each instance enforces its share while Redis is gone, money still exact; shared limits again once it is back', async () => {
    const rpm = await newKey({ rpm: 10 });
    const slots = await newKey({ concurrency: 2 });
    const denied = await newKey({});
    for (const instance of [a, b]) await waitUntil(async () => (await metric(instance, 'unigate_fleet_instances')) === 2, 8000, `${instance.name} sees two instances`);
    expect(await metric(a, 'unigate_limits_degraded')).toBe(0);

    await redis.kill();
    for (const instance of [a, b, deny]) await waitUntil(async () => (await metric(instance, 'unigate_limits_degraded')) === 1, 5000, `${instance.name} degraded`);
    for (const instance of [a, b]) {
      const ready = await call<{ status: string; checks: { redis: string } }>(instance.url, 'GET', '/readyz');
      await waitUntil(async () => (await call<{ checks: { redis: string } }>(instance.url, 'GET', '/readyz')).body.checks.redis === 'degraded', 5000, `${instance.name} /readyz says degraded`);
      expect(ready.status).toBe(200);
    }

    await roomInWindow(15_000);
    const [fromA, fromB] = await Promise.all([a, b].map((instance) => Promise.all(Array.from({ length: 8 }, () => chat(instance, rpm.key)))));
    expect([count(fromA ?? [], 200), count(fromB ?? [], 200)]).toEqual([5, 5]);
    expect([count(fromA ?? [], 429), count(fromB ?? [], 429)]).toEqual([3, 3]);
    // Charges are written in batches: each instance's reach the ledger within its flush interval.
    const usageOf = async (accountId: string): Promise<LedgerEntryJson[]> => (await ledgerEntries(cluster, accountId)).filter((entry) => entry.kind === 'usage');
    await waitUntil(async () => (await usageOf(rpm.accountId)).length >= 10, 5000, 'ten charges in the ledger');
    const usage = await usageOf(rpm.accountId);
    expect(usage).toHaveLength(10);
    expect(usage.every((entry) => entry.amount_usd < 0)).toBe(true);

    const concurrent = await Promise.all([a, a, b, b].map((instance) => chat(instance, slots.key, 'fleet-slow')));
    expect(concurrent.map((answer) => answer.status).sort()).toEqual([200, 200, 429, 429]);

    const refusedChat = await chat(deny, denied.key);
    expect(refusedChat.status, refusedChat.text).toBe(503);
    expect(refusedChat.headers.get('retry-after')).toBe('2');
    expect(familyErrorProblem('openai', refusedChat.text)).toBeNull();
    const refusedMessages = await call(deny.url, 'POST', '/v1/messages', { headers: { 'x-api-key': denied.key, 'anthropic-version': '2023-06-01' }, body: { model: 'fleet-fast', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] } });
    expect(refusedMessages.status, refusedMessages.text).toBe(503);
    expect(refusedMessages.headers.get('retry-after')).toBe('2');
    expect(familyErrorProblem('anthropic', refusedMessages.text)).toBeNull();
    expect(await usageOf(denied.accountId)).toHaveLength(0);

    await redis.start();
    for (const instance of [a, b, deny]) await waitUntil(async () => (await metric(instance, 'unigate_limits_degraded')) === 0, 10_000, `${instance.name} recovered`);
    for (const instance of [a, b]) await waitUntil(async () => (await metric(instance, 'unigate_fleet_instances')) === 2, 8000, `${instance.name} sees two instances again`);
    expect((await call<{ checks: { redis: string } }>(a.url, 'GET', '/readyz')).body.checks.redis).toBe('ok');
    expect((await chat(deny, denied.key)).status).toBe(200);

    const again = await newKey({ rpm: 6 });
    await roomInWindow(10_000);
    const shared = await Promise.all(Array.from({ length: 16 }, (_unused, index) => chat(index % 2 === 0 ? a : b, again.key)));
    expect(count(shared, 200)).toBe(6);
    expect(count(shared, 429)).toBe(10);
  }, 120_000);
});
