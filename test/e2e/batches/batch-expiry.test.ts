/**
 * A batch whose completion window passes before its lines ran ends `expired`: its lines are never run nor charged,
 * each is in the error file as expired, and the worst case it held is released whole. One instance (which runs no
 * lines) takes the batch; a day later by the shared clock, a second instance on the same database ends it.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchHolder } from '../../../src/billing/money-pools.js';
import { usdToNano } from '../../../src/billing/money.js';
import type { Clock } from '../../../src/shared/clock.js';
import { addRoutedModel, flushWrites, seedAccount, startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { waitUntil } from '../cli/cli-process.js';

const MODEL = 'expiry-gpt';
/** Both instances read the channels' sealed credentials with one key. */
const SECRET_KEY = 'batch-expiry-test-secret-key-0123456789';

/** The wall clock, movable forward so a batch's window passes. */
class ForwardClock implements Clock {
  offset = 0;
  now(): number {
    return Date.now() + this.offset;
  }
}

const clock = new ForwardClock();
let upstream: MockOpenAIUpstream;
let taker: TestGateway;
let runner: TestGateway | undefined;

beforeAll(async () => {
  upstream = await startMockOpenAIUpstream();
  // This instance runs no lines: the batch waits in the queue.
  taker = await startTestGateway({ clock, env: { BATCH_CONCURRENCY: '0', SECRET_KEY, BATCH_PROVIDER_PASS_THROUGH: 'off' } });
  await addRoutedModel(taker, { model: MODEL, pricing: { input_per_mtok: 2, output_per_mtok: 8, batch_input_per_mtok: 1, batch_output_per_mtok: 4 }, channel: { name: 'expiry-up', type: 'openai', base_url: upstream.url, api_key: 'sk-upstream-test', models: { [MODEL]: 'gpt-4o-mini' } } });
}, 60_000);

afterAll(async () => {
  await runner?.close();
  await taker?.close();
  await upstream?.close();
});

describe('a batch whose window passes', () => {
  it('ends expired: no line run nor charged, each line in the error file, the whole hold released', async () => {
    const owner = await seedAccount(taker, { balanceUsd: 1 });
    const client = new OpenAI({ apiKey: owner.key, baseURL: taker.baseURL, maxRetries: 0 });
    let text = '';
    for (let index = 0; index < 5; index += 1) {
      text += `${JSON.stringify({ custom_id: `late-${index}`, method: 'POST', url: '/v1/chat/completions', body: { model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: `late ${index}` }] } })}\n`;
    }
    const file = await client.files.create({ file: await toFile(Buffer.from(text), 'late.jsonl'), purpose: 'batch' });
    const created = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const holds = async (target: TestGateway): Promise<bigint> => (await target.gateway.services.storage.money.listHolds(owner.accountId))
      .filter((hold) => hold.instanceId === batchHolder(created.id)).reduce((sum, hold) => sum + hold.heldNano, 0n);
    expect(await holds(taker)).toBeGreaterThan(0n);

    // A day and a minute later, an instance that runs lines finds the window passed.
    clock.offset += 24 * 3600 * 1000 + 60_000;
    runner = await startTestGateway({ clock, env: { DATABASE_URL: taker.databaseUrl, SECRET_KEY, BATCH_POLL_MS: '20', BATCH_CONCURRENCY: '2', BATCH_PROVIDER_PASS_THROUGH: 'off' } });
    const runnerClient = new OpenAI({ apiKey: owner.key, baseURL: runner.baseURL, maxRetries: 0 });
    let batch = await runnerClient.batches.retrieve(created.id);
    await waitUntil(async () => (batch = await runnerClient.batches.retrieve(created.id)).status === 'expired', 60_000, 'the batch expired');
    // As with a cancel, lines that never ran are neither completed nor failed; the error file names each.
    expect(batch.request_counts).toEqual({ total: 5, completed: 0, failed: 0 });
    expect(batch.output_file_id ?? null).toBeNull();
    const errors = (await (await runnerClient.files.content(batch.error_file_id as string)).text()).trim().split('\n')
      .map((line) => JSON.parse(line) as { custom_id: string; error: { code: string } | null; response: unknown });
    expect(errors.map((line) => line.custom_id)).toEqual(['late-0', 'late-1', 'late-2', 'late-3', 'late-4']);
    for (const line of errors) expect(line.error?.code).toBe('batch_expired');

    // Nothing went upstream, nothing was charged, and the hold is gone: the wallet is whole.
    expect(upstream.requests.filter((request) => request.path.endsWith('/chat/completions'))).toHaveLength(0);
    await waitUntil(async () => (await holds(runner as TestGateway)) === 0n, 30_000, 'the batch\'s hold released');
    await flushWrites(runner);
    expect((await runner.gateway.services.storage.accounts.getById(owner.accountId))?.balanceNano).toBe(usdToNano(1));
    const check = await runner.admin<{ ok: boolean; problems: unknown[] }>('GET', `/admin/ledger/check?account_id=${owner.accountId}`);
    expect(check.body).toMatchObject({ ok: true, problems: [] });
  }, 120_000);
});
