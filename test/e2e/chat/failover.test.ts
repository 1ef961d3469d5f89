import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { addRoutedModel, flushWrites, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';

/** A port that refuses connections: listen, note the port, close. */
async function closedPort(): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('routing pool: retries on upstream failure across channels', () => {
  let gateway: TestGateway;
  let primary: MockOpenAIUpstream;
  let secondary: MockOpenAIUpstream;
  let account: SeededAccount;
  let client: OpenAI;

  beforeAll(async () => {
    primary = await startMockOpenAIUpstream();
    secondary = await startMockOpenAIUpstream({ apiKey: 'sk-upstream-second' });
    gateway = await startTestGateway();
    await addRoutedModel(gateway, { model: 'pooled', channel: { name: 'primary', type: 'openai', base_url: primary.url, api_key: 'sk-upstream-test', models: ['pooled'], priority: 10 } });
    await gateway.admin('POST', '/admin/channels', { name: 'secondary', type: 'openai-compatible', base_url: secondary.url, api_key: 'sk-upstream-second', models: ['pooled'], priority: 0 });
    account = await seedAccount(gateway);
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: account.key, maxRetries: 0 });
  });

  beforeEach(() => {
    primary.setFault(null);
    secondary.setFault(null);
  });

  afterAll(async () => {
    await gateway?.close();
    await primary?.close();
    await secondary?.close();
  });

  it('sends to the higher-priority channel while it is healthy', async () => {
    const before = secondary.requests.length;
    await client.chat.completions.create({ model: 'pooled', messages: [{ role: 'user', content: 'hi' }] });
    expect(primary.requests.at(-1)?.path).toBe('/v1/chat/completions');
    expect(secondary.requests.length).toBe(before);
  });

  it.each([500, 503, 429])('moves to the next channel when the first answers %i', async (status) => {
    primary.setFault({ kind: 'status', status, times: 1 });
    const { data, response } = await client.chat.completions.create({ model: 'pooled', messages: [{ role: 'user', content: 'retry me' }] }).withResponse();
    expect(data.choices[0]?.message.content).toContain('retry me');
    expect(secondary.requests.at(-1)?.headers.authorization).toBe('Bearer sk-upstream-second');
    await flushWrites(gateway);
    const usage = await gateway.admin<{ data: Array<{ request_id: string; attempts: number; status: number }> }>('GET', `/admin/usage?key_id=${account.keyId}`);
    const row = usage.body.data.find((candidate) => candidate.request_id === response.headers.get('x-request-id'));
    expect(row).toMatchObject({ attempts: 2, status: 200 });
  });

  it('moves on when the connection is reset, and for streams before the first byte', async () => {
    primary.setFault({ kind: 'reset', times: 1 });
    const final = await client.chat.completions.stream({ model: 'pooled', messages: [{ role: 'user', content: 'stream after reset' }] }).finalChatCompletion();
    expect(final.choices[0]?.message.content).toContain('stream after reset');
  });

  it('answers 502 upstream_error when every channel fails, without upstream details', async () => {
    primary.setFault({ kind: 'status', status: 500, body: { error: { message: 'boom at http://10.0.0.1/internal' } } });
    secondary.setFault({ kind: 'status', status: 502 });
    const error = await client.chat.completions.create({ model: 'pooled', messages: [{ role: 'user', content: 'x' }] }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    const apiError = error as InstanceType<typeof OpenAI.APIError>;
    expect(apiError.status).toBe(502);
    expect(apiError.code).toBe('upstream_error');
    expect(apiError.type).toBe('upstream_error');
    expect(JSON.stringify(apiError.error)).not.toContain('10.0.0.1');
  });

  it('answers 503 with Retry-After when every channel is throttled', async () => {
    primary.setFault({ kind: 'status', status: 429 });
    secondary.setFault({ kind: 'status', status: 429 });
    const response = await fetch(`${gateway.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'pooled', messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(response.status).toBe(503);
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('upstream_error');
  });

  it('reaches a working channel after one that refuses connections', async () => {
    await addRoutedModel(gateway, { model: 'dead-first', channel: { name: 'dead', type: 'openai-compatible', base_url: `http://127.0.0.1:${await closedPort()}/v1`, api_key: 'sk-dead', models: ['dead-first'], priority: 5 } });
    await gateway.admin('POST', '/admin/channels', { name: 'alive', type: 'openai', base_url: primary.url, api_key: 'sk-upstream-test', models: ['dead-first'], priority: 1 });
    const completion = await client.chat.completions.create({ model: 'dead-first', messages: [{ role: 'user', content: 'are you there' }] });
    expect(completion.choices[0]?.message.content).toContain('are you there');
  });

  it('aborts the upstream request when the caller disconnects, and logs 499', async () => {
    const slow = await startMockOpenAIUpstream({ chunkDelayMs: 200 });
    try {
      await addRoutedModel(gateway, { model: 'slow', channel: { name: 'slow', type: 'openai', base_url: slow.url, api_key: 'sk-upstream-test', models: ['slow'] } });
      const controller = new AbortController();
      const response = await fetch(`${gateway.baseURL}/chat/completions`, {
        method: 'POST',
        signal: controller.signal,
        headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'slow', stream: true, messages: [{ role: 'user', content: 'a long answer please with very many words' }] }),
      });
      const reader = response.body!.getReader();
      await reader.read();
      const requestId = response.headers.get('x-request-id');
      controller.abort();
      await expect.poll(async () => {
        await flushWrites(gateway);
        const usage = await gateway.admin<{ data: Array<{ request_id: string; status: number; error_code: string | null }> }>('GET', `/admin/usage?key_id=${account.keyId}&model=slow`);
        return usage.body.data.find((row) => row.request_id === requestId);
      }, { timeout: 5000 }).toMatchObject({ status: 499, error_code: 'client_closed_request' });
    } finally {
      await slow.close();
    }
  });
});
