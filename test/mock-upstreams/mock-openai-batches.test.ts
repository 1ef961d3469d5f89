/**
 * The mock OpenAI upstream's Files and Batch APIs, driven by the official `openai` SDK pointed straight at the mock:
 * every call the SDK makes parses into its types, and the batch's results are OpenAI's output and error lines.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../support/mock-openai-upstream.js';

let mock: MockOpenAIUpstream;
let slow: MockOpenAIUpstream;
let client: OpenAI;

beforeAll(async () => {
  [mock, slow] = await Promise.all([startMockOpenAIUpstream(), startMockOpenAIUpstream({ batchLineDelayMs: 200 })]);
  client = new OpenAI({ apiKey: 'sk-upstream-test', baseURL: mock.url, maxRetries: 0 });
});

afterAll(async () => {
  await Promise.all([mock?.close(), slow?.close()]);
});

const line = (customId: string, body: Record<string, unknown>, url = '/v1/chat/completions'): string => `${JSON.stringify({ custom_id: customId, method: 'POST', url, body })}\n`;

async function settled(sdk: OpenAI, id: string): Promise<OpenAI.Batch> {
  let batch = await sdk.batches.retrieve(id);
  for (let attempt = 0; attempt < 200 && !['completed', 'failed', 'expired', 'cancelled'].includes(batch.status); attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    batch = await sdk.batches.retrieve(id);
  }
  return batch;
}

describe('mock OpenAI Files API', () => {
  it('uploads, lists, retrieves, reads and deletes a file', async () => {
    const file = await client.files.create({ file: await toFile(Buffer.from(line('a', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })), 'in.jsonl'), purpose: 'batch' });
    expect(file).toMatchObject({ object: 'file', purpose: 'batch', filename: 'in.jsonl', status: 'processed' });
    expect(file.id).toMatch(/^file-/);
    expect((await client.files.retrieve(file.id)).bytes).toBe(file.bytes);
    expect((await client.files.list({ purpose: 'batch' })).data.map((entry) => entry.id)).toContain(file.id);
    expect(JSON.parse(await (await client.files.content(file.id)).text())).toMatchObject({ custom_id: 'a' });
    expect(await client.files.delete(file.id)).toEqual({ id: file.id, object: 'file', deleted: true });
    await expect(client.files.retrieve(file.id)).rejects.toMatchObject({ status: 404 });
  });

  it('refuses a batch file that is not .jsonl, and an unknown purpose', async () => {
    await expect(client.files.create({ file: await toFile(Buffer.from('{}'), 'in.txt'), purpose: 'batch' })).rejects.toMatchObject({ status: 400 });
    await expect(client.files.create({ file: await toFile(Buffer.from('{}'), 'in.jsonl'), purpose: 'nonsense' as 'batch' })).rejects.toMatchObject({ status: 400, param: 'purpose' });
  });
});

describe('mock OpenAI Batch API', () => {
  it('runs a batch to completion with output and error files in OpenAI\'s line format', async () => {
    const text = line('ok-1', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'first' }], max_tokens: 5 })
      + line('bad', { model: 'gpt-4o-mini', messages: 'not a list' })
      + line('ok-2', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'second' }] });
    const file = await client.files.create({ file: await toFile(Buffer.from(text), 'batch.jsonl'), purpose: 'batch' });
    const created = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { job: 'fidelity' } });
    expect(created).toMatchObject({ object: 'batch', status: 'validating', endpoint: '/v1/chat/completions', metadata: { job: 'fidelity' } });
    const batch = await settled(client, created.id);
    expect(batch.status).toBe('completed');
    expect(batch.request_counts).toEqual({ total: 3, completed: 2, failed: 1 });
    expect(batch.usage?.input_tokens).toBeGreaterThan(0);
    const output = (await (await client.files.content(batch.output_file_id as string)).text()).trim().split('\n').map((entry) => JSON.parse(entry) as { custom_id: string; response: { status_code: number; body: OpenAI.ChatCompletion }; error: null });
    expect(output.map((entry) => entry.custom_id)).toEqual(['ok-1', 'ok-2']);
    expect(output[0]).toMatchObject({ response: { status_code: 200, body: { object: 'chat.completion' } }, error: null });
    expect(output[0]?.response.body.usage?.prompt_tokens).toBeGreaterThan(0);
    const errors = (await (await client.files.content(batch.error_file_id as string)).text()).trim().split('\n').map((entry) => JSON.parse(entry) as { custom_id: string; response: { status_code: number } });
    expect(errors).toMatchObject([{ custom_id: 'bad', response: { status_code: 400 } }]);
    expect((await client.batches.list()).data.map((entry) => entry.id)).toContain(created.id);
  });

  it('fails a batch whose lines name more than one model, as OpenAI does', async () => {
    const text = line('a', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'a' }] }) + line('b', { model: 'gpt-4o', messages: [{ role: 'user', content: 'b' }] });
    const file = await client.files.create({ file: await toFile(Buffer.from(text), 'mixed.jsonl'), purpose: 'batch' });
    const batch = await settled(client, (await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' })).id);
    expect(batch.status).toBe('failed');
    expect(batch.errors?.data).toMatchObject([{ code: 'mismatched_model', line: 2 }]);
  });

  it('cancels a batch mid-way: the lines run so far are in its output', async () => {
    const sdk = new OpenAI({ apiKey: 'sk-upstream-test', baseURL: slow.url, maxRetries: 0 });
    let text = '';
    for (let index = 0; index < 20; index += 1) text += line(`c-${index}`, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `n ${index}` }] });
    const file = await sdk.files.create({ file: await toFile(Buffer.from(text), 'cancel.jsonl'), purpose: 'batch' });
    const created = await sdk.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    let batch = await sdk.batches.retrieve(created.id);
    while (batch.request_counts?.completed === 0 || batch.status === 'validating') batch = await new Promise((resolve) => setTimeout(resolve, 50)).then(() => sdk.batches.retrieve(created.id));
    expect((await sdk.batches.cancel(created.id)).status).toBe('cancelling');
    batch = await settled(sdk, created.id);
    expect(batch.status).toBe('cancelled');
    const done = batch.request_counts?.completed ?? 0;
    expect(done).toBeGreaterThan(0);
    expect(done).toBeLessThan(20);
    expect((await (await sdk.files.content(batch.output_file_id as string)).text()).trim().split('\n')).toHaveLength(done);
    await expect(sdk.batches.cancel(created.id)).rejects.toMatchObject({ status: 409 });
  });
});
