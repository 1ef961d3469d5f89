/**
 * A batch whose instance stops mid-way is finished by another instance sharing the database: lines the stopped
 * instance leased are taken over once their lease runs out, a line it had already run and charged is not run or
 * charged again, and every other line is charged exactly once.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLineRequest } from '../../../src/batches/line-request.js';
import { lineRequestId } from '../../../src/batches/batch-runner.js';
import { batchRoutes } from '../../../src/http/routes/batch-endpoints.js';
import { addRoutedModel, flushWrites, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from '../../support/mock-anthropic-upstream.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';

let first: TestGateway;
let second: TestGateway | null = null;
let openai: MockOpenAIUpstream;
let anthropic: MockAnthropicUpstream;
let account: SeededAccount;

/** Both instances read the channels' sealed credentials with one key. */
const SECRET_KEY = 'batch-resume-test-secret-key-0123456789';
const PRICING = { input_per_mtok: 2, output_per_mtok: 8, batch_input_per_mtok: 1, batch_output_per_mtok: 4 };

beforeAll(async () => {
  [openai, anthropic] = await Promise.all([startMockOpenAIUpstream(), startMockAnthropicUpstream()]);
  // The first instance queues the batch but runs no lines itself (it stands for the instance that stops). The
  // gateway's own queue is under test: none of the batch's lines is sent to a provider's Batch API.
  first = await startTestGateway({ env: { BATCH_CONCURRENCY: '0', SECRET_KEY, BATCH_PROVIDER_PASS_THROUGH: 'off' } });
  await addRoutedModel(first, { model: 'resume-gpt', pricing: PRICING, channel: { name: 'openai-up', type: 'openai', base_url: openai.url, api_key: 'sk-upstream-test', models: { 'resume-gpt': 'gpt-4o-mini' } } });
  await addRoutedModel(first, { model: 'resume-claude', pricing: PRICING, channel: { name: 'anthropic-up', type: 'anthropic', base_url: anthropic.url, api_key: 'sk-ant-upstream-test', models: { 'resume-claude': 'claude-sonnet-4-5' } } });
  account = await seedAccount(first, { balanceUsd: 20 });
}, 60_000);

afterAll(async () => {
  await second?.close();
  await first?.close();
  await Promise.all([openai?.close(), anthropic?.close()]);
});

describe('batch resume', () => {
  it('finishes a stopped instance\'s batch on another instance without running or charging a line twice', async () => {
    const client = new OpenAI({ apiKey: account.key, baseURL: first.baseURL, maxRetries: 0 });
    let text = '';
    for (let index = 0; index < 12; index += 1) {
      const body = { model: index % 2 === 0 ? 'resume-gpt' : 'resume-claude', messages: [{ role: 'user', content: `Question ${index}` }], max_tokens: 20 };
      text += `${JSON.stringify({ custom_id: `q-${index}`, method: 'POST', url: '/v1/chat/completions', body })}\n`;
    }
    const file = await client.files.create({ file: await toFile(Buffer.from(text), 'resume.jsonl'), purpose: 'batch' });
    const created = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });

    // The stopping instance leases four lines with a lease of one second, runs and is charged for the first of them,
    // and stops before it records any outcome.
    const services = first.gateway.services;
    const now = services.clock.now();
    const leased = await services.storage.batches.claimLines('stopped-instance', now, now + 1000, 4);
    expect(leased).toHaveLength(4);
    const ran = leased[0] as (typeof leased)[number];
    const [key, owner] = await Promise.all([services.storage.keys.getById(ran.keyId), services.storage.accounts.getById(ran.accountId)]);
    const route = batchRoutes(services).get('/v1/chat/completions');
    if (route === undefined || key === null || owner === null) throw new Error('setup');
    const answer = await runLineRequest({ ...route, path: ran.endpoint, batchId: ran.batchId, requestId: lineRequestId(ran.batchId, ran.line), key, account: owner, body: ran.body });
    expect(answer.status).toBe(200);
    await flushWrites(first);

    // Another instance on the same database takes over once the leases have run out.
    second = await startTestGateway({ env: { DATABASE_URL: first.databaseUrl, SECRET_KEY, BATCH_CONCURRENCY: '3', BATCH_POLL_MS: '20', BATCH_PROVIDER_PASS_THROUGH: 'off' } });
    const secondClient = new OpenAI({ apiKey: account.key, baseURL: second.baseURL, maxRetries: 0 });
    let batch = await secondClient.batches.retrieve(created.id);
    for (let attempt = 0; attempt < 400 && !['completed', 'failed', 'expired'].includes(batch.status); attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      batch = await secondClient.batches.retrieve(created.id);
    }
    expect(batch.status).toBe('completed');
    // The line the stopped instance ran is reported as lost (it was charged); the eleven others answered.
    expect(batch.request_counts).toEqual({ total: 12, completed: 11, failed: 1 });
    const errors = (await (await secondClient.files.content(batch.error_file_id as string)).text()).trim().split('\n');
    expect(errors).toHaveLength(1);
    expect(JSON.parse(errors[0] as string)).toMatchObject({ custom_id: ran.customId, response: { status_code: 500 } });

    // Exactly one usage row per line, the first one's from the stopped instance: nothing charged twice.
    await flushWrites(second);
    const rows: Array<{ request_id: string; cost_usd: number }> = [];
    let cursor: string | null = null;
    for (let page = 0; page < 10; page += 1) {
      const usage: { body: { data: Array<{ request_id: string; cost_usd: number }>; next_cursor: string | null } } = await second.admin('GET', `/admin/usage?key_id=${account.keyId}&limit=200${cursor === null ? '' : `&cursor=${cursor}`}`);
      rows.push(...usage.body.data);
      cursor = usage.body.next_cursor;
      if (cursor === null) break;
    }
    const lineRows = rows.filter((row) => row.request_id.startsWith(`req_${created.id}_`));
    expect(lineRows.map((row) => row.request_id).sort()).toEqual(Array.from({ length: 12 }, (_, index) => lineRequestId(created.id, index + 1)).sort());
  }, 60_000);
});
