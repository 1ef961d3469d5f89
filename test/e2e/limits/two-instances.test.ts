/**
 * The Redis backend across processes: two `unigate serve` processes on one database and one Redis (REDIS_URL from
 * TEST_REDIS_URL, a key prefix of their own) admit exactly the limit between them, for RPM and for concurrency; a
 * key revoked, a tier changed or a channel added through one is seen by the other at once (pub/sub); and a gateway killed
 * (SIGKILL) in the middle of a stream gives its concurrency slot back once its lease expires (1 s here).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisFixture, TEST_REDIS_URL, testKeyPrefix } from '../../unit/limits/redis-test-support.js';
import { call, type HttpAnswer } from '../admin/helpers.js';
import { killAll, waitUntil } from '../cli/cli-process.js';
import { startServeCluster, type ServeCluster, type ServeInstance as Instance } from '../serve-cluster.js';
import { MINUTE } from './limits-support.js';

const LEASE_SECONDS = 1;
/**
 * How soon the other instance must act on a change made through one. Pushed over pub/sub it takes milliseconds; while
 * the push is live nothing else would bring it for far longer (keys are cached 30 s, routing and tiers re-read every
 * 60 s), so this bounds only how long a loaded machine may hold the two processes and the test's requests.
 */
const PUSHED_WITHIN_MS = 5000;

