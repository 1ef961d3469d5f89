/**
 * Projects over the wire, through one and through two `unigate serve` processes on one database (SQLite, or
 * PostgreSQL with TEST_DATABASE_URL): a project's period budget and quota cap are reserved like a key's — concurrent
 * requests of several keys of the project on every instance never spend past them, the refusal is 429
 * `quota_exhausted` naming the project — its spend is the sum of its keys' and rolls up into the account's ledger;
 * its model allowlist and RPM apply to its keys; an account that never makes a project sees only the default one.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAll } from '../cli/cli-process.js';
import { ledgerEntries, nano, startServeCluster, type ServeCluster } from '../serve-cluster.js';

const MODEL = 'project-model';
const OTHER_MODEL = 'project-other-model';
const YAML = [
  'models:',
  // One token costs exactly 0.001 USD, in and out.
  `  - { id: ${MODEL}, pricing: { input_per_mtok: 1000, output_per_mtok: 1000 } }`,
  `  - { id: ${OTHER_MODEL}, pricing: { input_per_mtok: 1000, output_per_mtok: 1000 } }`,
  'channels:',
  `  - { name: project-sim, type: simulator, models: [${MODEL}, ${OTHER_MODEL}], settings: { output_tokens: 30, latency_ms: 40 } }`,
];

const REDIS_URL = process.env.TEST_REDIS_URL;

interface Outcome {
  status: number;
  code: string | null;
  message: string | null;
  dimension: string | null;
}

const requestArbitrary = fc.record({
  maxTokens: fc.integer({ min: 1, max: 60 }),
  words: fc.integer({ min: 1, max: 20 }),
  stream: fc.boolean(),
});

async function send(url: string, key: string, request: { maxTokens: number; words: number; stream: boolean }, model = MODEL): Promise<Outcome> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model,
      messages: [{ role: 'user', content: Array.from({ length: request.words }, (_, index) => `word${index}`).join(' ') }],
      max_tokens: request.maxTokens,
      ...(request.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  const error = response.status === 200 ? null : (JSON.parse(text) as { error?: { code?: string; message?: string } }).error;
  return { status: response.status, code: error?.code ?? null, message: error?.message ?? null, dimension: response.headers.get('x-ratelimit-dimension') };
}

interface ProjectJson {
  id: string;
  spent_usd: number;
  status: string;
  key_count: number;
  default: boolean;
  budget: { spent_usd: number; limit_usd: number } | null;
}

describe.each([1, 2])('projects, %i gateway instance(s)', (count) => {
  let cluster: ServeCluster;

  beforeAll(async () => {
    // With TEST_REDIS_URL the instances share their rate windows through Redis (the RPM test then spreads its requests).
    cluster = await startServeCluster(count, YAML, REDIS_URL === undefined ? {} : { REDIS_URL });
  }, 60_000);

  afterAll(async () => {
    killAll();
    await cluster?.close();
  });

  async function accountWithFunds(usd: number): Promise<string> {
    const account = await cluster.admin<{ id: string }>('POST', '/admin/accounts', { email: `project-${Math.random().toString(36).slice(2)}@example.com` });
    expect(account.status, account.text).toBe(201);
    expect((await cluster.admin('POST', `/admin/accounts/${account.body.id}/credits`, { amount_usd: usd })).status).toBe(200);
    return account.body.id;
  }

  const urlOf = (index: number): string => (cluster.instances[index % cluster.instances.length] ?? cluster.instances[0])?.url ?? '';

  /** Sends `requests` spread over the instances and over `keys`, all at once. */
  function sendAll(keys: string[], requests: Array<{ maxTokens: number; words: number; stream: boolean }>): Promise<Outcome[]> {
    return Promise.all(requests.map((request, index) => send(urlOf(index), keys[index % keys.length] ?? '', request)));
  }

  async function expectBooksBalance(accountId: string): Promise<void> {
    for (let index = 0; index < cluster.instances.length; index += 1) {
      const check = await cluster.admin<{ problems: unknown[] }>('GET', `/admin/ledger/check?account_id=${accountId}`, undefined, index);
      expect(check.status, check.text).toBe(200);
      expect(check.body.problems).toEqual([]);
    }
  }

  for (const limit of ['budget', 'cap'] as const) {
    it(`a project's ${limit === 'budget' ? 'daily budget' : 'quota cap'} is never passed by its keys on every instance; spend rolls up to the account`, async () => {
      const limitUsd = 0.2;
      const accountId = await accountWithFunds(10);
      const project = await cluster.admin<ProjectJson>('POST', `/admin/accounts/${accountId}/projects`, {
        name: `limited by ${limit}`,
        ...(limit === 'budget' ? { budget: { period: 'day', limit_usd: limitUsd } } : { quota_usd: limitUsd }),
      });
      expect(project.status, project.text).toBe(201);
      expect(project.body.id).toMatch(/^prj_/);
      // Three keys of the project with no limits of their own, and one key of the default project.
      const keys = await Promise.all([0, 1, 2].map(() => cluster.admin<{ id: string; key: string; project_id: string | null }>('POST', `/admin/accounts/${accountId}/keys`, { project_id: project.body.id })));
      for (const key of keys) expect([key.status, key.body.project_id]).toEqual([201, project.body.id]);
      const outside = await cluster.admin<{ id: string; key: string; project_id: string | null }>('POST', `/admin/accounts/${accountId}/keys`, {});
      expect(outside.body.project_id).toBeNull();

      const outcomes = await sendAll(keys.map((key) => key.body.key), fc.sample(requestArbitrary, { numRuns: 150, seed: 11 }));
      await expectBooksBalance(accountId);
      const refused = outcomes.filter((outcome) => outcome.status !== 200);
      for (const outcome of refused) expect([outcome.status, outcome.code]).toEqual([429, 'quota_exhausted']);
      expect(refused.length).toBeGreaterThan(50);
      const named = limit === 'budget' ? 'project\'s budget' : 'project\'s quota cap';
      expect(refused.filter((outcome) => !(outcome.message ?? '').includes(named))).toEqual([]);

      const usage = (await ledgerEntries(cluster, accountId)).filter((entry) => entry.kind === 'usage');
      const charged = usage.reduce((total, entry) => total - nano(entry.amount_usd), 0n);
      expect(charged).toBeGreaterThan(0n);
      expect(charged).toBeLessThanOrEqual(nano(limitUsd));

      // The project's spend is its keys' spend, which is what the account's ledger charged.
      const view = await cluster.admin<ProjectJson>('GET', `/admin/accounts/${accountId}/projects/${project.body.id}`);
      expect(nano(view.body.spent_usd)).toBe(charged);
      if (limit === 'budget') expect(nano(view.body.budget?.spent_usd ?? -1)).toBe(charged);
      let keysSpent = 0n;
      for (const key of keys) keysSpent += nano((await cluster.admin<{ spent_usd: number }>('GET', `/admin/keys/${key.body.id}`)).body.spent_usd);
      expect(keysSpent).toBe(charged);
      const balance = (await cluster.admin<{ balance_usd: number }>('GET', `/admin/accounts/${accountId}`)).body.balance_usd;
      expect(nano(balance)).toBe(nano(10) - charged);

      // The key outside the project is not limited by it: the account still pays for it.
      expect((await send(urlOf(0), outside.body.key, { maxTokens: 5, words: 2, stream: false })).status).toBe(200);
      const list = await cluster.admin<{ data: ProjectJson[] }>('GET', `/admin/accounts/${accountId}/projects`);
      expect(list.body.data.map((entry) => [entry.id, entry.default, entry.key_count])).toEqual([['default', true, 1], [project.body.id, false, 3]]);
      expect(nano(list.body.data[0]?.spent_usd ?? 0)).toBeGreaterThan(0n);
    }, 120_000);
  }

  it('a project\'s model allowlist and RPM apply to each of its keys; a change takes effect on every instance', async () => {
    const accountId = await accountWithFunds(10);
    const project = await cluster.admin<ProjectJson>('POST', `/admin/accounts/${accountId}/projects`, { name: 'allowlisted', allowed_models: [MODEL], rpm: 3 });
    expect(project.status, project.text).toBe(201);
    const key = await cluster.admin<{ key: string }>('POST', `/admin/accounts/${accountId}/keys`, { project_id: project.body.id });
    const small = { maxTokens: 2, words: 1, stream: false };
    const denied = await send(urlOf(0), key.body.key, small, OTHER_MODEL);
    expect([denied.status, denied.code]).toEqual([403, 'model_not_allowed']);
    const answers: Outcome[] = [];
    // Rate windows are per instance without Redis, shared by every instance with it.
    for (let index = 0; index < 4; index += 1) answers.push(await send(urlOf(REDIS_URL === undefined ? 0 : index), key.body.key, small));
    expect(answers.slice(0, 3).map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect([answers[3]?.status, answers[3]?.dimension]).toEqual([429, 'project-rpm']);

    // Opened on the last instance, the allowlist change reaches the first instance's cached key.
    const patched = await cluster.admin('PATCH', `/admin/accounts/${accountId}/projects/${project.body.id}`, { allowed_models: null, rpm: null }, count - 1);
    expect(patched.status, patched.text).toBe(200);
    const deadline = Date.now() + 3000;
    let opened = await send(urlOf(0), key.body.key, small, OTHER_MODEL);
    while (opened.status !== 200 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      opened = await send(urlOf(0), key.body.key, small, OTHER_MODEL);
    }
    expect(opened.status).toBe(200);
  }, 60_000);

  it('projects of another account are unknown; a project with live keys is not deleted; input is validated', async () => {
    const mine = await accountWithFunds(1);
    const theirs = await accountWithFunds(1);
    const project = await cluster.admin<ProjectJson>('POST', `/admin/accounts/${theirs}/projects`, { name: 'theirs' });
    expect((await cluster.admin('GET', `/admin/accounts/${mine}/projects/${project.body.id}`)).status).toBe(404);
    expect((await cluster.admin('PATCH', `/admin/accounts/${mine}/projects/${project.body.id}`, { name: 'stolen' })).status).toBe(404);
    expect((await cluster.admin('DELETE', `/admin/accounts/${mine}/projects/${project.body.id}`)).status).toBe(404);
    const foreignKey = await cluster.admin<{ error: { param: string } }>('POST', `/admin/accounts/${mine}/keys`, { project_id: project.body.id });
    expect([foreignKey.status, foreignKey.body.error.param]).toEqual([400, 'project_id']);
    expect((await cluster.admin('POST', `/admin/accounts/${mine}/projects`, { name: '' })).status).toBe(400);
    expect((await cluster.admin('POST', `/admin/accounts/${mine}/projects`, { name: 'x', quota_usd: -1 })).status).toBe(400);
    expect((await cluster.admin('POST', `/admin/accounts/${mine}/projects`, { name: 'x', surprise: true })).status).toBe(400);

    const key = await cluster.admin<{ id: string }>('POST', `/admin/accounts/${theirs}/keys`, { project_id: project.body.id });
    expect((await cluster.admin('DELETE', `/admin/accounts/${theirs}/projects/${project.body.id}`)).status).toBe(409);
    // Moved to the default project, the key no longer holds the project.
    const moved = await cluster.admin<{ project_id: string | null }>('PATCH', `/admin/keys/${key.body.id}`, { project_id: 'default' });
    expect([moved.status, moved.body.project_id]).toEqual([200, null]);
    expect((await cluster.admin('DELETE', `/admin/accounts/${theirs}/projects/${project.body.id}`)).status).toBe(200);
    expect((await cluster.admin('GET', `/admin/accounts/${theirs}/projects/${project.body.id}`)).status).toBe(404);
  }, 60_000);

  it('an account that never makes a project has only the default project, holding all its keys', async () => {
    const accountId = await accountWithFunds(1);
    const key = await cluster.admin<{ key: string; project_id: string | null }>('POST', `/admin/accounts/${accountId}/keys`, {});
    expect(key.body.project_id).toBeNull();
    expect((await send(urlOf(0), key.body.key, { maxTokens: 2, words: 1, stream: false })).status).toBe(200);
    const list = await cluster.admin<{ data: ProjectJson[] }>('GET', `/admin/accounts/${accountId}/projects`);
    expect(list.body.data.map((entry) => [entry.id, entry.key_count])).toEqual([['default', 1]]);
  }, 60_000);
});
