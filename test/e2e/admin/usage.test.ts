/** GET /admin/usage — metadata-only rows, filters, paging. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushWrites, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { addSimulatorModel, admin, call, chat, collectPages, expectError } from './helpers.js';

interface UsageRowJson {
  request_id: string;
  account_id: string;
  key_id: string;
  model: string | null;
  channel_id: string | null;
  stream: boolean;
  status: number;
  error_code: string | null;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost_usd: number;
  latency_ms: number;
  created_at: string;
}

const MODEL_A = 'usage-sim-a';
const MODEL_B = 'usage-sim-b';
/** Priced but served by no channel: calls answer 503 and are still logged. */
const MODEL_UNROUTED = 'usage-unrouted';
/** A unique marker inside every prompt: it must never show up in usage rows. */
const PROMPT_MARKER = 'PROMPT-MARKER-7f3e1b-confidential-text';

interface Call {
  requestId: string;
  accountId: string;
  keyId: string;
  model: string;
  status: number;
}

let gateway: TestGateway;
let alice: SeededAccount;
let aliceSecondKey: { id: string; key: string };
let bob: SeededAccount;
const calls: Call[] = [];
let startedAt: number;
let finishedAt: number;

async function record(account: SeededAccount | { accountId: string; keyId: string; key: string }, model: string, options: { stream?: boolean } = {}): Promise<Call> {
  const answer = await chat(gateway, account.key, model, { content: `${PROMPT_MARKER} please answer`, ...options });
  const requestId = answer.headers.get('x-request-id');
  expect(requestId, answer.text).toMatch(/\S+/);
  const entry = { requestId: requestId as string, accountId: account.accountId, keyId: account.keyId, model, status: answer.status };
  calls.push(entry);
  return entry;
}

beforeAll(async () => {
  gateway = await startTestGateway();
  // input 1 USD and output 2 USD per million tokens: cost in nano-USD is prompt*1000 + completion*2000.
  await addSimulatorModel(gateway, MODEL_A, { input_per_mtok: 1, output_per_mtok: 2 });
  await addSimulatorModel(gateway, MODEL_B, { input_per_mtok: 0.001, output_per_mtok: 0.001 });
  expect((await admin(gateway, 'POST', '/admin/models', { id: MODEL_UNROUTED, pricing: { input_per_mtok: 1 } })).status).toBe(201);
  alice = await seedAccount(gateway, { balanceUsd: 10 });
  const second = await admin<{ id: string; key: string }>(gateway, 'POST', `/admin/accounts/${alice.accountId}/keys`, { name: 'second' });
  aliceSecondKey = { id: second.body.id, key: second.body.key };
  bob = await seedAccount(gateway, { balanceUsd: 10 });

  startedAt = Date.now() - 1000;
  await record(alice, MODEL_A);
  await record(alice, MODEL_A);
  await record({ accountId: alice.accountId, keyId: aliceSecondKey.id, key: aliceSecondKey.key }, MODEL_B);
  await record(alice, MODEL_A, { stream: true });
  await record(bob, MODEL_A);
  await record(bob, MODEL_B);
  await record(bob, MODEL_UNROUTED);
  await record(alice, 'usage-no-such-model');
  finishedAt = Date.now() + 1000;
  await flushWrites(gateway);
});

afterAll(async () => {
  await gateway?.close();
});

async function usage(query: string): Promise<UsageRowJson[]> {
  const answer = await admin<{ object: string; data: UsageRowJson[]; has_more: boolean }>(gateway, 'GET', `/admin/usage${query}`);
  expect(answer.status, answer.text).toBe(200);
  expect(answer.body.object).toBe('list');
  return answer.body.data;
}

describe('usage rows', () => {
  it('the calls answered as expected (setup check)', () => {
    expect(calls.map((entry) => entry.status)).toEqual([200, 200, 200, 200, 200, 200, 503, 400]);
  });

  it('hold the metadata of each call, with request_id equal to the x-request-id header', async () => {
    const rows = await usage('?limit=200');
    const byId = new Map(rows.map((row) => [row.request_id, row]));
    for (const entry of calls.filter((item) => item.status === 200)) {
      const row = byId.get(entry.requestId);
      expect(row, entry.requestId).toBeDefined();
      if (row === undefined) continue;
      expect(row).toMatchObject({ account_id: entry.accountId, key_id: entry.keyId, model: entry.model, status: 200 });
      expect(row.prompt_tokens).toBeGreaterThan(0);
      expect(row.completion_tokens).toBeGreaterThan(0);
      expect(row.total_tokens).toBe(row.prompt_tokens + row.completion_tokens);
      expect(row.latency_ms).toBeGreaterThanOrEqual(0);
      expect(Number.isInteger(row.latency_ms)).toBe(true);
      expect(Number.isNaN(Date.parse(row.created_at))).toBe(false);
      expect(Date.parse(row.created_at)).toBeGreaterThanOrEqual(startedAt);
      expect(Date.parse(row.created_at)).toBeLessThanOrEqual(finishedAt);
      const perMillion = entry.model === MODEL_A ? { input: 1000, output: 2000 } : { input: 1, output: 1 };
      const expectedNano = Math.ceil((row.prompt_tokens * perMillion.input * 1e6 + row.completion_tokens * perMillion.output * 1e6) / 1e6);
      expect(Math.round(row.cost_usd * 1e9), `${entry.model} cost`).toBe(expectedNano);
    }
    const streamed = byId.get(calls[3]?.requestId ?? '');
    expect(streamed?.stream).toBe(true);
  });

  it('record failed calls with their status and no cost', async () => {
    const rows = await usage('?limit=200');
    const unrouted = rows.find((row) => row.request_id === calls[6]?.requestId);
    expect(unrouted).toMatchObject({ status: 503, cost_usd: 0, account_id: bob.accountId });
    const unknown = rows.find((row) => row.request_id === calls[7]?.requestId);
    expect(unknown).toMatchObject({ status: 400, cost_usd: 0, account_id: alice.accountId });
  });

  it('keep no prompt or completion text', async () => {
    const answer = await admin(gateway, 'GET', '/admin/usage?limit=200');
    expect(answer.text).not.toContain(PROMPT_MARKER);
    expect(answer.text).not.toContain('please answer');
    expect(answer.text).not.toContain('simulated response');
    for (const row of (answer.body as unknown as { data: Array<Record<string, unknown>> }).data) {
      for (const field of ['messages', 'prompt', 'completion', 'content', 'body', 'request_body', 'response_body']) expect(row).not.toHaveProperty(field);
    }
  });
});

