/**
 * Message Batches and Gemini batches passed through to the provider's own batch API: a Message Batch whose requests
 * all name models one Anthropic channel serves goes to that channel's `POST /v1/messages/batches` (models mapped,
 * each request's custom_id made from the batch and its line), is polled, its results read from `results_url` and
 * mapped back request by request (succeeded answers charged once at the batch price, errored ones charged nothing);
 * a Gemini batch for a model a Gemini channel serves goes to `models/{m}:batchGenerateContent`, its operation polled
 * and its `inlinedResponses` mapped back. A cancel reaches the provider; what the provider ran is charged, the rest is
 * cancelled, and the hold is released. An OpenAI-format chat batch for Claude models goes to the Message Batches API
 * translated, its answers back as chat completions; one with a line that cannot be translated falls back to the
 * gateway's queue. The mocks speak the real APIs: the vendors' SDKs are pointed straight at them.
 */
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI, JobState, type BatchJob } from '@google/genai';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchHolder } from '../../../src/billing/money-pools.js';
import { addRoutedModel, flushWrites, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from '../../support/mock-anthropic-upstream.js';
import { startMockGeminiUpstream, type MockGeminiUpstream } from '../../support/mock-gemini-upstream.js';

/** Batch prices: a line costs prompt × 1000 + completion × 4000 nano-dollars. */
const PRICING = { input_per_mtok: 2, output_per_mtok: 8, batch_input_per_mtok: 1, batch_output_per_mtok: 4 };
const GEMINI_ENDED: readonly string[] = [JobState.JOB_STATE_SUCCEEDED, JobState.JOB_STATE_FAILED, JobState.JOB_STATE_CANCELLED, JobState.JOB_STATE_EXPIRED];

let gateway: TestGateway;
let anthropic: MockAnthropicUpstream;
let slowAnthropic: MockAnthropicUpstream;
let gemini: MockGeminiUpstream;
let slowGemini: MockGeminiUpstream;
let account: SeededAccount;
let claude: Anthropic;
let google: GoogleGenAI;

interface UsageRow { request_id: string; prompt_tokens: number; completion_tokens: number; cost_usd: number; tags: Record<string, string>; status: number }

beforeAll(async () => {
  [anthropic, slowAnthropic, gemini, slowGemini] = await Promise.all([
    startMockAnthropicUpstream(), startMockAnthropicUpstream({ batchLineDelayMs: 300 }), startMockGeminiUpstream(), startMockGeminiUpstream({ batchLineDelayMs: 300 }),
  ]);
  gateway = await startTestGateway({ env: { BATCH_POLL_MS: '20', BATCH_PROVIDER_POLL_SECONDS: '1' } });
  const claudeChannel = { name: 'anthropic-batches', type: 'anthropic', base_url: anthropic.url, api_key: 'sk-ant-upstream-test', models: { 'pv-claude': 'claude-sonnet-4-5', 'pv-claude-haiku': 'claude-haiku-4-5', 'pv-claude-gone': 'unknown-claude' } };
  // One channel serves three models (one the upstream does not know): a batch across them goes to it as one.
  for (const model of ['pv-claude-haiku', 'pv-claude-gone']) await gateway.admin('POST', '/admin/models', { id: model, pricing: PRICING });
  await addRoutedModel(gateway, { model: 'pv-claude', pricing: PRICING, channel: claudeChannel });
  await addRoutedModel(gateway, { model: 'pv-claude-slow', pricing: PRICING, channel: { name: 'anthropic-slow', type: 'anthropic', base_url: slowAnthropic.url, api_key: 'sk-ant-upstream-test', models: { 'pv-claude-slow': 'claude-sonnet-4-5' } } });
  await addRoutedModel(gateway, { model: 'pv-gemini', pricing: PRICING, channel: { name: 'gemini-batches', type: 'gemini', base_url: gemini.url, api_key: 'gemini-upstream-test', models: { 'pv-gemini': 'gemini-2.5-flash' } } });
  await addRoutedModel(gateway, { model: 'pv-gemini-slow', pricing: PRICING, channel: { name: 'gemini-slow', type: 'gemini', base_url: slowGemini.url, api_key: 'gemini-upstream-test', models: { 'pv-gemini-slow': 'gemini-2.5-flash' } } });
  account = await seedAccount(gateway, { balanceUsd: 20 });
  claude = new Anthropic({ apiKey: account.key, baseURL: gateway.url, maxRetries: 0 });
  google = new GoogleGenAI({ apiKey: account.key, httpOptions: { baseUrl: gateway.url } });
}, 60_000);

afterAll(async () => {
  await gateway?.close();
  await Promise.all([anthropic?.close(), slowAnthropic?.close(), gemini?.close(), slowGemini?.close()]);
});

async function usageRows(batchId: string): Promise<UsageRow[]> {
  await flushWrites(gateway);
  const answer = await gateway.admin<{ data: UsageRow[] }>('GET', `/admin/usage?key_id=${account.keyId}&limit=200`);
  return answer.body.data.filter((row) => row.request_id.startsWith(`req_${batchId}_`));
}

/** Each row's cost is its tokens at the batch price; their sum. */
function checkedTotal(rows: readonly UsageRow[], batchId: string): bigint {
  let total = 0n;
  for (const row of rows) {
    const expected = BigInt(row.prompt_tokens) * 1000n + BigInt(row.completion_tokens) * 4000n;
    expect(row.prompt_tokens).toBeGreaterThan(0);
    expect(BigInt(Math.round(row.cost_usd * 1e9))).toBe(expected);
    expect(row.tags).toMatchObject({ batch: batchId });
    total += expected;
  }
  return total;
}

/** The batch's hold is gone and the ledger's own check of the account passes. */
async function holdReleasedAndLedgerBalanced(batchId: string): Promise<void> {
  const { storage } = gateway.gateway.services;
  const holdOf = async () => (await storage.money.listHolds(account.accountId)).filter((hold) => hold.instanceId === batchHolder(batchId));
  for (let attempt = 0; attempt < 200 && (await holdOf()).length > 0; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(await holdOf()).toEqual([]);
  const check = await gateway.admin<{ ok: boolean; problems: unknown[] }>('GET', `/admin/ledger/check?account_id=${account.accountId}`);
  expect(check.body).toMatchObject({ ok: true, problems: [] });
}

async function messageBatchEnded(client: Anthropic, id: string): Promise<Anthropic.Messages.MessageBatch> {
  let batch = await client.messages.batches.retrieve(id);
  const deadline = Date.now() + 100_000;
  while (batch.processing_status !== 'ended' && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    batch = await client.messages.batches.retrieve(id);
  }
  return batch;
}

async function geminiEnded(client: GoogleGenAI, name: string): Promise<BatchJob> {
  let job = await client.batches.get({ name });
  const deadline = Date.now() + 100_000;
  while (!GEMINI_ENDED.includes(job.state as string) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    job = await client.batches.get({ name });
  }
  return job;
}

const claudeRequest = (customId: string, model: string, content: string): Anthropic.Messages.BatchCreateParams.Request => ({
  custom_id: customId, params: { model, max_tokens: 16, messages: [{ role: 'user', content }] },
});

describe('the mocks speak the vendors\' batch APIs', () => {
  it('runs a Message Batch for @anthropic-ai/sdk pointed straight at the mock Anthropic upstream', async () => {
    const direct = new Anthropic({ apiKey: 'sk-ant-upstream-test', baseURL: anthropic.url, maxRetries: 0 });
    const created = await direct.messages.batches.create({ requests: [claudeRequest('a', 'claude-sonnet-4-5', 'Hello there'), claudeRequest('b', 'unknown-model', 'Fails')] });
    expect(created).toMatchObject({ type: 'message_batch', processing_status: 'in_progress', request_counts: { processing: 2 }, results_url: null });
    const batch = await messageBatchEnded(direct, created.id);
    expect(batch.request_counts).toEqual({ processing: 0, succeeded: 1, errored: 1, canceled: 0, expired: 0 });
    const results: Anthropic.Messages.MessageBatchIndividualResponse[] = [];
    for await (const result of await direct.messages.batches.results(created.id)) results.push(result);
    expect(results.map((result) => [result.custom_id, result.result.type])).toEqual([['a', 'succeeded'], ['b', 'errored']]);
    const first = results[0]?.result;
    expect(first?.type === 'succeeded' ? first.message.usage.input_tokens : 0).toBeGreaterThan(0);
    const second = results[1]?.result;
    expect(second?.type === 'errored' ? second.error.error.type : '').toBe('not_found_error');
    expect((await direct.messages.batches.list({ limit: 10 })).data.map((entry) => entry.id)).toContain(created.id);
    await expect(direct.messages.batches.cancel(created.id)).rejects.toMatchObject({ status: 400 });
  }, 60_000);

  it('runs a batch for @google/genai pointed straight at the mock Gemini upstream, and cancels one', async () => {
    const direct = new GoogleGenAI({ apiKey: 'gemini-upstream-test', httpOptions: { baseUrl: gemini.url } });
    const created = await direct.batches.create({ model: 'gemini-2.5-flash', src: [
      { contents: [{ role: 'user', parts: [{ text: 'One' }] }], metadata: { key: 'one' } },
      { contents: [{ role: 'user', parts: [{ text: 'Two' }] }], metadata: { key: 'two' } },
    ], config: { displayName: 'direct' } });
    expect(created.name).toMatch(/^batches\//);
    const job = await geminiEnded(direct, created.name as string);
    expect(job.state).toBe(JobState.JOB_STATE_SUCCEEDED);
    expect(job.displayName).toBe('direct');
    const responses = job.dest?.inlinedResponses ?? [];
    expect(responses.map((entry) => entry.metadata?.key)).toEqual(['one', 'two']);
    expect(responses[0]?.response?.usageMetadata?.promptTokenCount).toBeGreaterThan(0);

    const slowDirect = new GoogleGenAI({ apiKey: 'gemini-upstream-test', httpOptions: { baseUrl: slowGemini.url } });
    const slow = await slowDirect.batches.create({ model: 'gemini-2.5-flash', src: Array.from({ length: 10 }, (_, index) => ({ contents: [{ role: 'user', parts: [{ text: `Q${index}` }] }] })) });
    await slowDirect.batches.cancel({ name: slow.name as string });
    expect((await geminiEnded(slowDirect, slow.name as string)).state).toBe(JobState.JOB_STATE_CANCELLED);
    const listed = await slowDirect.batches.list({ config: { pageSize: 10 } });
    expect(listed.page.map((entry) => entry.name)).toContain(slow.name);
  }, 60_000);
});

describe('Message Batches passed through to an Anthropic channel', () => {
  it('runs the batch at the provider, maps each result back and charges each succeeded request once at the batch price', async () => {
    const before = await gateway.gateway.services.ledger.availableBalance(account.accountId);
    const requests = [
      ...Array.from({ length: 6 }, (_, index) => claudeRequest(`row-${index}`, index % 2 === 0 ? 'pv-claude' : 'pv-claude-haiku', `Provider message batch question ${index}`)),
      claudeRequest('row-gone', 'pv-claude-gone', 'This model is gone upstream'),
    ];
    const created = await claude.messages.batches.create({ requests });
    const batch = await messageBatchEnded(claude, created.id);
    expect(batch.request_counts).toEqual({ processing: 0, succeeded: 6, errored: 1, canceled: 0, expired: 0 });

    // The provider got one Message Batch: the upstream's model names, custom_ids made of the batch and the line.
    const upstream = [...anthropic.batches.batches.values()].filter((entry) => (anthropic.batches.requests.get(entry.id) ?? [])[0]?.custom_id.startsWith(`${created.id}-`) === true);
    expect(upstream).toHaveLength(1);
    const sent = anthropic.batches.requests.get(upstream[0]?.id as string) ?? [];
    expect(sent.map((request) => request.custom_id)).toEqual(Array.from({ length: 7 }, (_, index) => `${created.id}-${index + 1}`));
    expect(sent.map((request) => request.params.model)).toEqual(['claude-sonnet-4-5', 'claude-haiku-4-5', 'claude-sonnet-4-5', 'claude-haiku-4-5', 'claude-sonnet-4-5', 'claude-haiku-4-5', 'unknown-claude']);
    // Nothing went through the interactive Messages endpoint from the gateway.
    expect(anthropic.requests.filter((request) => request.path === '/v1/messages' && request.headers['user-agent']?.includes('unigate') === true)).toHaveLength(0);

    const results: Anthropic.Messages.MessageBatchIndividualResponse[] = [];
    for await (const result of await claude.messages.batches.results(created.id)) results.push(result);
    expect(results.map((result) => result.custom_id)).toEqual(requests.map((request) => request.custom_id));
    for (const result of results.slice(0, 6)) {
      expect(result.result.type).toBe('succeeded');
      if (result.result.type === 'succeeded') expect(result.result.message.content[0]).toMatchObject({ type: 'text' });
    }
    const gone = results[6]?.result;
    expect(gone?.type).toBe('errored');
    expect(gone?.type === 'errored' ? gone.error.error.type : '').toBe('not_found_error');

    // One usage row per request; only the succeeded ones cost anything, at the batch price; the ledger moved by their sum.
    const rows = await usageRows(created.id);
    expect(rows.map((row) => row.request_id).sort()).toEqual(Array.from({ length: 7 }, (_, index) => `req_${created.id}_${index + 1}`).sort());
    const charged = rows.filter((row) => row.status === 200);
    expect(charged).toHaveLength(6);
    expect(rows.find((row) => row.request_id === `req_${created.id}_7`)?.cost_usd).toBe(0);
    const total = checkedTotal(charged, created.id);
    expect(before - (await gateway.gateway.services.ledger.availableBalance(account.accountId))).toBe(total);
    await holdReleasedAndLedgerBalanced(created.id);
  }, 120_000);

  it('splits a Message Batch mixing Claude and Gemini models: the Claude requests to Anthropic, the rest on the queue', async () => {
    const before = await gateway.gateway.services.ledger.availableBalance(account.accountId);
    const askedBefore = gemini.requests.filter((request) => request.path.endsWith(':generateContent')).length;
    const requests = Array.from({ length: 6 }, (_, index) => claudeRequest(`split-${index}`, index % 2 === 0 ? 'pv-claude' : 'pv-gemini', `Split message batch question ${index}`));
    const created = await claude.messages.batches.create({ requests });
    const batch = await messageBatchEnded(claude, created.id);
    expect(batch.request_counts).toEqual({ processing: 0, succeeded: 6, errored: 0, canceled: 0, expired: 0 });

    // Anthropic got the Claude requests only, as one Message Batch; the Gemini requests ran one by one at Gemini.
    const upstream = [...anthropic.batches.batches.values()].filter((entry) => (anthropic.batches.requests.get(entry.id) ?? [])[0]?.custom_id.startsWith(`${created.id}-`) === true);
    expect(upstream).toHaveLength(1);
    expect((anthropic.batches.requests.get(upstream[0]?.id as string) ?? []).map((request) => request.custom_id)).toEqual([1, 3, 5].map((line) => `${created.id}-${line}`));
    expect(gemini.requests.filter((request) => request.path.endsWith(':generateContent')).length - askedBefore).toBe(3);

    const results: Anthropic.Messages.MessageBatchIndividualResponse[] = [];
    for await (const result of await claude.messages.batches.results(created.id)) results.push(result);
    expect(results.map((result) => result.custom_id)).toEqual(requests.map((request) => request.custom_id));
    for (const [index, result] of results.entries()) {
      expect(result.result.type).toBe('succeeded');
      if (result.result.type === 'succeeded') expect(JSON.stringify(result.result.message.content)).toContain(`Split message batch question ${index}`);
    }
    const rows = await usageRows(created.id);
    expect(rows.map((row) => row.request_id).sort()).toEqual(Array.from({ length: 6 }, (_, index) => `req_${created.id}_${index + 1}`).sort());
    const total = checkedTotal(rows, created.id);
    expect(before - (await gateway.gateway.services.ledger.availableBalance(account.accountId))).toBe(total);
    await holdReleasedAndLedgerBalanced(created.id);
  }, 120_000);

  it('passes a cancel on to the provider: requests it ran are charged, the rest end canceled and the hold is released', async () => {
    const before = await gateway.gateway.services.ledger.availableBalance(account.accountId);
    const created = await claude.messages.batches.create({ requests: Array.from({ length: 30 }, (_, index) => claudeRequest(`slow-${index}`, 'pv-claude-slow', `Slow question ${index}`)) });
    let upstream = [...slowAnthropic.batches.batches.values()][0];
    const deadline = Date.now() + 30_000;
    while ((upstream === undefined || upstream.request_counts.succeeded < 2) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      upstream = [...slowAnthropic.batches.batches.values()][0];
    }
    expect((await claude.messages.batches.cancel(created.id)).processing_status).toBe('canceling');
    const batch = await messageBatchEnded(claude, created.id);
    expect(upstream?.cancel_initiated_at).not.toBeNull();
    const ran = upstream?.request_counts.succeeded ?? 0;
    expect(ran).toBeGreaterThan(0);
    expect(ran).toBeLessThan(30);
    expect(batch.request_counts).toEqual({ processing: 0, succeeded: ran, errored: 0, canceled: 30 - ran, expired: 0 });
    const results: Anthropic.Messages.MessageBatchIndividualResponse[] = [];
    for await (const result of await claude.messages.batches.results(created.id)) results.push(result);
    expect(results.filter((result) => result.result.type === 'canceled')).toHaveLength(30 - ran);
    const rows = await usageRows(created.id);
    expect(rows).toHaveLength(ran);
    const total = checkedTotal(rows, created.id);
    expect(before - (await gateway.gateway.services.ledger.availableBalance(account.accountId))).toBe(total);
    await holdReleasedAndLedgerBalanced(created.id);
  }, 120_000);
});

describe('an OpenAI-format batch for Claude models, translated to Anthropic\'s Message Batches', () => {
  it('runs at the provider as a Message Batch, answers come back as chat completions, each charged once at the batch price', async () => {
    const client = new OpenAI({ apiKey: account.key, baseURL: gateway.baseURL, maxRetries: 0 });
    const before = await gateway.gateway.services.ledger.availableBalance(account.accountId);
    const bodies = [
      ...Array.from({ length: 4 }, (_, index) => ({ model: index % 2 === 0 ? 'pv-claude' : 'pv-claude-haiku', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: `Translated batch question ${index}` }], max_tokens: 16 })),
      { model: 'pv-claude-gone', messages: [{ role: 'user', content: 'Gone upstream' }], max_tokens: 16 },
    ];
    // A custom_id Anthropic would refuse is fine: the provider gets ids made of the batch and the line.
    const text = bodies.map((body, index) => `${JSON.stringify({ custom_id: `chat row/${index}`, method: 'POST', url: '/v1/chat/completions', body })}\n`).join('');
    const file = await client.files.create({ file: await toFile(Buffer.from(text), 'translated.jsonl'), purpose: 'batch' });
    const created = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    let batch = await client.batches.retrieve(created.id);
    const deadline = Date.now() + 100_000;
    while (!['completed', 'failed', 'expired', 'cancelled'].includes(batch.status) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      batch = await client.batches.retrieve(created.id);
    }
    expect(batch.status).toBe('completed');
    expect(batch.request_counts).toEqual({ total: 5, completed: 4, failed: 1 });

    // The provider got one Message Batch in Anthropic's shape: the system prompt hoisted, its own model names.
    const upstream = [...anthropic.batches.batches.values()].filter((entry) => (anthropic.batches.requests.get(entry.id) ?? [])[0]?.custom_id.startsWith(`${created.id}-`) === true);
    expect(upstream).toHaveLength(1);
    const sent = anthropic.batches.requests.get(upstream[0]?.id as string) ?? [];
    expect(sent.map((request) => request.params.model)).toEqual(['claude-sonnet-4-5', 'claude-haiku-4-5', 'claude-sonnet-4-5', 'claude-haiku-4-5', 'unknown-claude']);
    expect(sent[0]?.params).toMatchObject({ max_tokens: 16, messages: [{ role: 'user' }] });
    expect(JSON.stringify(sent[0]?.params.system)).toContain('Be brief.');

    type Line = { custom_id: string; response: { status_code: number; body: Record<string, unknown> } | null };
    const read = async (id: string | null | undefined): Promise<Line[]> => (id === null || id === undefined ? [] : (await (await client.files.content(id)).text()).trim().split('\n').map((entry) => JSON.parse(entry) as Line));
    const output = await read(batch.output_file_id);
    expect(output.map((entry) => entry.custom_id)).toEqual(['chat row/0', 'chat row/1', 'chat row/2', 'chat row/3']);
    for (const entry of output) {
      expect(entry.response?.status_code).toBe(200);
      expect(entry.response?.body).toMatchObject({ object: 'chat.completion', choices: [{ message: { role: 'assistant', content: expect.any(String) } }], usage: { prompt_tokens: expect.any(Number) } });
    }
    const errors = await read(batch.error_file_id);
    expect(errors.map((entry) => entry.custom_id)).toEqual(['chat row/4']);
    expect(errors[0]?.response?.status_code).toBe(404);
    expect(errors[0]?.response?.body).toMatchObject({ error: { type: 'not_found_error' } });

    const rows = await usageRows(created.id);
    const charged = rows.filter((row) => row.status === 200);
    expect(charged).toHaveLength(4);
    const total = checkedTotal(charged, created.id);
    expect(before - (await gateway.gateway.services.ledger.availableBalance(account.accountId))).toBe(total);
    await holdReleasedAndLedgerBalanced(created.id);
  }, 120_000);
});

describe('a translated batch with a line that cannot be expressed in the provider\'s shape', () => {
  it('falls back to the gateway\'s own queue, which runs every line itself', async () => {
    const client = new OpenAI({ apiKey: account.key, baseURL: gateway.baseURL, maxRetries: 0 });
    const batchesBefore = anthropic.batches.batches.size;
    const bodies = [
      { model: 'pv-claude', messages: [{ role: 'user', content: 'Fallback one' }], max_tokens: 16 },
      // Out of range for a chat request: it cannot be translated, and answers 400 when run.
      { model: 'pv-claude', messages: [{ role: 'user', content: 'Fallback two' }], max_tokens: 16, temperature: 7 },
    ];
    const text = bodies.map((body, index) => `${JSON.stringify({ custom_id: `fb-${index}`, method: 'POST', url: '/v1/chat/completions', body })}\n`).join('');
    const file = await client.files.create({ file: await toFile(Buffer.from(text), 'fallback.jsonl'), purpose: 'batch' });
    const created = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    let batch = await client.batches.retrieve(created.id);
    const deadline = Date.now() + 100_000;
    while (!['completed', 'failed', 'expired', 'cancelled'].includes(batch.status) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      batch = await client.batches.retrieve(created.id);
    }
    expect(batch.status).toBe('completed');
    expect(batch.request_counts).toEqual({ total: 2, completed: 1, failed: 1 });
    expect(anthropic.batches.batches.size).toBe(batchesBefore);
    expect(await gateway.gateway.services.storage.providerBatches.get(created.id)).toMatchObject({ state: 'fallback' });
    const rows = await usageRows(created.id);
    expect(rows.filter((row) => row.status === 200)).toHaveLength(1);
    await holdReleasedAndLedgerBalanced(created.id);
  }, 120_000);
});

describe('Gemini batches passed through to a Gemini channel', () => {
  it('runs the batch at the provider, maps inlinedResponses back and charges each request once at the batch price', async () => {
    const before = await gateway.gateway.services.ledger.availableBalance(account.accountId);
    const created = await google.batches.create({ model: 'pv-gemini', src: Array.from({ length: 5 }, (_, index) => ({
      contents: [{ role: 'user', parts: [{ text: `Provider Gemini batch question ${index}` }] }], config: { maxOutputTokens: 20 }, metadata: { key: `q-${index}` },
    })), config: { displayName: 'mine' } });
    const job = await geminiEnded(google, created.name as string);
    expect(job.state).toBe(JobState.JOB_STATE_SUCCEEDED);
    const id = (created.name as string).replace(/^batches\//, '');

    // The provider got one batch for its own model name, labelled with the gateway batch.
    const upstream = [...gemini.batches.batches.values()].filter((entry) => entry.displayName === `unigate:${id}`);
    expect(upstream).toHaveLength(1);
    expect(upstream[0]?.model).toBe('models/gemini-2.5-flash');
    expect(upstream[0]?.requests).toHaveLength(5);

    const responses = job.dest?.inlinedResponses ?? [];
    expect(responses.map((entry) => entry.metadata?.key)).toEqual(['q-0', 'q-1', 'q-2', 'q-3', 'q-4']);
    for (const entry of responses) expect(entry.response?.candidates?.[0]?.content?.parts?.[0]?.text).toEqual(expect.any(String));

    const rows = await usageRows(id);
    expect(rows.map((row) => row.request_id).sort()).toEqual(Array.from({ length: 5 }, (_, index) => `req_${id}_${index + 1}`).sort());
    const total = checkedTotal(rows, id);
    expect(before - (await gateway.gateway.services.ledger.availableBalance(account.accountId))).toBe(total);
    await holdReleasedAndLedgerBalanced(id);
  }, 120_000);

  it('passes a cancel on to the provider: requests it ran are charged, the rest cancelled', async () => {
    const created = await google.batches.create({ model: 'pv-gemini-slow', src: Array.from({ length: 30 }, (_, index) => ({ contents: [{ role: 'user', parts: [{ text: `Slow Gemini ${index}` }] }] })) });
    const id = (created.name as string).replace(/^batches\//, '');
    const ours = () => [...slowGemini.batches.batches.values()].find((entry) => entry.displayName === `unigate:${id}`);
    let upstream = ours();
    const deadline = Date.now() + 30_000;
    while ((upstream === undefined || upstream.responses.length < 2) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      upstream = ours();
    }
    await google.batches.cancel({ name: created.name as string });
    const job = await geminiEnded(google, created.name as string);
    expect(job.state).toBe(JobState.JOB_STATE_CANCELLED);
    expect(upstream?.state).toBe('BATCH_STATE_CANCELLED');
    const ran = upstream?.responses.filter((entry) => entry.response !== undefined).length ?? 0;
    expect(ran).toBeGreaterThan(0);
    expect(ran).toBeLessThan(30);
    expect((await usageRows(id)).length).toBe(ran);
    await holdReleasedAndLedgerBalanced(id);
  }, 120_000);
});
