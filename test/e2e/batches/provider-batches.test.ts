/**
 * Batches sent to the provider's own Batch API: an OpenAI-format batch whose lines all name a model an OpenAI channel
 * serves goes to that channel's /v1/files + /v1/batches (model names mapped), is polled, and its results come back
 * line by line (custom_id kept), each charged once at the model's batch price with a usage row marked with the
 * batch. A cancel reaches the provider; a mixed-model file is split (the first model's lines to the provider, the
 * rest on the gateway's queue) and a channel switched off stays on the queue.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchHolder } from '../../../src/billing/money-pools.js';
import { addRoutedModel, flushWrites, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';

let gateway: TestGateway;
let upstream: MockOpenAIUpstream;
let slowUpstream: MockOpenAIUpstream;
let kept: MockOpenAIUpstream;
let account: SeededAccount;
let client: OpenAI;

/** Batch prices: a line costs prompt × 1000 + completion × 4000 nano-dollars. */
const PRICING = { input_per_mtok: 2, output_per_mtok: 8, batch_input_per_mtok: 1, batch_output_per_mtok: 4 };

beforeAll(async () => {
  [upstream, slowUpstream, kept] = await Promise.all([startMockOpenAIUpstream(), startMockOpenAIUpstream({ batchLineDelayMs: 300 }), startMockOpenAIUpstream()]);
  gateway = await startTestGateway({ env: { BATCH_POLL_MS: '20', BATCH_PROVIDER_POLL_SECONDS: '1' } });
  await addRoutedModel(gateway, { model: 'pass-gpt', pricing: PRICING, channel: { name: 'openai-batches', type: 'openai', base_url: upstream.url, api_key: 'sk-upstream-test', models: { 'pass-gpt': 'gpt-4o-mini' } } });
  await addRoutedModel(gateway, { model: 'pass-other', pricing: PRICING, channel: { name: 'openai-batches-2', type: 'openai', base_url: upstream.url, api_key: 'sk-upstream-test', models: { 'pass-other': 'gpt-4o' } } });
  await addRoutedModel(gateway, { model: 'pass-slow', pricing: PRICING, channel: { name: 'openai-slow', type: 'openai', base_url: slowUpstream.url, api_key: 'sk-upstream-test', models: { 'pass-slow': 'gpt-4o-mini' } } });
  await addRoutedModel(gateway, { model: 'pass-tight', pricing: PRICING, channel: { name: 'openai-tight', type: 'openai', base_url: upstream.url, api_key: 'sk-upstream-test', models: { 'pass-tight': 'gpt-4o-mini' } } });
  await addRoutedModel(gateway, { model: 'kept-gpt', pricing: PRICING, channel: { name: 'openai-kept', type: 'openai', base_url: kept.url, api_key: 'sk-upstream-test', models: { 'kept-gpt': 'gpt-4o-mini' }, settings: { provider_batches: false } } });
  account = await seedAccount(gateway, { balanceUsd: 20 });
  client = new OpenAI({ apiKey: account.key, baseURL: gateway.baseURL, maxRetries: 0 });
}, 60_000);

afterAll(async () => {
  await gateway?.close();
  await Promise.all([upstream?.close(), slowUpstream?.close(), kept?.close()]);
});

const line = (customId: string, model: string, content: string): string =>
  `${JSON.stringify({ custom_id: customId, method: 'POST', url: '/v1/chat/completions', body: { model, messages: [{ role: 'user', content }], max_tokens: 12 } })}\n`;

async function create(text: string): Promise<OpenAI.Batch> {
  const file = await client.files.create({ file: await toFile(Buffer.from(text), 'input.jsonl'), purpose: 'batch' });
  return client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
}

async function ended(id: string): Promise<OpenAI.Batch> {
  let batch = await client.batches.retrieve(id);
  const deadline = Date.now() + 100_000;
  while (!['completed', 'failed', 'expired', 'cancelled'].includes(batch.status) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    batch = await client.batches.retrieve(id);
  }
  return batch;
}

async function lines(id: string | null | undefined): Promise<Array<{ custom_id: string; response: { status_code: number; body: OpenAI.ChatCompletion } | null }>> {
  if (id === null || id === undefined) return [];
  return (await (await client.files.content(id)).text()).trim().split('\n').map((entry) => JSON.parse(entry) as { custom_id: string; response: { status_code: number; body: OpenAI.ChatCompletion } | null });
}

