/**
 * Issue 6's property: hundreds of concurrent requests of random cost against a small balance, through one and
 * through two `unigate serve` processes on one database (SQLite, or PostgreSQL with TEST_DATABASE_URL). Whatever the
 * interleaving: the sum of charges never exceeds the funds, no balance goes negative, the ledger sums to the
 * balance (the ledger check passes), and every request has exactly one settled charge (answered) or none (refused).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../admin/helpers.js';
import { killAll } from '../cli/cli-process.js';
import { ledgerEntries, nano, startServeCluster, type ServeCluster } from '../serve-cluster.js';

const MODEL = 'spend-model';
const YAML = [
  'models:',
  // One token costs exactly 0.001 USD, in and out.
  `  - { id: ${MODEL}, pricing: { input_per_mtok: 1000, output_per_mtok: 1000 } }`,
  'channels:',
  `  - { name: spend-sim, type: simulator, models: [${MODEL}], settings: { output_tokens: 30, latency_ms: 40 } }`,
];
const FUNDS_USD = 0.4;

interface Outcome {
  status: number;
  requestId: string | null;
  code: string | null;
  cost: string | null;
}

const requestArbitrary = fc.record({
  maxTokens: fc.integer({ min: 1, max: 60 }),
  words: fc.integer({ min: 1, max: 20 }),
  stream: fc.boolean(),
});

async function send(url: string, key: string, request: { maxTokens: number; words: number; stream: boolean }): Promise<Outcome> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: MODEL,
      messages: [{ role: 'user', content: Array.from({ length: request.words }, (_, index) => `word${index}`).join(' ') }],
      max_tokens: request.maxTokens,
      ...(request.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  let code: string | null = null;
  if (response.status !== 200) code = (JSON.parse(text) as { error?: { code?: string } }).error?.code ?? null;
  return { status: response.status, requestId: response.headers.get('x-request-id'), code, cost: response.headers.get('x-request-cost-usd') };
}

async function runScenario(cluster: ServeCluster, requests: Array<{ maxTokens: number; words: number; stream: boolean }>): Promise<{ answered: number; refused: number }> {
  const account = await cluster.admin<{ id: string }>('POST', '/admin/accounts', { email: `spend-${Math.random().toString(36).slice(2)}@example.com` });
  expect(account.status, account.text).toBe(201);
  const accountId = account.body.id;
  expect((await cluster.admin('POST', `/admin/accounts/${accountId}/credits`, { amount_usd: FUNDS_USD })).status).toBe(200);
  const key = await cluster.admin<{ key: string }>('POST', `/admin/accounts/${accountId}/keys`, {});
  expect(key.status).toBe(201);

  const outcomes = await Promise.all(requests.map((request, index) => {
    const instance = cluster.instances[index % cluster.instances.length];
    if (instance === undefined) throw new Error('no instance');
    return send(instance.url, key.body.key, request);
  }));

  // Every instance writes what it has queued (the check flushes the instance it is asked on).
  for (let index = 0; index < cluster.instances.length; index += 1) {
    const check = await cluster.admin<{ ok: boolean; problems: unknown[] }>('GET', `/admin/ledger/check?account_id=${accountId}`, undefined, index);
    expect(check.status, check.text).toBe(200);
    expect(check.body.problems).toEqual([]);
    expect(check.body.ok).toBe(true);
  }

  const answered = outcomes.filter((outcome) => outcome.status === 200);
  const refused = outcomes.filter((outcome) => outcome.status !== 200);
  for (const outcome of refused) expect([outcome.status, outcome.code]).toEqual([402, 'insufficient_balance']);

  const entries = await ledgerEntries(cluster, accountId);
  const usage = entries.filter((entry) => entry.kind === 'usage');
  const charged = usage.reduce((total, entry) => total - nano(entry.amount_usd), 0n);
  const balance = (await cluster.admin<{ balance_usd: number }>('GET', `/admin/accounts/${accountId}`)).body.balance_usd;
  expect(charged).toBeLessThanOrEqual(nano(FUNDS_USD));
  expect(nano(balance)).toBeGreaterThanOrEqual(0n);
  expect(nano(balance)).toBe(entries.reduce((total, entry) => total + nano(entry.amount_usd), 0n));

  // Exactly one settled charge per answered request, none for a refused one.
  const chargedRequests = usage.map((entry) => entry.request_id);
  expect(new Set(chargedRequests).size).toBe(chargedRequests.length);
  expect(new Set(chargedRequests)).toEqual(new Set(answered.map((outcome) => outcome.requestId)));
  // Non-streamed answers carry their cost; it is what the ledger charged for them.
  const byRequest = new Map(usage.map((entry) => [entry.request_id, -nano(entry.amount_usd)]));
  for (const outcome of answered) {
    if (outcome.cost !== null) expect(byRequest.get(outcome.requestId)).toBe(nano(Number(outcome.cost)));
  }

  // Idle leases go back within seconds: nothing stays held for the account.
  const deadline = Date.now() + 10_000;
  let holds: unknown[] = [];
  do {
    holds = (await cluster.admin<{ data: unknown[] }>('GET', `/admin/money/holds?account_id=${accountId}`)).body.data;
    if (holds.length === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  } while (Date.now() < deadline);
  expect(holds).toEqual([]);
  return { answered: answered.length, refused: refused.length };
}

describe.each([1, 2])('concurrent spend against a small balance, %i gateway instance(s)', (count) => {
  let cluster: ServeCluster;

  beforeAll(async () => {
    cluster = await startServeCluster(count, YAML);
  }, 60_000);

  afterAll(async () => {
    killAll();
    await cluster?.close();
  });

  it('never spends more than the funds; the books balance; one charge per answered request', async () => {
    const seen = { answered: 0, refused: 0 };
    await fc.assert(fc.asyncProperty(fc.array(requestArbitrary, { minLength: 150, maxLength: 250 }), async (requests) => {
      const result = await runScenario(cluster, requests);
      seen.answered += result.answered;
      seen.refused += result.refused;
    }), { numRuns: 3, endOnFailure: true });
    // The scenario is meaningful: funds ran out (refusals) after real spending.
    expect(seen.answered).toBeGreaterThan(5);
    expect(seen.refused).toBeGreaterThan(100);
    expect((await call(cluster.instances[0]?.url ?? '', 'GET', '/api/status')).status).toBe(200);
  }, 120_000);

  it('a key\'s daily budget holds the same way: never exceeded, refusals are quota_exhausted, the books balance', async () => {
    const budgetUsd = 0.2;
    const account = await cluster.admin<{ id: string }>('POST', '/admin/accounts', { email: `budget-${Math.random().toString(36).slice(2)}@example.com` });
    const accountId = account.body.id;
    expect((await cluster.admin('POST', `/admin/accounts/${accountId}/credits`, { amount_usd: 10 })).status).toBe(200);
    const key = await cluster.admin<{ id: string; key: string }>('POST', `/admin/accounts/${accountId}/keys`, { budget: { period: 'day', limit_usd: budgetUsd } });
    expect(key.status, key.text).toBe(201);
    const requests = fc.sample(requestArbitrary, { numRuns: 150, seed: 7 });
    const outcomes = await Promise.all(requests.map((request, index) => send((cluster.instances[index % cluster.instances.length] ?? cluster.instances[0])?.url ?? '', key.body.key, request)));
    for (let index = 0; index < cluster.instances.length; index += 1) {
      const check = await cluster.admin<{ problems: unknown[] }>('GET', `/admin/ledger/check?account_id=${accountId}`, undefined, index);
      expect(check.body.problems).toEqual([]);
    }
    const refused = outcomes.filter((outcome) => outcome.status !== 200);
    for (const outcome of refused) expect([outcome.status, outcome.code]).toEqual([429, 'quota_exhausted']);
    expect(refused.length).toBeGreaterThan(50);
    const charged = (await ledgerEntries(cluster, accountId)).filter((entry) => entry.kind === 'usage').reduce((total, entry) => total - nano(entry.amount_usd), 0n);
    expect(charged).toBeGreaterThan(0n);
    expect(charged).toBeLessThanOrEqual(nano(budgetUsd));
    const view = await cluster.admin<{ budget: { spent_usd: number } }>('GET', `/admin/keys/${key.body.id}`);
    expect(nano(view.body.budget.spent_usd)).toBe(charged);
  }, 120_000);
});
