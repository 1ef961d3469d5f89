/**
 * Anthropic's Message Batches through the official @anthropic-ai/sdk: a batch across a Claude, an OpenAI and a Gemini
 * model (the last two translated), run by the gateway from the same queue as OpenAI's batches, polled to its end,
 * results read with the SDK's `results()` iterator and matched request by request against the same requests made
 * one by one, each charged once at the batch price; validation; paging; cancel; delete; other accounts' batches.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, flushWrites, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from '../../support/mock-anthropic-upstream.js';
import { startMockGeminiUpstream, type MockGeminiUpstream } from '../../support/mock-gemini-upstream.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';

const MODELS = { anthropic: 'mb-claude', openai: 'mb-gpt', gemini: 'mb-gemini' } as const;
/** USD per million tokens: normal, and the operator's batch prices (half). */
const PRICING = { input_per_mtok: 2, output_per_mtok: 8, batch_input_per_mtok: 1, batch_output_per_mtok: 4 };
const NANO_PER_TOKEN = { input: 1_000n, output: 4_000n };

let gateway: TestGateway;
let openai: MockOpenAIUpstream;
let anthropic: MockAnthropicUpstream;
let gemini: MockGeminiUpstream;
let slow: MockAnthropicUpstream;
let account: SeededAccount;
let client: Anthropic;

interface UsageRow { request_id: string; model: string | null; status: number; prompt_tokens: number; completion_tokens: number; cost_usd: number }
type Request = Anthropic.Messages.Batches.BatchCreateParams.Request;

const modelCycle = [MODELS.anthropic, MODELS.openai, MODELS.gemini] as const;

function requests(count: number, model?: string): Request[] {
  return Array.from({ length: count }, (_, index) => ({
    custom_id: `request-${index}`,
    params: { model: model ?? modelCycle[index % 3] as string, max_tokens: 50, messages: [{ role: 'user' as const, content: `Line ${index}: say something about the number ${index}.` }] },
  }));
}

async function waitFor(id: string, done: (batch: Anthropic.Messages.Batches.MessageBatch) => boolean, target = client): Promise<Anthropic.Messages.Batches.MessageBatch> {
  for (let attempt = 0; attempt < 600; attempt += 1) {
    const batch = await target.messages.batches.retrieve(id);
    if (done(batch)) return batch;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`message batch ${id} did not end`);
}

async function usageRows(keyId: string): Promise<UsageRow[]> {
  await flushWrites(gateway);
  const rows: UsageRow[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 20; page += 1) {
    const usage: { body: { data: UsageRow[]; next_cursor: string | null } } = await gateway.admin('GET', `/admin/usage?key_id=${keyId}&limit=200${cursor === null ? '' : `&cursor=${cursor}`}`);
    rows.push(...usage.body.data);
    cursor = usage.body.next_cursor;
    if (cursor === null) break;
  }
  return rows;
}

async function balanceOf(accountId: string): Promise<bigint> {
  const stored = await gateway.gateway.services.storage.accounts.getById(accountId);
  return stored?.balanceNano ?? 0n;
}

async function resultsOf(id: string, target = client): Promise<Anthropic.Messages.Batches.MessageBatchIndividualResponse[]> {
  const results: Anthropic.Messages.Batches.MessageBatchIndividualResponse[] = [];
  for await (const result of await target.messages.batches.results(id)) results.push(result);
  return results;
}

beforeAll(async () => {
  [openai, anthropic, gemini, slow] = await Promise.all([startMockOpenAIUpstream(), startMockAnthropicUpstream(), startMockGeminiUpstream(), startMockAnthropicUpstream({ responseDelayMs: 300 })]);
  // The gateway's own queue is under test: one-provider batches are not sent to the provider's batch API.
  gateway = await startTestGateway({ env: { BATCH_POLL_MS: '20', BATCH_CONCURRENCY: '4', BATCH_PROVIDER_PASS_THROUGH: 'off' } });
  await addRoutedModel(gateway, { model: MODELS.openai, pricing: PRICING, channel: { name: 'openai-up', type: 'openai', base_url: openai.url, api_key: 'sk-upstream-test', models: { [MODELS.openai]: 'gpt-4o-mini' } } });
  await addRoutedModel(gateway, { model: MODELS.anthropic, pricing: PRICING, channel: { name: 'anthropic-up', type: 'anthropic', base_url: anthropic.url, api_key: 'sk-ant-upstream-test', models: { [MODELS.anthropic]: 'claude-sonnet-4-5' } } });
  await addRoutedModel(gateway, { model: MODELS.gemini, pricing: PRICING, channel: { name: 'gemini-up', type: 'gemini', base_url: gemini.url, api_key: 'gemini-upstream-test', models: { [MODELS.gemini]: 'gemini-2.5-flash' } } });
  await addRoutedModel(gateway, { model: 'mb-slow-claude', pricing: PRICING, channel: { name: 'slow-up', type: 'anthropic', base_url: slow.url, api_key: 'sk-ant-upstream-test', models: { 'mb-slow-claude': 'claude-sonnet-4-5' } } });
  account = await seedAccount(gateway, { balanceUsd: 50 });
  client = new Anthropic({ apiKey: account.key, baseURL: gateway.url, maxRetries: 0 });
}, 60_000);