describe('usage filters', () => {
  it('by account_id', async () => {
    const rows = await usage(`?account_id=${alice.accountId}&limit=200`);
    expect(rows.map((row) => row.request_id).sort()).toEqual(calls.filter((entry) => entry.accountId === alice.accountId).map((entry) => entry.requestId).sort());
    expect(rows.every((row) => row.account_id === alice.accountId)).toBe(true);
    expect(await usage('?account_id=acct_nobody')).toEqual([]);
  });

  it('by key_id', async () => {
    const rows = await usage(`?key_id=${aliceSecondKey.id}`);
    expect(rows.map((row) => row.request_id)).toEqual([calls[2]?.requestId]);
  });

  it('by model', async () => {
    const rows = await usage(`?model=${MODEL_B}&limit=200`);
    expect(rows.map((row) => row.request_id).sort()).toEqual(calls.filter((entry) => entry.model === MODEL_B).map((entry) => entry.requestId).sort());
  });

  it('by status', async () => {
    const ok = await usage('?status=200&limit=200');
    expect(ok).toHaveLength(6);
    expect(ok.every((row) => row.status === 200)).toBe(true);
    const unavailable = await usage('?status=503');
    expect(unavailable.map((row) => row.request_id)).toEqual([calls[6]?.requestId]);
    expect(await usage('?status=418')).toEqual([]);
  });

  it('by several filters at once', async () => {
    const rows = await usage(`?account_id=${bob.accountId}&model=${MODEL_A}&status=200`);
    expect(rows.map((row) => row.request_id)).toEqual([calls[4]?.requestId]);
  });

  it('by time (from/to as ISO 8601 or Unix seconds)', async () => {
    expect(await usage(`?from=${encodeURIComponent(new Date(startedAt).toISOString())}&to=${encodeURIComponent(new Date(finishedAt).toISOString())}&limit=200`)).toHaveLength(calls.length);
    expect(await usage(`?from=${Math.floor(startedAt / 1000)}&to=${Math.ceil(finishedAt / 1000)}&limit=200`)).toHaveLength(calls.length);
    expect(await usage(`?from=${encodeURIComponent(new Date(finishedAt + 60_000).toISOString())}`)).toEqual([]);
    expect(await usage(`?to=${Math.floor(startedAt / 1000) - 60}`)).toEqual([]);
  });

  it('refuses malformed filters with 400 naming the parameter', async () => {
    expectError(await admin(gateway, 'GET', '/admin/usage?status=ok'), { status: 400, param: 'status' });
    expectError(await admin(gateway, 'GET', '/admin/usage?status=99'), { status: 400, param: 'status' });
    expectError(await admin(gateway, 'GET', '/admin/usage?from=yesterday'), { status: 400, param: 'from' });
    expectError(await admin(gateway, 'GET', '/admin/usage?to=not-a-time'), { status: 400, param: 'to' });
    expectError(await admin(gateway, 'GET', '/admin/usage?limit=0'), { status: 400, param: 'limit' });
  });
});

describe('usage paging', () => {
  it('pages with limit and cursor, newest first, every row exactly once', async () => {
    const all = await usage('?limit=200');
    expect(all).toHaveLength(calls.length);
    const first = await admin<{ data: UsageRowJson[]; has_more: boolean; next_cursor: string | null }>(gateway, 'GET', '/admin/usage?limit=3');
    expect(first.body.data).toHaveLength(3);
    expect(first.body.has_more).toBe(true);
    expect(typeof first.body.next_cursor).toBe('string');

    const { items, pages } = await collectPages<UsageRowJson>(gateway, '/admin/usage', 3);
    expect(pages).toBe(Math.ceil(calls.length / 3));
    const ids = items.map((row) => row.request_id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.sort()).toEqual(calls.map((entry) => entry.requestId).sort());
    const times = items.map((row) => Date.parse(row.created_at));
    for (let index = 1; index < times.length; index += 1) expect(times[index]).toBeLessThanOrEqual(times[index - 1] as number);

    const filtered = await collectPages<UsageRowJson>(gateway, `/admin/usage?account_id=${alice.accountId}`, 2);
    expect(filtered.items).toHaveLength(calls.filter((entry) => entry.accountId === alice.accountId).length);
  });

  it('refuses a cursor it did not issue with 400', async () => {
    for (const cursor of ['garbage', 'eyJub3QiOiJhIGN1cnNvciJ9', '%%%', 'W10']) {
      expectError(await admin(gateway, 'GET', `/admin/usage?cursor=${encodeURIComponent(cursor)}`), { status: 400, param: 'cursor' });
    }
  });

  it('needs the admin token', async () => {
    expectError(await call(gateway.url, 'GET', '/admin/usage', { token: alice.key }), { status: 401 });
  });
});
