/**
 * End customers over the wire, through two `unigate serve` processes sharing one database (SQLite, or PostgreSQL with
 * TEST_DATABASE_URL) and one Redis: the account's budget for every customer refuses the request that would pass it
 * whichever instance it reaches, naming the customer and the budget; concurrent requests of one customer through
 * both instances never spend past its budget; a customer's RPM is shared by both instances, with its own headers; a
 * customer's own rule replaces the default on the other instance at once; a customer's TPM and concurrency (set
 * through the flat `PUT /admin/accounts/:id/customers/:customer`) are shared too; and the reports by customer and by tag
 * show each one's spend to the nano-dollar of the costs the callers were told.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisFixture, TEST_REDIS_URL, testKeyPrefix } from '../../unit/limits/redis-test-support.js';
import type { HttpAnswer } from '../admin/helpers.js';
import { killAll } from '../cli/cli-process.js';
import { startServeCluster, type ServeCluster, type ServeInstance as Instance } from '../serve-cluster.js';
import { MINUTE } from './limits-support.js';

const MODEL = 'customer-model';
/** Answers after 1.5 s, so requests overlap. */
const SLOW_MODEL = 'customer-slow-model';
const NANO_PER_USD = 1_000_000_000n;

interface Answer {
  status: number;
  cost: bigint;
  code: string | null;
  message: string;
  headers: Headers;
}

/** Decimal USD (the cost header) as nano-USD, exactly. */
function nanoOf(decimal: string): bigint {
  const [whole = '0', fraction = ''] = decimal.split('.');
  return BigInt(whole) * NANO_PER_USD + BigInt(fraction.padEnd(9, '0').slice(0, 9));
}

function usd(nano: bigint): string {
  const whole = nano / NANO_PER_USD;
  return `${whole}.${(nano % NANO_PER_USD).toString().padStart(9, '0')}`;
}