async function usageRows(batchId: string, keyId = account.keyId): Promise<Array<{ request_id: string; prompt_tokens: number; completion_tokens: number; cost_usd: number; tags: Record<string, string>; channel_id: string | null }>> {
  await flushWrites(gateway);
  const answer = await gateway.admin<{ data: Array<{ request_id: string; prompt_tokens: number; completion_tokens: number; cost_usd: number; tags: Record<string, string>; channel_id: string | null }> }>('GET', `/admin/usage?key_id=${keyId}&limit=200`);
  return answer.body.data.filter((row) => row.request_id.startsWith(`req_${batchId}_`));
}

describe('batches passed through to the provider\'s Batch API', () => {
  it('runs a one-model batch on the provider, maps results back line by line and charges each once at the batch price', async () => {
    let text = '';
    for (let index = 0; index < 10; index += 1) text += line(`row-${index}`, 'pass-gpt', `Provider batch question ${index}`);
    const before = await gateway.gateway.services.ledger.availableBalance(account.accountId);
    const created = await create(text);
    const batch = await ended(created.id);
    expect(batch.status).toBe('completed');
    expect(batch.request_counts).toEqual({ total: 10, completed: 10, failed: 0 });

    // The provider got the translated file (its own model name) and ran the batch.
    const upstreamBatch = [...upstream.batches.batches.values()].find((entry) => entry.metadata?.unigate_batch === created.id);
    expect(upstreamBatch).toMatchObject({ status: 'completed', request_counts: { total: 10, completed: 10, failed: 0 }, model: 'gpt-4o-mini' });
    const sent = upstream.batches.files.get(upstreamBatch?.input_file_id as string)?.content.toString('utf8') ?? '';
    expect(sent.trim().split('\n').map((entry) => (JSON.parse(entry) as { body: { model: string } }).body.model)).toEqual(Array.from({ length: 10 }, () => 'gpt-4o-mini'));

    const output = await lines(batch.output_file_id);
    expect(output.map((entry) => entry.custom_id)).toEqual(Array.from({ length: 10 }, (_, index) => `row-${index}`));
    for (const entry of output) expect(entry.response?.status_code).toBe(200);

    // One usage row per line, marked with the batch, at the batch price; the ledger moved by exactly their sum.
    const rows = await usageRows(created.id);
    expect(rows.map((row) => row.request_id).sort()).toEqual(Array.from({ length: 10 }, (_, index) => `req_${created.id}_${index + 1}`).sort());
    let total = 0n;
    for (const row of rows) {
      const expected = BigInt(row.prompt_tokens) * 1000n + BigInt(row.completion_tokens) * 4000n;
      expect(row.prompt_tokens).toBeGreaterThan(0);
      expect(BigInt(Math.round(row.cost_usd * 1e9))).toBe(expected);
      expect(row.tags).toMatchObject({ batch: created.id });
      total += expected;
    }
    const after = await gateway.gateway.services.ledger.availableBalance(account.accountId);
    expect(before - after).toBe(total);
  }, 120_000);

  it('charges each provider-answered line against the batch\'s hold when the balance just covers its worst case', async () => {
    const bodies = Array.from({ length: 4 }, (_, index) => ({ model: 'pass-tight', messages: [{ role: 'user', content: `Tight question ${index}` }], max_tokens: 12 }));
    // The batch's worst case at batch prices: each prompt at a token a byte of its body, each answer at its cap.
    const worstCase = bodies.reduce((sum, body) => sum + BigInt(Buffer.byteLength(JSON.stringify(body))) * 1000n + 12n * 4000n, 0n);
    const tight = await seedAccount(gateway, { balanceUsd: Number(worstCase) / 1e9 });
    const tightClient = new OpenAI({ apiKey: tight.key, baseURL: gateway.baseURL, maxRetries: 0 });
    const { storage, ledger } = gateway.gateway.services;
    expect(await ledger.availableBalance(tight.accountId)).toBe(worstCase);

    const file = await tightClient.files.create({ file: await toFile(Buffer.from(bodies.map((body, index) => `${JSON.stringify({ custom_id: `tight-${index}`, method: 'POST', url: '/v1/chat/completions', body })}\n`).join('')), 'tight.jsonl'), purpose: 'batch' });
    const created = await tightClient.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    // The whole balance is held for the batch: nothing is free beside the hold.
    const held = (await storage.money.listHolds(tight.accountId)).filter((hold) => hold.instanceId === batchHolder(created.id));
    expect(held.reduce((sum, hold) => sum + hold.heldNano, 0n)).toBe(worstCase);

    let batch = await tightClient.batches.retrieve(created.id);
    const deadline = Date.now() + 100_000;
    while (!['completed', 'failed', 'expired', 'cancelled'].includes(batch.status) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      batch = await tightClient.batches.retrieve(created.id);
    }
    expect(batch.status).toBe('completed');
    expect(batch.request_counts).toEqual({ total: 4, completed: 4, failed: 0 });
    expect([...upstream.batches.batches.values()].some((entry) => entry.metadata?.unigate_batch === created.id)).toBe(true);

    // Every line is charged in full, from the hold: its usage row, its ledger entry and its tokens at the batch price agree.
    const rows = await usageRows(created.id, tight.keyId);
    expect(rows).toHaveLength(4);
    const entries = new Map((await storage.ledger.listByAccount(tight.accountId, { limit: 100 })).data.filter((entry) => entry.kind === 'usage').map((entry) => [entry.requestId, entry]));
    let total = 0n;
    for (const row of rows) {
      const expected = BigInt(row.prompt_tokens) * 1000n + BigInt(row.completion_tokens) * 4000n;
      expect(expected).toBeGreaterThan(0n);
      expect(BigInt(Math.round(row.cost_usd * 1e9))).toBe(expected);
      expect(entries.get(row.request_id)).toMatchObject({ amountNano: -expected, shortfallNano: 0n });
      total += expected;
    }
    expect(total).toBeLessThanOrEqual(worstCase);
    // The balance moved by exactly the lines' charges; the rest of the hold went back.
    expect(worstCase - (await ledger.availableBalance(tight.accountId))).toBe(total);
    const holdOf = async () => (await storage.money.listHolds(tight.accountId)).filter((hold) => hold.instanceId === batchHolder(created.id));
    for (let attempt = 0; attempt < 100 && (await holdOf()).length > 0; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await holdOf()).toEqual([]);
    const check = await gateway.admin<{ ok: boolean; problems: unknown[] }>('GET', `/admin/ledger/check?account_id=${tight.accountId}`);
    expect(check.body).toMatchObject({ ok: true, problems: [] });
  }, 120_000);

  it('passes a cancel on to the provider; lines it ran are charged, the rest are cancelled', async () => {
    let text = '';
    for (let index = 0; index < 30; index += 1) text += line(`slow-${index}`, 'pass-slow', `Slow question ${index}`);
    const created = await create(text);
    // Cancelled once the provider has run some lines.
    const deadline = Date.now() + 20_000;
    let upstreamBatch = [...slowUpstream.batches.batches.values()][0];
    while ((upstreamBatch === undefined || upstreamBatch.request_counts.completed < 2) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      upstreamBatch = [...slowUpstream.batches.batches.values()][0];
    }
    expect((await client.batches.cancel(created.id)).status).toBe('cancelling');
    const batch = await ended(created.id);
    expect(batch.status).toBe('cancelled');
    expect(upstreamBatch?.status).toBe('cancelled');
    const ran = upstreamBatch?.request_counts.completed ?? 0;
    expect(ran).toBeGreaterThan(0);
    expect(ran).toBeLessThan(30);
    expect(batch.request_counts?.completed).toBe(ran);
    expect((await lines(batch.output_file_id)).length).toBe(ran);
    expect((await lines(batch.error_file_id)).length).toBe(30 - ran);
    expect((await usageRows(created.id)).length).toBe(ran);
  }, 120_000);

  it('splits a mixed-model file and keeps a channel switched off on the gateway\'s own queue', async () => {
    const before = upstream.batches.batches.size;
    const direct = (): number => upstream.requests.filter((request) => request.path === '/v1/chat/completions' && (request.body as { model?: string } | undefined)?.model === 'gpt-4o').length;
    const queuedBefore = direct();
    const mixed = await ended((await create(line('m-1', 'pass-gpt', 'one') + line('m-2', 'pass-other', 'two'))).id);
    expect(mixed.status).toBe('completed');
    expect(mixed.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
    // OpenAI's Batch API takes one model: the first model's line went to it, the other ran on the queue.
    expect(upstream.batches.batches.size).toBe(before + 1);
    const upstreamBatch = [...upstream.batches.batches.values()].find((entry) => entry.metadata?.unigate_batch === mixed.id);
    expect(upstreamBatch).toMatchObject({ model: 'gpt-4o-mini', request_counts: { total: 1 } });
    expect(direct()).toBe(queuedBefore + 1);
    expect((await lines(mixed.output_file_id)).map((entry) => entry.custom_id)).toEqual(['m-1', 'm-2']);

    const off = await ended((await create(line('k-1', 'kept-gpt', 'kept one') + line('k-2', 'kept-gpt', 'kept two'))).id);
    expect(off.status).toBe('completed');
    expect(kept.batches.batches.size).toBe(0);
    expect(kept.requests.filter((request) => request.path === '/v1/chat/completions')).toHaveLength(2);
    expect((await usageRows(off.id)).length).toBe(2);
  }, 120_000);
});
