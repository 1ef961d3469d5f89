/**
 * The gateway's batch queue runs at most BATCH_CONCURRENCY lines at a time per instance, and interactive requests
 * are not queued behind it: an upstream that counts the requests it holds at once never holds more batch lines than
 * that, a chat request sent while the batch runs is answered long before the batch ends, and the operator's queue
 * figures show the lines waiting and running meanwhile.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, seedAccount, startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { waitUntil } from '../cli/cli-process.js';

const CONCURRENCY = 2;
const LINES = 24;
const ANSWER_DELAY_MS = 400;

/** An OpenAI-compatible chat upstream that answers after a delay and counts the batch lines it holds at once. */
interface CountingUpstream {
  url: string;
  batchInFlight: number;
  maxBatchInFlight: number;
  batchAnswered: number;
  close(): Promise<void>;
}

async function startCountingUpstream(): Promise<CountingUpstream> {
  const state = { batchInFlight: 0, maxBatchInFlight: 0, batchAnswered: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { messages?: Array<{ content?: unknown }> };
      const text = String(body.messages?.at(-1)?.content ?? '');
      const batchLine = text.startsWith('batch line');
      if (batchLine) {
        state.batchInFlight += 1;
        state.maxBatchInFlight = Math.max(state.maxBatchInFlight, state.batchInFlight);
      }
      setTimeout(() => {
        if (batchLine) {
          state.batchInFlight -= 1;
          state.batchAnswered += 1;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({
          id: 'chatcmpl-counting', object: 'chat.completion', created: Math.floor(Date.now() / 1000), model: 'counting-model',
          choices: [{ index: 0, message: { role: 'assistant', content: `Echo: ${text}` }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        }));
      }, ANSWER_DELAY_MS);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}/v1`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}

let gateway: TestGateway;
let upstream: CountingUpstream;

beforeAll(async () => {
  upstream = await startCountingUpstream();
  gateway = await startTestGateway({ env: { BATCH_POLL_MS: '20', BATCH_CONCURRENCY: String(CONCURRENCY), BATCH_PROVIDER_PASS_THROUGH: 'off' } });
  await addRoutedModel(gateway, { model: 'counted', channel: { name: 'counting', type: 'openai-compatible', base_url: upstream.url, api_key: 'sk-counting', models: { counted: 'counting-model' } } });
  await gateway.gateway.services.catalog.reload();
}, 60_000);

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

describe('the batch queue\'s concurrency', () => {
  it('runs at most BATCH_CONCURRENCY lines at once, answers interactive requests meanwhile, and shows its depth to the operator', async () => {
    const account = await seedAccount(gateway, { balanceUsd: 10 });
    const client = new OpenAI({ apiKey: account.key, baseURL: gateway.baseURL, maxRetries: 0 });
    let text = '';
    for (let index = 0; index < LINES; index += 1) {
      text += `${JSON.stringify({ custom_id: `line-${index}`, method: 'POST', url: '/v1/chat/completions', body: { model: 'counted', max_tokens: 20, messages: [{ role: 'user', content: `batch line ${index}` }] } })}\n`;
    }
    const file = await client.files.create({ file: await toFile(Buffer.from(text), 'lines.jsonl'), purpose: 'batch' });
    const created = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });

    // Once the queue is under way, the operator sees lines waiting and no more running than the instance allows.
    await waitUntil(async () => upstream.batchInFlight > 0, 30_000, 'batch lines reach the upstream');
    const queue = await gateway.admin<{ pending_lines: number; running_lines: number; in_progress_batches: number }>('GET', '/admin/batches/queue');
    expect(queue.body.pending_lines).toBeGreaterThan(0);
    expect(queue.body.running_lines).toBeGreaterThan(0);
    expect(queue.body.running_lines).toBeLessThanOrEqual(CONCURRENCY);
    expect(queue.body.in_progress_batches).toBe(1);

    // An interactive request is answered while most of the batch still waits: it is not queued behind the lines.
    const answer = await client.chat.completions.create({ model: 'counted', messages: [{ role: 'user', content: 'interactive' }] });
    expect(answer.choices[0]?.message.content).toBe('Echo: interactive');
    expect(upstream.batchAnswered).toBeLessThan(LINES);
    expect((await client.batches.retrieve(created.id)).status).toBe('in_progress');

    await waitUntil(async () => (await client.batches.retrieve(created.id)).status === 'completed', 120_000, 'the batch completed');
    expect(upstream.batchAnswered).toBe(LINES);
    // The lines ran in parallel up to the limit, never past it.
    expect(upstream.maxBatchInFlight).toBe(CONCURRENCY);
  }, 180_000);
});