afterAll(async () => {
  await gateway?.close();
  await Promise.all([openai?.close(), anthropic?.close(), gemini?.close(), slow?.close()]);
});

describe('message batches', () => {
  it('runs a batch across Claude, OpenAI and Gemini models, read through results(), each request charged once at the batch price', async () => {
    const input = requests(15);
    const balanceBefore = await balanceOf(account.accountId);
    const created = await client.messages.batches.create({ requests: input });
    expect(created).toMatchObject({ type: 'message_batch', processing_status: 'in_progress', results_url: null, ended_at: null, cancel_initiated_at: null, archived_at: null });
    expect(created.id).toMatch(/^msgbatch_/);
    expect(created.request_counts).toEqual({ processing: 15, succeeded: 0, errored: 0, canceled: 0, expired: 0 });
    expect(Date.parse(created.expires_at) - Date.parse(created.created_at)).toBe(86_400_000);
    const batch = await waitFor(created.id, (found) => found.processing_status === 'ended');
    expect(batch.request_counts).toEqual({ processing: 0, succeeded: 15, errored: 0, canceled: 0, expired: 0 });
    expect(batch.results_url).toBe(`${gateway.url}/v1/messages/batches/${batch.id}/results`);
    expect(Date.parse(batch.ended_at as string)).toBeGreaterThanOrEqual(Date.parse(batch.created_at));
    await flushWrites(gateway);
    const balanceAfter = await balanceOf(account.accountId);

    const results = await resultsOf(batch.id);
    expect(results.map((result) => result.custom_id)).toEqual(input.map((request) => request.custom_id));
    for (const [index, result] of results.entries()) {
      if (result.result.type !== 'succeeded') throw new Error(`line ${index} did not succeed: ${JSON.stringify(result.result)}`);
      const message = result.result.message;
      expect(message.type).toBe('message');
      // The same request made on its own answers the same (the mocks answer deterministically), with the same tokens.
      const single = await client.messages.create((input[index] as Request).params as Anthropic.Messages.MessageCreateParamsNonStreaming);
      expect(message.model).toBe(single.model);
      expect(message.content).toEqual(single.content);
      expect(message.usage.input_tokens).toBe(single.usage.input_tokens);
      expect(message.usage.output_tokens).toBe(single.usage.output_tokens);
    }

    // One usage row per request, at the batch price; the wallet moved by exactly their sum.
    const rows = (await usageRows(account.keyId)).filter((row) => row.request_id.startsWith(`req_${batch.id}_`));
    expect(rows).toHaveLength(15);
    expect(new Set(rows.map((row) => row.model))).toEqual(new Set(Object.values(MODELS)));
    let total = 0n;
    for (const row of rows) {
      const expected = BigInt(row.prompt_tokens) * NANO_PER_TOKEN.input + BigInt(row.completion_tokens) * NANO_PER_TOKEN.output;
      expect(BigInt(Math.round(row.cost_usd * 1e9)), row.request_id).toBe(expected);
      total += expected;
    }
    expect(balanceBefore - balanceAfter).toBe(total);
    // A Message Batch writes no files: its results are read from the batch.
    const files = await new OpenAI({ apiKey: account.key, baseURL: gateway.baseURL, maxRetries: 0 }).files.list();
    expect(files.data.filter((file) => file.filename.startsWith(batch.id))).toEqual([]);
  });

  it('reports a request the Messages route refuses as errored, with Anthropic\'s error object, uncharged', async () => {
    const good = requests(1, MODELS.gemini)[0] as Request;
    const created = await client.messages.batches.create({ requests: [good, { custom_id: 'empty', params: { model: MODELS.openai, max_tokens: 10, messages: [] } }] });
    const batch = await waitFor(created.id, (found) => found.processing_status === 'ended');
    expect(batch.request_counts).toEqual({ processing: 0, succeeded: 1, errored: 1, canceled: 0, expired: 0 });
    const [first, second] = await resultsOf(batch.id);
    expect(first?.result.type).toBe('succeeded');
    expect(second).toMatchObject({ custom_id: 'empty', result: { type: 'errored', error: { type: 'error', error: { type: 'invalid_request_error' } } } });
    const rows = (await usageRows(account.keyId)).filter((row) => row.request_id.startsWith(`req_${batch.id}_`) && row.cost_usd > 0);
    expect(rows).toHaveLength(1);
  });

  it('pages the listing with after_id and before_id, newest first', async () => {
    const made: string[] = [];
    for (let index = 0; index < 3; index += 1) made.push((await client.messages.batches.create({ requests: requests(1, MODELS.anthropic) })).id);
    const first = await client.messages.batches.list({ limit: 2 });
    expect(first.data.map((batch) => batch.id)).toEqual([made[2], made[1]]);
    expect(first).toMatchObject({ has_more: true, first_id: made[2], last_id: made[1] });
    const second = await client.messages.batches.list({ limit: 2, after_id: made[1] });
    expect(second.data.map((batch) => batch.id)[0]).toBe(made[0]);
    const back = await client.messages.batches.list({ limit: 1, before_id: made[0] });
    expect(back.data.map((batch) => batch.id)).toEqual([made[1]]);
    expect(back.has_more).toBe(true);
    const all: string[] = [];
    for await (const batch of client.messages.batches.list({ limit: 2 })) all.push(batch.id);
    expect(all.slice(0, 3)).toEqual([made[2], made[1], made[0]]);
    expect(new Set(all).size).toBe(all.length);
    for (const id of made) await waitFor(id, (batch) => batch.processing_status === 'ended');
  });

  it('refuses bad requests with Anthropic\'s error objects, and queues nothing', async () => {
    const refusals: Array<[unknown, string]> = [
      [{ requests: [] }, 'requests'],
      [{ requests: [{ custom_id: 'a b', params: requests(1)[0]?.params }] }, 'requests.0.custom_id'],
      [{ requests: [{ custom_id: 'a', params: requests(1)[0]?.params }, { custom_id: 'a', params: requests(1)[0]?.params }] }, 'requests.1.custom_id'],
      [{ requests: [{ custom_id: 'a', params: { model: MODELS.anthropic, messages: [] } }] }, 'requests.0.params.max_tokens'],
      [{ requests: [{ custom_id: 'a', params: { ...requests(1)[0]?.params, stream: true } }] }, 'requests.0.params.stream'],
      [{ requests: [{ custom_id: 'a', params: { ...requests(1)[0]?.params, model: 'no-such-model' } }] }, 'requests.0.params.model'],
    ];
    const before = (await client.messages.batches.list({ limit: 1000 })).data.length;
    for (const [body, field] of refusals) {
      const response = await fetch(`${gateway.url}/v1/messages/batches`, { method: 'POST', headers: { 'x-api-key': account.key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, body: JSON.stringify(body) });
      expect(response.status, field).toBe(400);
      const error = await response.json() as { type: string; error: { type: string; message: string } };
      expect(error.type).toBe('error');
      expect(error.error.type).toBe('invalid_request_error');
      expect(error.error.message.startsWith(`${field}:`), error.error.message).toBe(true);
    }
    await expect(client.messages.batches.create({ requests: requests(1) })).resolves.toBeTruthy();
    expect((await client.messages.batches.list({ limit: 1000 })).data.length).toBe(before + 1);
    // A key limited to some models may batch only those.
    const limited = await seedAccount(gateway, { key: { allowed_models: [MODELS.anthropic] } });
    const limitedClient = new Anthropic({ apiKey: limited.key, baseURL: gateway.url, maxRetries: 0 });
    await expect(limitedClient.messages.batches.create({ requests: requests(2) })).rejects.toMatchObject({ status: 403, error: { error: { type: 'permission_error' } } });
    expect((await limitedClient.messages.batches.list()).data).toEqual([]);
    await expect(limitedClient.messages.batches.create({ requests: requests(2, MODELS.anthropic) })).resolves.toMatchObject({ processing_status: 'in_progress' });
    // Without a key: Anthropic's authentication error.
    const anonymous = new Anthropic({ apiKey: 'sk-wrong', baseURL: gateway.url, maxRetries: 0 });
    await expect(anonymous.messages.batches.list()).rejects.toMatchObject({ status: 401, error: { type: 'error', error: { type: 'authentication_error' } } });
  });

  it('refuses a batch whose worst case the account cannot pay, and hides batches from other accounts and the other API', async () => {
    const poor = await seedAccount(gateway, { balanceUsd: 0.0001 });
    const poorClient = new Anthropic({ apiKey: poor.key, baseURL: gateway.url, maxRetries: 0 });
    const costly = requests(30).map((request) => ({ ...request, params: { ...request.params, max_tokens: 100_000 } }));
    await expect(poorClient.messages.batches.create({ requests: costly })).rejects.toMatchObject({ status: 402, error: { error: { type: 'billing_error' } } });
    expect((await poorClient.messages.batches.list()).data).toEqual([]);

    const mine = (await client.messages.batches.list()).data[0] as Anthropic.Messages.Batches.MessageBatch;
    await waitFor(mine.id, (batch) => batch.processing_status === 'ended');
    await expect(poorClient.messages.batches.retrieve(mine.id)).rejects.toMatchObject({ status: 404, error: { error: { type: 'not_found_error' } } });
    await expect(poorClient.messages.batches.cancel(mine.id)).rejects.toMatchObject({ status: 404 });
    await expect(poorClient.messages.batches.delete(mine.id)).rejects.toMatchObject({ status: 404 });
    const stolen = await fetch(`${gateway.url}/v1/messages/batches/${mine.id}/results`, { headers: { 'x-api-key': poor.key } });
    expect(stolen.status).toBe(404);

    // An OpenAI batch is no Message Batch, and a Message Batch no OpenAI batch.
    const openaiClient = new OpenAI({ apiKey: account.key, baseURL: gateway.baseURL, maxRetries: 0 });
    const line = JSON.stringify({ custom_id: 'x', method: 'POST', url: '/v1/chat/completions', body: { model: MODELS.openai, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] } });
    const file = await openaiClient.files.create({ file: await toFile(Buffer.from(`${line}\n`), 'b.jsonl'), purpose: 'batch' });
    const openaiBatch = await openaiClient.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await expect(client.messages.batches.retrieve(openaiBatch.id)).rejects.toMatchObject({ status: 404 });
    await expect(client.messages.batches.cancel(openaiBatch.id)).rejects.toMatchObject({ status: 404 });
    expect((await client.messages.batches.list({ limit: 1000 })).data.map((batch) => batch.id)).not.toContain(openaiBatch.id);
    await expect(openaiClient.batches.retrieve(mine.id)).rejects.toMatchObject({ status: 404 });
    expect((await openaiClient.batches.list({ limit: 100 })).data.map((batch) => batch.id)).not.toContain(mine.id);
  });

  it('cancels a batch mid-way: requests not started are canceled, never run nor charged; an ended batch can be deleted', async () => {
    const created = await client.messages.batches.create({ requests: requests(40, 'mb-slow-claude') });
    await expect(client.messages.batches.delete(created.id)).rejects.toMatchObject({ status: 400, error: { error: { type: 'invalid_request_error' } } });
    await expect(client.messages.batches.results(created.id)).rejects.toThrow(/results_url/);
    await waitFor(created.id, (batch) => batch.request_counts.succeeded >= 4);
    const canceling = await client.messages.batches.cancel(created.id);
    expect(['canceling', 'ended']).toContain(canceling.processing_status);
    expect(canceling.cancel_initiated_at).not.toBeNull();
    const batch = await waitFor(created.id, (found) => found.processing_status === 'ended');
    const ran = batch.request_counts.succeeded + batch.request_counts.errored;
    expect(ran).toBeGreaterThanOrEqual(4);
    expect(ran).toBeLessThan(40);
    expect(batch.request_counts).toMatchObject({ processing: 0, canceled: 40 - ran, expired: 0 });
    const results = await resultsOf(batch.id);
    expect(results).toHaveLength(40);
    expect(results.filter((result) => result.result.type === 'canceled')).toHaveLength(40 - ran);
    // The results are read from the database a page at a time, in request order.
    const page = await gateway.gateway.services.storage.batches.finishedLines(batch.id, { afterLine: 10, limit: 7 });
    expect(page.map((line) => line.line)).toEqual([11, 12, 13, 14, 15, 16, 17]);
    expect(page.map((line) => line.customId)).toEqual(results.slice(10, 17).map((result) => result.custom_id));
    const rows = (await usageRows(account.keyId)).filter((row) => row.request_id.startsWith(`req_${batch.id}_`));
    expect(rows).toHaveLength(ran);

    await expect(client.messages.batches.delete(batch.id)).resolves.toEqual({ id: batch.id, type: 'message_batch_deleted' });
    await expect(client.messages.batches.retrieve(batch.id)).rejects.toMatchObject({ status: 404 });
    // The usage rows and charges of what ran stay.
    expect((await usageRows(account.keyId)).filter((row) => row.request_id.startsWith(`req_${batch.id}_`))).toHaveLength(ran);
  });
});
