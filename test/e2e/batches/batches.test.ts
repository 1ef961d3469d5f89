/**
 * The OpenAI Batch API through the official openai SDK: a JSONL batch across an OpenAI, a Claude and a Gemini model
 * (the last two translated), run by the gateway from its queue, polled to completion, its output matched line by
 * line against the same requests made one by one, each line charged once at the batch price; validation failures;
 * cancel; other accounts' batches; the whole file's worst case refused up front when the account cannot pay it.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, flushWrites, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from '../../support/mock-anthropic-upstream.js';
import { startMockGeminiUpstream, type MockGeminiUpstream } from '../../support/mock-gemini-upstream.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';

const MODELS = { openai: 'batch-gpt', anthropic: 'batch-claude', gemini: 'batch-gemini' } as const;
/** USD per million tokens: normal, and the operator's batch prices (half). */
const PRICING = { input_per_mtok: 2, output_per_mtok: 8, batch_input_per_mtok: 1, batch_output_per_mtok: 4 };
const NANO_PER_TOKEN = { input: 1_000n, output: 4_000n };

let gateway: TestGateway;
let openai: MockOpenAIUpstream;
let anthropic: MockAnthropicUpstream;
let gemini: MockGeminiUpstream;
let account: SeededAccount;
let client: OpenAI;

interface UsageRow { request_id: string; model: string | null; status: number; prompt_tokens: number; completion_tokens: number; cost_usd: number }

const modelCycle = [MODELS.openai, MODELS.anthropic, MODELS.gemini] as const;

function jsonl(count: number, extra: (index: number) => Record<string, unknown> = () => ({})): string {
  let text = '';
  for (let index = 0; index < count; index += 1) {
    const body = { model: modelCycle[index % 3], messages: [{ role: 'user', content: `Line ${index}: say something about the number ${index}.` }], max_tokens: 50, ...extra(index) };
    text += `${JSON.stringify({ custom_id: `request-${index}`, method: 'POST', url: '/v1/chat/completions', body })}\n`;
  }
  return text;
}

async function upload(text: string, target = client): Promise<string> {
  return (await target.files.create({ file: await toFile(Buffer.from(text), 'batch.jsonl'), purpose: 'batch' })).id;
}