describe.skipIf(TEST_REDIS_URL === undefined)('two gateway processes on one Redis', () => {
  const redis = new RedisFixture(TEST_REDIS_URL ?? '', testKeyPrefix());
  let cluster: ServeCluster;
  let a: Instance;
  let b: Instance;

  beforeAll(async () => {
    // One after the other: the first applies migrations and gateway.yaml, the second finds them done.
    cluster = await startServeCluster(2, [
      'models:',
      '  - { id: pair-fast, pricing: { input_per_mtok: 1, output_per_mtok: 1 } }',
      '  - { id: pair-slow, pricing: { input_per_mtok: 1, output_per_mtok: 1 } }',
      '  - { id: pair-stream, pricing: { input_per_mtok: 1, output_per_mtok: 1 } }',
      'channels:',
      '  - { name: pair-fast, type: simulator, models: [pair-fast], settings: { output_tokens: 4 } }',
      '  - { name: pair-slow, type: simulator, models: [pair-slow], settings: { output_tokens: 4, latency_ms: 1000 } }',
      '  - { name: pair-stream, type: simulator, models: [pair-stream], settings: { output_tokens: 400, chunk_delay_ms: 50 } }',
    ], {
      REDIS_URL: TEST_REDIS_URL ?? '',
      REDIS_KEY_PREFIX: redis.prefix,
      CONCURRENCY_LEASE_SECONDS: String(LEASE_SECONDS),
    });
    [a, b] = cluster.instances as [Instance, Instance];
  }, 60_000);

  afterAll(async () => {
    killAll();
    await cluster?.close();
    await redis.cleanUp();
  });

  const admin = <T = Record<string, unknown>>(instance: Instance, method: string, route: string, body?: unknown): Promise<HttpAnswer<T>> =>
    cluster.admin<T>(method, route, body, cluster.instances.indexOf(instance));

  const chat = (instance: Instance, key: string, model = 'pair-fast'): Promise<HttpAnswer> =>
    call(instance.url, 'POST', '/v1/chat/completions', { token: key, body: { model, messages: [{ role: 'user', content: 'hi' }] } });

  /** An account with funds and one key with `attributes`, made through instance A. */
  async function newKey(attributes: Record<string, unknown>): Promise<{ key: string; keyId: string; accountId: string }> {
    const account = await admin<{ id: string }>(a, 'POST', '/admin/accounts', { email: `pair-${randomBytes(5).toString('hex')}@example.com` });
    expect(account.status, account.text).toBe(201);
    expect((await admin(a, 'POST', `/admin/accounts/${account.body.id}/credits`, { amount_usd: 10 })).status).toBe(200);
    const key = await admin<{ id: string; key: string }>(a, 'POST', `/admin/accounts/${account.body.id}/keys`, attributes);
    expect(key.status, key.text).toBe(201);
    return { key: key.body.key, keyId: key.body.id, accountId: account.body.id };
  }

  function statuses(answers: HttpAnswer[]): Record<number, number> {
    const counts: Record<number, number> = {};
    for (const answer of answers) counts[answer.status] = (counts[answer.status] ?? 0) + 1;
    return counts;
  }

  it('admit exactly the RPM limit between them', async () => {
    const { key } = await newKey({ rpm: 6 });
    // Far enough from a window edge that every request falls in one window.
    if (Date.now() % MINUTE > MINUTE - 2000) await new Promise((resolve) => setTimeout(resolve, MINUTE - (Date.now() % MINUTE) + 50));
    const answers = await Promise.all(Array.from({ length: 24 }, (_unused, index) => chat(index % 2 === 0 ? a : b, key)));
    expect(statuses(answers)).toEqual({ 200: 6, 429: 18 });
  });

  it('admit exactly the concurrency limit between them, and free the slots when done', async () => {
    const { key } = await newKey({ concurrency: 3 });
    const answers = await Promise.all(Array.from({ length: 12 }, (_unused, index) => chat(index % 2 === 0 ? a : b, key, 'pair-slow')));
    expect(statuses(answers)).toEqual({ 200: 3, 429: 9 });
    const again = await Promise.all([chat(a, key), chat(b, key), chat(a, key)]);
    expect(statuses(again)).toEqual({ 200: 3 });
  });

  it('see a key revoked through the other instance at once (pushed, not its 30 s cache)', async () => {
    const { key, keyId } = await newKey({});
    expect((await chat(b, key)).status).toBe(200);
    expect((await chat(a, key)).status).toBe(200);
    expect((await admin(a, 'PATCH', `/admin/keys/${keyId}`, { status: 'revoked' })).status).toBe(200);
    const revokedAt = Date.now();
    let answer = await chat(b, key);
    while (answer.status === 200 && Date.now() - revokedAt < 10_000) answer = await chat(b, key);
    expect(answer.status, answer.text).toBe(401);
    expect(Date.now() - revokedAt).toBeLessThan(PUSHED_WITHIN_MS);
  });

  it('route a model and channel added through the other instance at once (pushed, not the re-read)', async () => {
    const { key } = await newKey({});
    const model = `pair-new-${randomBytes(3).toString('hex')}`;
    expect((await chat(b, key, model)).status).toBe(400);
    expect((await admin(a, 'POST', '/admin/models', { id: model, pricing: { input_per_mtok: 1, output_per_mtok: 1 } })).status).toBe(201);
    expect((await admin(a, 'POST', '/admin/channels', { name: model, type: 'simulator', models: [model] })).status).toBe(201);
    const addedAt = Date.now();
    let answer = await chat(b, key, model);
    while (answer.status !== 200 && Date.now() - addedAt < 10_000) answer = await chat(b, key, model);
    expect(answer.status, answer.text).toBe(200);
    expect(Date.now() - addedAt).toBeLessThan(PUSHED_WITHIN_MS);
  });

  it('apply a tier change made through the other instance at once (pushed, not the re-read)', async () => {
    const { key, accountId } = await newKey({});
    expect((await admin(a, 'POST', '/admin/tiers', { name: `pair-${randomBytes(3).toString('hex')}`, rpm: 1 })).status).toBe(201);
    const tiers = await admin<{ data: Array<{ name: string }> }>(a, 'GET', '/admin/tiers?limit=200');
    const tier = tiers.body.data.find((entry) => entry.name.startsWith('pair-'))?.name ?? '';
    expect((await chat(b, key)).status).toBe(200);
    if (Date.now() % MINUTE > MINUTE - PUSHED_WITHIN_MS - 1000) await new Promise((resolve) => setTimeout(resolve, MINUTE - (Date.now() % MINUTE) + 50));
    expect((await admin(a, 'PATCH', `/admin/accounts/${accountId}`, { tier })).status).toBe(200);
    const changedAt = Date.now();
    let refusals = 0;
    while (refusals === 0 && Date.now() - changedAt < PUSHED_WITHIN_MS) {
      if ((await chat(b, key)).status === 429) refusals += 1;
    }
    expect(refusals).toBe(1);
    expect(Date.now() - changedAt).toBeLessThan(PUSHED_WITHIN_MS);
  });

  it('get back the concurrency slot of a gateway killed in the middle of a stream, after the lease TTL', async () => {
    const { key } = await newKey({ concurrency: 1 });
    const response = await fetch(`${b.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'pair-stream', stream: true, messages: [{ role: 'user', content: 'a long story' }] }),
    });
    expect(response.status).toBe(200);
    const reader = response.body?.getReader();
    expect((await reader?.read())?.done).toBe(false);
    // Held across the lease TTL: B renews it while the stream is open.
    await new Promise((resolve) => setTimeout(resolve, LEASE_SECONDS * 1000 + 300));
    expect((await chat(a, key)).status).toBe(429);

    b.process.kill();
    await b.process.exited;
    await reader?.cancel().catch(() => undefined);
    const killedAt = Date.now();
    await waitUntil(async () => (await chat(a, key)).status === 200, 5000, 'the slot of the killed gateway');
    expect(Date.now() - killedAt).toBeLessThan(LEASE_SECONDS * 1000 + 1000);
  });
});