describe.skipIf(TEST_REDIS_URL === undefined)('end customers across two gateway processes', () => {
  const redis = new RedisFixture(TEST_REDIS_URL ?? '', testKeyPrefix());
  let cluster: ServeCluster;
  let a: Instance;
  let b: Instance;
  /** What one request of `send` costs (measured once: prompt and output are fixed). */
  let unit = 0n;

  beforeAll(async () => {
    cluster = await startServeCluster(2, [
      'models:',
      // One token costs 0.001 USD, in and out.
      `  - { id: ${MODEL}, pricing: { input_per_mtok: 1000, output_per_mtok: 1000 } }`,
      `  - { id: ${SLOW_MODEL}, pricing: { input_per_mtok: 1000, output_per_mtok: 1000 } }`,
      'channels:',
      `  - { name: customer-sim, type: simulator, models: [${MODEL}], settings: { output_tokens: 10 } }`,
      `  - { name: customer-slow-sim, type: simulator, models: [${SLOW_MODEL}], settings: { output_tokens: 10, latency_ms: 1500 } }`,
    ], { REDIS_URL: TEST_REDIS_URL ?? '', REDIS_KEY_PREFIX: redis.prefix });
    [a, b] = cluster.instances as [Instance, Instance];
  }, 90_000);

  afterAll(async () => {
    killAll();
    await cluster?.close();
    await redis.cleanUp();
  });

  const admin = <T = Record<string, unknown>>(method: string, route: string, body?: unknown, instance = 0): Promise<HttpAnswer<T>> => cluster.admin<T>(method, route, body, instance);

  async function newAccount(): Promise<{ accountId: string; key: string }> {
    const account = await admin<{ id: string }>('POST', '/admin/accounts', { email: `customers-${randomBytes(5).toString('hex')}@example.com` });
    expect(account.status, account.text).toBe(201);
    expect((await admin('POST', `/admin/accounts/${account.body.id}/credits`, { amount_usd: 20 })).status).toBe(200);
    const key = await admin<{ key: string }>('POST', `/admin/accounts/${account.body.id}/keys`, {});
    expect(key.status, key.text).toBe(201);
    return { accountId: account.body.id, key: key.body.key };
  }

  /** One chat request naming `customer` as OpenAI's `user` (and `extra` body fields or headers). */
  async function send(instance: Instance, key: string, customer: string | null, extra: { body?: Record<string, unknown>; headers?: Record<string, string> } = {}): Promise<Answer> {
    const response = await fetch(`${instance.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...extra.headers },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'count to ten' }], max_tokens: 10, ...(customer === null ? {} : { user: customer }), ...extra.body }),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    const error = response.status === 200 ? null : (JSON.parse(text) as { error?: { code?: string; message?: string } }).error;
    return { status: response.status, cost: nanoOf(response.headers.get('x-request-cost-usd') ?? '0'), code: error?.code ?? null, message: error?.message ?? '', headers: response.headers };
  }

  async function measuredUnit(key: string): Promise<bigint> {
    if (unit > 0n) return unit;
    const probe = await send(a, key, null);
    expect(probe.status).toBe(200);
    unit = probe.cost;
    expect(unit).toBeGreaterThan(0n);
    return unit;
  }

  it('refuse the request that would pass a customer\'s daily budget, on either instance, naming the customer and the budget', async () => {
    const { accountId, key } = await newAccount();
    const cost = await measuredUnit(key);
    // Room for three requests and half of a fourth.
    const budget = cost * 3n + cost / 2n;
    const rule = await admin<{ budget: { limit_usd: number } }>('PUT', `/admin/accounts/${accountId}/customer-rules`, { customer: null, budget: { period: 'day', limit_usd: usd(budget) } });
    expect(rule.status, rule.text).toBe(201);
    const answers: Answer[] = [];
    for (let index = 0; index < 4; index += 1) answers.push(await send(index % 2 === 0 ? a : b, key, 'acme'));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 429]);
    const refusal = answers[3] as Answer;
    expect(refusal.code).toBe('quota_exhausted');
    expect(refusal.message).toContain("end customer 'acme'");
    expect(refusal.message).toContain(`${Number(usd(budget))} USD a day`);
    expect(Number(refusal.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another customer has a budget of its own; a request naming none is not limited by any.
    expect((await send(b, key, 'globex')).status).toBe(200);
    expect((await send(a, key, null)).status).toBe(200);

    // A rule of acme's own replaces the default one, on the other instance before the answer (Redis pub/sub).
    expect((await admin('PUT', `/admin/accounts/${accountId}/customer-rules`, { customer: 'acme', budget: { period: 'month', limit_usd: '50' } }, 0)).status).toBe(201);
    expect((await send(b, key, 'acme')).status).toBe(200);
    const rules = await admin<{ data: Array<{ customer: string | null; budget: { spent_usd?: number; limit_usd: number; period: string } | null }> }>('GET', `/admin/accounts/${accountId}/customer-rules`, undefined, 1);
    expect(rules.status).toBe(200);
    const acme = rules.body.data.find((entry) => entry.customer === 'acme');
    // Its month started with this rule's first charge: the month's spend is the one request since (the day's budget
    // kept the day's spend under the default rule's period).
    expect(acme?.budget).toMatchObject({ period: 'month', limit_usd: 50 });
    expect(nanoOf(String(acme?.budget?.spent_usd ?? 0))).toBeGreaterThan(0n);
  }, 60_000);

  it('never let concurrent requests of one customer through both instances spend past its budget', async () => {
    const { accountId, key } = await newAccount();
    const cost = await measuredUnit(key);
    const budget = cost * 5n + cost / 2n;
    expect((await admin('PUT', `/admin/accounts/${accountId}/customer-rules`, { customer: 'burst', budget: { period: 'day', limit_usd: usd(budget) } })).status).toBe(201);
    const answers = await Promise.all(Array.from({ length: 20 }, (_unused, index) => send(index % 2 === 0 ? a : b, key, 'burst')));
    const answered = answers.filter((answer) => answer.status === 200);
    const refused = answers.filter((answer) => answer.status !== 200);
    // Each request holds exactly what it costs, so exactly five fit, whichever instance took them.
    expect(answered.length).toBe(5);
    expect(answered.reduce((sum, answer) => sum + answer.cost, 0n)).toBeLessThanOrEqual(budget);
    for (const answer of refused) {
      expect(answer.status).toBe(429);
      expect(answer.code).toBe('quota_exhausted');
      expect(answer.message).toContain("end customer 'burst'");
    }
  }, 60_000);

  it('share a customer\'s RPM between the instances, with the customer window\'s headers', async () => {
    const { accountId, key } = await newAccount();
    expect((await admin('PUT', `/admin/accounts/${accountId}/customer-rules`, { customer: null, rpm: 3 })).status).toBe(201);
    if (Date.now() % MINUTE > MINUTE - 3000) await new Promise((resolve) => setTimeout(resolve, MINUTE - (Date.now() % MINUTE) + 50));
    const answers = await Promise.all(Array.from({ length: 8 }, (_unused, index) => send(index % 2 === 0 ? a : b, key, 'rpm-customer')));
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(3);
    const refused = answers.filter((answer) => answer.status === 429);
    expect(refused).toHaveLength(5);
    for (const answer of refused) {
      expect(answer.code).toBe('rate_limit_exceeded');
      expect(answer.message).toContain("end customer 'rpm-customer' (3 requests a minute)");
      expect(answer.headers.get('x-ratelimit-customer-limit')).toBe('3');
      expect(answer.headers.get('x-ratelimit-customer-remaining')).toBe('0');
    }
    const admitted = answers.find((answer) => answer.status === 200) as Answer;
    expect(admitted.headers.get('x-ratelimit-customer-limit')).toBe('3');
    // Another customer has its own window.
    expect((await send(b, key, 'other-customer')).status).toBe(200);
  }, 60_000);

  it('share a customer\'s TPM between the instances through the flat rule route, with the customer token window\'s headers', async () => {
    const { accountId, key } = await newAccount();
    const rule = await admin<Record<string, unknown>>('PUT', `/admin/accounts/${accountId}/customers/tpm-customer`, { tpm: 60 });
    expect(rule.status, rule.text).toBe(201);
    expect(rule.body).toMatchObject({ customer: 'tpm-customer', tpm: 60, rpm: null, concurrency: null, budget: null });
    if (Date.now() % MINUTE > MINUTE - 5000) await new Promise((resolve) => setTimeout(resolve, MINUTE - (Date.now() % MINUTE) + 50));
    const answers: Answer[] = [];
    for (let index = 0; index < 12 && answers.at(-1)?.status !== 429; index += 1) answers.push(await send(index % 2 === 0 ? a : b, key, 'tpm-customer'));
    const admitted = answers.filter((answer) => answer.status === 200);
    expect(admitted.length).toBeGreaterThan(0);
    expect(admitted[0]?.headers.get('x-ratelimit-customer-limit-tokens')).toBe('60');
    expect(Number(admitted[0]?.headers.get('x-ratelimit-customer-remaining-tokens'))).toBeLessThan(60);
    // The customer has no RPM rule: no request window headers of its own.
    expect(admitted[0]?.headers.get('x-ratelimit-customer-limit')).toBeNull();
    const refused = answers.at(-1) as Answer;
    expect(refused.status).toBe(429);
    expect(refused.code).toBe('rate_limit_exceeded');
    expect(refused.message).toContain("end customer 'tpm-customer' (60 tokens a minute)");
    expect(refused.headers.get('x-ratelimit-customer-limit-tokens')).toBe('60');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // The tokens of the requests let through stay within the window (each is charged its estimate, then its usage).
    const usage = await admin<{ data: Array<{ prompt_tokens: number; completion_tokens: number }> }>('GET', `/admin/usage?account_id=${accountId}&customer=tpm-customer`);
    expect(usage.body.data.reduce((sum, row) => sum + row.prompt_tokens + row.completion_tokens, 0)).toBeLessThanOrEqual(60);
    // Another customer, and a request naming none, are not in its window.
    expect((await send(a, key, 'other-customer')).status).toBe(200);
    expect((await send(b, key, null)).status).toBe(200);
  }, 60_000);

  it('limit a customer\'s requests in flight across the instances, naming the customer', async () => {
    const { accountId, key } = await newAccount();
    expect((await admin('PUT', `/admin/accounts/${accountId}/customers/*`, { concurrency: 2 })).status).toBe(201);
    const answers = await Promise.all(Array.from({ length: 6 }, (_unused, index) => send(index % 2 === 0 ? a : b, key, 'slowpoke', { body: { model: SLOW_MODEL } })));
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(2);
    for (const answer of answers.filter((candidate) => candidate.status !== 200)) {
      expect(answer.status).toBe(429);
      expect(answer.message).toContain("Too many concurrent requests for end customer 'slowpoke' (limit 2)");
    }
    // The slots are given back when the answers end.
    expect((await send(b, key, 'slowpoke', { body: { model: SLOW_MODEL } })).status).toBe(200);
    // The flat form checks its input: a period needs a budget, the customer must be printable.
    expect((await admin('PUT', `/admin/accounts/${accountId}/customers/x`, { period: 'day' })).status).toBe(400);
    expect((await admin('PUT', `/admin/accounts/${accountId}/customers/x`, { tpm: -1 })).status).toBe(400);
    expect((await admin('PUT', `/admin/accounts/${accountId}/customers/x`, { budget_usd: 1, nope: 1 })).status).toBe(400);
    expect((await admin('PUT', '/admin/accounts/acc_missing/customers/x', { rpm: 1 })).status).toBe(404);
    const monthly = await admin<{ budget: { period: string; limit_usd: number } }>('PUT', `/admin/accounts/${accountId}/customers/big%20co`, { budget_usd: '50' });
    expect(monthly.status, monthly.text).toBe(201);
    expect(monthly.body.budget).toMatchObject({ period: 'month', limit_usd: 50 });
  }, 60_000);

  it('report spend, tokens and requests by customer and by tag per day, to the nano-dollar the callers were told', async () => {
    const { accountId, key } = await newAccount();
    const sent: Array<{ customer: string; tags: string[]; answer: Answer }> = [];
    const record = (customer: string, tags: string[], answer: Answer): void => {
      expect(answer.status).toBe(200);
      sent.push({ customer, tags, answer });
    };
    record('acme', ['team=search', 'feature=summaries'], await send(a, key, 'acme', { headers: { 'x-gateway-tags': 'team=search,feature=summaries' } }));
    record('acme', ['team=search'], await send(b, key, 'acme', { body: { metadata: { team: 'search' } } }));
    record('globex', ['team=ads'], await send(b, key, null, { headers: { 'x-gateway-customer': 'globex', 'x-gateway-tags': 'team=ads' } }));
    // Anthropic's metadata.user_id names the customer on the Messages API.
    const messages = await fetch(`${a.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'count to ten' }], metadata: { user_id: 'globex' } }),
    });
    expect(messages.status, await messages.clone().text()).toBe(200);
    await messages.text();
    sent.push({ customer: 'globex', tags: [], answer: { status: 200, cost: nanoOf(messages.headers.get('x-request-cost-usd') ?? '0'), code: null, message: '', headers: messages.headers } });

    const expectedBy = (field: (entry: (typeof sent)[number]) => string[]): Map<string, { cost: bigint; requests: number }> => {
      const totals = new Map<string, { cost: bigint; requests: number }>();
      for (const entry of sent) {
        for (const value of field(entry)) {
          const total = totals.get(value) ?? { cost: 0n, requests: 0 };
          total.cost += entry.answer.cost;
          total.requests += 1;
          totals.set(value, total);
        }
      }
      return totals;
    };
    type Report = { data: Array<Record<string, unknown>>; totals: Array<Record<string, unknown> & { requests: number; cost_usd: number }> };
    // A report writes the usage rows its instance has queued: asking A first puts A's rows in B's answer.
    expect((await admin('GET', `/admin/reports/customers?account_id=${accountId}`, undefined, 0)).status).toBe(200);
    const customers = await admin<Report>('GET', `/admin/reports/customers?account_id=${accountId}`, undefined, 1);
    expect(customers.status, customers.text).toBe(200);
    for (const [customer, expected] of expectedBy((entry) => [entry.customer])) {
      const row = customers.body.totals.find((total) => total.customer === customer);
      expect(row?.requests).toBe(expected.requests);
      expect(nanoOf(String(row?.cost_usd))).toBe(expected.cost);
    }
    const tags = await admin<Report>('GET', `/admin/reports/tags?account_id=${accountId}`);
    expect(tags.status, tags.text).toBe(200);
    for (const [tag, expected] of expectedBy((entry) => entry.tags)) {
      const row = tags.body.totals.find((total) => total.tag === tag);
      expect(row?.requests, tag).toBe(expected.requests);
      expect(nanoOf(String(row?.cost_usd))).toBe(expected.cost);
    }
    expect(tags.body.totals.map((total) => total.tag).sort()).toEqual(['feature=summaries', 'team=ads', 'team=search']);
    // The CSV has the exact decimal cost per day and customer.
    const csv = await fetch(`${b.url}/admin/reports/customers?account_id=${accountId}&format=csv`, { headers: { authorization: `Bearer ${cluster.adminToken}` } });
    expect(csv.headers.get('content-type')).toContain('text/csv');
    const lines = (await csv.text()).trim().split('\r\n');
    expect(lines[0]).toBe('date,customer,requests,errors,input_tokens,output_tokens,cost_usd');
    const acmeLine = lines.find((line) => line.includes(',acme,'))?.split(',') ?? [];
    expect(nanoOf(acmeLine[6] ?? '')).toBe(expectedBy((entry) => [entry.customer]).get('acme')?.cost);
    // The usage rows keep the customer and tags (never the prompt).
    const usage = await admin<{ data: Array<{ customer: string | null; tags: Record<string, string> }> }>('GET', `/admin/usage?account_id=${accountId}&customer=acme`);
    expect(usage.body.data).toHaveLength(2);
    expect(usage.body.data.map((row) => row.tags.team)).toEqual(['search', 'search']);
    expect(JSON.stringify(usage.body)).not.toContain('count to ten');
  }, 60_000);

  it('refuse an over-long customer and malformed tags with the spec\'s 400, and another account\'s rules are not reachable', async () => {
    const { key } = await newAccount();
    const long = await send(a, key, 'x'.repeat(300));
    expect(long.status).toBe(400);
    expect(long.message).toContain('end customer of more than 256 characters');
    const badTags = await send(a, key, null, { headers: { 'x-gateway-tags': 'team=a=b' } });
    expect(badTags.status).toBe(400);
    expect((await admin('GET', '/admin/accounts/acc_missing/customer-rules')).status).toBe(404);
    expect((await admin('PUT', '/admin/accounts/acc_missing/customer-rules', { customer: 'x', rpm: 1 })).status).toBe(404);
    const { accountId } = await newAccount();
    const invalid = await admin<{ error: { code: string; param?: string } }>('PUT', `/admin/accounts/${accountId}/customer-rules`, { customer: 'x', budget: { period: 'year', limit_usd: 1 } });
    expect(invalid.status).toBe(400);
    expect((await admin('GET', '/admin/reports/projects')).status).toBe(404);
  }, 60_000);
});
