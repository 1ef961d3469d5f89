/**
 * A project's guardrails across processes: two `unigate serve` processes on one database and one Redis (REDIS_URL
 * from TEST_REDIS_URL): a policy bound to a project through one instance refuses the project's keys on the other
 * within a second (pub/sub, not the minute the policy book otherwise trusts its snapshot), and unbinding it through
 * the first lets them through on the second as quickly. Needs the build (`npx tsc -p tsconfig.build.json`).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisFixture, TEST_REDIS_URL, testKeyPrefix } from '../../unit/limits/redis-test-support.js';
import { call, type HttpAnswer } from '../admin/helpers.js';
import { killAll } from '../cli/cli-process.js';
import { startServeCluster, type ServeCluster, type ServeInstance as Instance } from '../serve-cluster.js';

describe.skipIf(TEST_REDIS_URL === undefined)('project guardrails across two gateway processes', () => {
  const redis = new RedisFixture(TEST_REDIS_URL ?? '', testKeyPrefix());
  let cluster: ServeCluster;
  let a: Instance;
  let b: Instance;

  beforeAll(async () => {
    cluster = await startServeCluster(2, [
      'models:',
      '  - { id: guarded-pair, pricing: { input_per_mtok: 1, output_per_mtok: 1 } }',
      'channels:',
      '  - { name: guarded-pair, type: simulator, models: [guarded-pair], settings: { output_tokens: 4 } }',
    ], { REDIS_URL: TEST_REDIS_URL ?? '', REDIS_KEY_PREFIX: redis.prefix });
    [a, b] = cluster.instances as [Instance, Instance];
  }, 60_000);

  afterAll(async () => {
    killAll();
    await cluster?.close();
    await redis.cleanUp();
  });

  const admin = <T = Record<string, unknown>>(instance: Instance, method: string, route: string, body?: unknown): Promise<HttpAnswer<T>> =>
    cluster.admin<T>(method, route, body, cluster.instances.indexOf(instance));

  const chat = (instance: Instance, key: string): Promise<HttpAnswer<{ error?: { code?: string } }>> =>
    call(instance.url, 'POST', '/v1/chat/completions', { token: key, body: { model: 'guarded-pair', messages: [{ role: 'user', content: 'a trip to Zanzibar' }] } });

  /** Asks instance B until the answer's status is `status`, and how long that took after the change. */
  async function untilStatus(key: string, status: number, since: number): Promise<{ answer: HttpAnswer<{ error?: { code?: string } }>; after: number }> {
    let answer = await chat(b, key);
    while (answer.status !== status && Date.now() - since < 5000) answer = await chat(b, key);
    return { answer, after: Date.now() - since };
  }

  it('binds and unbinds a project\'s policy through one instance, seen by the other within a second', async () => {
    const account = await admin<{ id: string }>(a, 'POST', '/admin/accounts', { email: `guard-${randomBytes(5).toString('hex')}@example.com` });
    expect(account.status, account.text).toBe(201);
    expect((await admin(a, 'POST', `/admin/accounts/${account.body.id}/credits`, { amount_usd: 10 })).status).toBe(200);
    expect((await admin(a, 'POST', '/admin/guardrails', { name: 'no-zanzibar', kind: 'deny_list', mode: 'block', applies_to: 'input', settings: { words: ['zanzibar'] } })).status).toBe(201);
    const project = await admin<{ id: string }>(a, 'POST', `/admin/accounts/${account.body.id}/projects`, { name: 'pair' });
    const key = await admin<{ key: string }>(a, 'POST', `/admin/accounts/${account.body.id}/keys`, { name: 'pair key', project_id: project.body.id });
    expect(key.status, key.text).toBe(201);
    // B has read the policy book (no bindings yet) and trusts it for a minute unless told.
    expect((await chat(b, key.body.key)).status).toBe(200);

    expect((await admin(a, 'PATCH', `/admin/accounts/${account.body.id}/projects/${project.body.id}`, { guardrails: ['no-zanzibar'] })).status).toBe(200);
    const bound = await untilStatus(key.body.key, 400, Date.now());
    expect(bound.answer.status, bound.answer.text).toBe(400);
    expect(bound.answer.body.error?.code).toBe('guardrail_blocked');
    expect(bound.after).toBeLessThan(1000);

    expect((await admin(a, 'PATCH', `/admin/accounts/${account.body.id}/projects/${project.body.id}`, { guardrails: [] })).status).toBe(200);
    const unbound = await untilStatus(key.body.key, 200, Date.now());
    expect(unbound.answer.status, unbound.answer.text).toBe(200);
    expect(unbound.after).toBeLessThan(1000);
  });
});