async function waitFor(id: string, done: (status: string) => boolean, target = client): Promise<OpenAI.Batches.Batch> {
  for (let attempt = 0; attempt < 600; attempt += 1) {
    const batch = await target.batches.retrieve(id);
    if (done(batch.status)) return batch;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`batch ${id} did not finish`);
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

beforeAll(async () => {
  [openai, anthropic, gemini] = await Promise.all([startMockOpenAIUpstream(), startMockAnthropicUpstream(), startMockGeminiUpstream()]);
  // The gateway's own queue is under test here: one-model batches are not sent to the provider's Batch API.
  gateway = await startTestGateway({ env: { BATCH_POLL_MS: '20', BATCH_CONCURRENCY: '4', BATCH_PROVIDER_PASS_THROUGH: 'off' } });
  await addRoutedModel(gateway, { model: MODELS.openai, pricing: PRICING, channel: { name: 'openai-up', type: 'openai', base_url: openai.url, api_key: 'sk-upstream-test', models: { [MODELS.openai]: 'gpt-4o-mini' } } });
  await addRoutedModel(gateway, { model: MODELS.anthropic, pricing: PRICING, channel: { name: 'anthropic-up', type: 'anthropic', base_url: anthropic.url, api_key: 'sk-ant-upstream-test', models: { [MODELS.anthropic]: 'claude-sonnet-4-5' } } });
  await addRoutedModel(gateway, { model: MODELS.gemini, pricing: PRICING, channel: { name: 'gemini-up', type: 'gemini', base_url: gemini.url, api_key: 'gemini-upstream-test', models: { [MODELS.gemini]: 'gemini-2.5-flash' } } });
  account = await seedAccount(gateway, { balanceUsd: 50 });
  client = new OpenAI({ apiKey: account.key, baseURL: gateway.baseURL, maxRetries: 0 });
}, 60_000);

afterAll(async () => {
  await gateway?.close();
  await Promise.all([openai?.close(), anthropic?.close(), gemini?.close()]);
});

describe('batches', () => {
  it('runs a batch across OpenAI, Claude and Gemini models and charges each line once at the batch price', async () => {
    const input = jsonl(30);
    const balanceBefore = await balanceOf(account.accountId);
    const created = await client.batches.create({ input_file_id: await upload(input), endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { job: 'nightly' } });
    expect(created).toMatchObject({ object: 'batch', status: 'in_progress', endpoint: '/v1/chat/completions', request_counts: { total: 30, completed: 0, failed: 0 }, metadata: { job: 'nightly' } });
    const batch = await waitFor(created.id, (status) => status === 'completed');
    expect(batch.request_counts).toEqual({ total: 30, completed: 30, failed: 0 });
    expect(batch.output_file_id).toBeTruthy();
    expect(batch.error_file_id).toBeNull();
    expect(batch.completed_at).toBeGreaterThanOrEqual(batch.created_at);
    await flushWrites(gateway);
    const balanceAfter = await balanceOf(account.accountId);

    const output = await (await client.files.content(batch.output_file_id as string)).text();
    const results = output.trim().split('\n').map((line) => JSON.parse(line) as { custom_id: string; response: { status_code: number; request_id: string; body: OpenAI.Chat.ChatCompletion }; error: null });
    expect(results).toHaveLength(30);
    const inputs = input.trim().split('\n').map((line) => JSON.parse(line) as { custom_id: string; body: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming });
    for (const [index, result] of results.entries()) {
      const line = inputs[index];
      expect(result.custom_id).toBe(line?.custom_id);
      expect(result.response.status_code).toBe(200);
      expect(result.error).toBeNull();
      expect(result.response.body.object).toBe('chat.completion');
      // The same request made on its own answers the same (the mocks answer deterministically).
      const single = await client.chat.completions.create((line as (typeof inputs)[number]).body);
      expect(result.response.body.model).toBe(single.model);
      expect(result.response.body.choices[0]?.message.content).toBe(single.choices[0]?.message.content);
      // The same tokens, at half the price (the batch prices): the answer's `usage.cost` says so.
      const { cost: batchCost, ...batchUsage } = result.response.body.usage as OpenAI.CompletionUsage & { cost: number };
      const { cost: singleCost, ...singleUsage } = single.usage as OpenAI.CompletionUsage & { cost: number };
      expect(batchUsage).toEqual(singleUsage);
      expect(Math.round(batchCost * 1e9) * 2).toBe(Math.round(singleCost * 1e9));
    }

    // One usage row per line, at the batch price, and the batch's usage sums them.
    const rows = (await usageRows(account.keyId)).filter((row) => row.request_id.startsWith(`req_${batch.id}_`));
    expect(rows).toHaveLength(30);
    expect(new Set(rows.map((row) => row.model))).toEqual(new Set(Object.values(MODELS)));
    let total = 0n;
    for (const row of rows) {
      const expected = BigInt(row.prompt_tokens) * NANO_PER_TOKEN.input + BigInt(row.completion_tokens) * NANO_PER_TOKEN.output;
      expect(BigInt(Math.round(row.cost_usd * 1e9)), row.request_id).toBe(expected);
      total += expected;
    }
    expect(batch.usage?.input_tokens).toBe(rows.reduce((sum, row) => sum + row.prompt_tokens, 0));
    expect(batch.usage?.output_tokens).toBe(rows.reduce((sum, row) => sum + row.completion_tokens, 0));
    // The wallet moved by exactly the lines' charges.
    expect(balanceBefore - balanceAfter).toBe(total);

    // The operator sees the lines finish in the queue's throughput.
    const queue = await gateway.admin<{ pending_lines: number; finished_last_minute: number }>('GET', '/admin/batches/queue');
    expect(queue.status).toBe(200);
    expect(queue.body.pending_lines).toBe(0);
    expect(queue.body.finished_last_minute).toBeGreaterThanOrEqual(30);

    // The listing pages by cursor, newest first.
    const listed = await client.batches.list({ limit: 1 });
    expect(listed.data[0]?.id).toBe(batch.id);
  });

  it('answers a file with bad lines as a failed batch with its errors, and runs nothing', async () => {
    const lines = [
      JSON.stringify({ custom_id: 'a', method: 'POST', url: '/v1/chat/completions', body: { model: MODELS.openai, messages: [] } }),
      JSON.stringify({ custom_id: 'a', method: 'POST', url: '/v1/chat/completions', body: { model: MODELS.openai, messages: [] } }),
      JSON.stringify({ custom_id: 'b', method: 'POST', url: '/v1/embeddings', body: { model: MODELS.openai } }),
      'not json',
    ];
    const batch = await client.batches.create({ input_file_id: await upload(`${lines.join('\n')}\n`), endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect(batch.status).toBe('failed');
    expect(batch.errors?.data?.map((error) => [error.line, error.code])).toEqual([[2, 'duplicate_custom_id'], [3, 'mismatched_endpoint'], [4, 'invalid_json_line']]);
    const unknown = await client.batches.create({ input_file_id: await upload(jsonl(1, () => ({ model: 'no-such-model' }))), endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect(unknown.errors?.data?.[0]).toMatchObject({ code: 'model_not_found', line: 1 });
    await expect(client.batches.create({ input_file_id: 'file_missing', endpoint: '/v1/chat/completions', completion_window: '24h' })).rejects.toMatchObject({ status: 404 });
    await expect(client.batches.create({ input_file_id: 'x', endpoint: '/v1/nope' as '/v1/chat/completions', completion_window: '24h' })).rejects.toMatchObject({ status: 400 });
  });

  it('refuses at creation a batch naming a model outside the key\'s allowed models: nothing held, queued or sent', async () => {
    const limited = await seedAccount(gateway, { balanceUsd: 5, key: { allowed_models: [MODELS.openai] } });
    const limitedClient = new OpenAI({ apiKey: limited.key, baseURL: gateway.baseURL, maxRetries: 0 });
    const sent = { openai: openai.requests.length, anthropic: anthropic.requests.length, gemini: gemini.requests.length };
    const balanceBefore = await balanceOf(limited.accountId);
    // Lines 1 and 4 name the allowed model; 2 (Claude) and 3 (Gemini) do not.
    const mixed = await limitedClient.batches.create({ input_file_id: await upload(jsonl(4), limitedClient), endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect(mixed).toMatchObject({ object: 'batch', status: 'failed', request_counts: { total: 0, completed: 0, failed: 0 }, output_file_id: null, error_file_id: null });
    expect(mixed.errors?.data).toEqual([
      { code: 'model_not_allowed', message: `This API key is not allowed to use model '${MODELS.anthropic}'.`, line: 2, param: 'body.model' },
      { code: 'model_not_allowed', message: `This API key is not allowed to use model '${MODELS.gemini}'.`, line: 3, param: 'body.model' },
    ]);
    expect(mixed.failed_at).toBeGreaterThan(0);
    // Stored failed with no line to run; it held nothing, and no line reached any upstream or left a usage row.
    expect(await limitedClient.batches.retrieve(mixed.id)).toMatchObject({ status: 'failed', request_counts: { total: 0, completed: 0, failed: 0 } });
    expect(await balanceOf(limited.accountId)).toBe(balanceBefore);
    expect(await gateway.gateway.services.storage.money.listHolds(limited.accountId)).toEqual([]);
    expect({ openai: openai.requests.length, anthropic: anthropic.requests.length, gemini: gemini.requests.length }).toEqual(sent);
    expect(await usageRows(limited.keyId)).toEqual([]);
    // The same key batches its allowed model.
    const allowed = await limitedClient.batches.create({ input_file_id: await upload(jsonl(3, () => ({ model: MODELS.openai })), limitedClient), endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect(allowed.status).toBe('in_progress');
    expect((await waitFor(allowed.id, (status) => status === 'completed', limitedClient)).request_counts).toEqual({ total: 3, completed: 3, failed: 0 });
    expect((await usageRows(limited.keyId)).map((row) => [row.model, row.status])).toEqual([[MODELS.openai, 200], [MODELS.openai, 200], [MODELS.openai, 200]]);
  });

  it('refuses a batch whose worst case the account cannot pay, and keeps batches and files from other accounts', async () => {
    const poor = await seedAccount(gateway, { balanceUsd: 0.0001 });
    const poorClient = new OpenAI({ apiKey: poor.key, baseURL: gateway.baseURL, maxRetries: 0 });
    const fileId = await upload(jsonl(30, () => ({ max_tokens: 100_000 })), poorClient);
    await expect(poorClient.batches.create({ input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h' })).rejects.toMatchObject({ status: 402 });
    // Someone else's file cannot be named, and someone else's batch cannot be read or cancelled.
    await expect(poorClient.batches.create({ input_file_id: await upload(jsonl(1)), endpoint: '/v1/chat/completions', completion_window: '24h' })).rejects.toMatchObject({ status: 404 });
    const mine = (await client.batches.list()).data[0] as OpenAI.Batches.Batch;
    await expect(poorClient.batches.retrieve(mine.id)).rejects.toMatchObject({ status: 404 });
    await expect(poorClient.batches.cancel(mine.id)).rejects.toMatchObject({ status: 404 });
    expect((await poorClient.batches.list()).data).toEqual([]);
  });

  it('cancels a batch mid-way: lines not started are never run nor charged', async () => {
    openai.close();
    const slow = await startMockOpenAIUpstream({ responseDelayMs: 300 });
    await gateway.admin('POST', '/admin/models', { id: 'slow-gpt', pricing: PRICING });
    await gateway.admin('POST', '/admin/channels', { name: 'slow-up', type: 'openai', base_url: slow.url, api_key: 'sk-upstream-test', models: { 'slow-gpt': 'gpt-4o-mini' } });
    await new Promise((resolve) => setTimeout(resolve, 200));
    try {
      const created = await client.batches.create({ input_file_id: await upload(jsonl(40, () => ({ model: 'slow-gpt' }))), endpoint: '/v1/chat/completions', completion_window: '24h' });
      await waitFor(created.id, () => true);
      for (let attempt = 0; attempt < 200; attempt += 1) {
        if (((await client.batches.retrieve(created.id)).request_counts?.completed ?? 0) >= 4) break;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      const cancelling = await client.batches.cancel(created.id);
      expect(['cancelling', 'cancelled']).toContain(cancelling.status);
      const batch = await waitFor(created.id, (status) => status === 'cancelled');
      const ran = (batch.request_counts?.completed ?? 0) + (batch.request_counts?.failed ?? 0);
      expect(ran).toBeGreaterThanOrEqual(4);
      expect(ran).toBeLessThan(40);
      const errors = (await (await client.files.content(batch.error_file_id as string)).text()).trim().split('\n').map((line) => JSON.parse(line) as { error: { code: string } | null });
      expect(errors.filter((line) => line.error?.code === 'batch_cancelled')).toHaveLength(40 - ran);
      const rows = (await usageRows(account.keyId)).filter((row) => row.request_id.startsWith(`req_${batch.id}_`));
      expect(rows).toHaveLength(ran);
    } finally {
      await slow.close();
    }
  });
});
