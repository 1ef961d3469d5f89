import Anthropic from '@anthropic-ai/sdk';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from '../../support/mock-anthropic-upstream.js';
import { startMockMcpServer, type MockMcpServer } from '../../support/mock-mcp-server.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';

const PROMPT = 'PROMPT-TEXT-k2p9 the lighthouse keeper';

type AccessLine = Record<string, unknown> & { request_id: string };

function accessLines(gateway: TestGateway): AccessLine[] {
  return gateway.logs.map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry): entry is AccessLine => entry.message === 'request');
}

function linesOf(gateway: TestGateway, requestId: string | null): AccessLine[] {
  return accessLines(gateway).filter((line) => line.request_id === requestId);
}

/** The access log line of a request is written once its response has closed: wait for it (bounded). */
async function lineOf(gateway: TestGateway, requestId: string | null): Promise<AccessLine> {
  const deadline = performance.now() + 5000;
  while (linesOf(gateway, requestId).length === 0) {
    if (performance.now() > deadline) throw new Error(`no access log line for ${requestId}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  // Give a second line, if there were one, the chance to appear.
  await new Promise((resolve) => setTimeout(resolve, 50));
  const lines = linesOf(gateway, requestId);
  expect(lines).toHaveLength(1);
  return lines[0] as AccessLine;
}

describe('access log: one JSON line per API request, metadata only', () => {
  let gateway: TestGateway;
  let openai: MockOpenAIUpstream;
  let anthropic: MockAnthropicUpstream;
  let mcp: MockMcpServer;
  let account: SeededAccount;
  let channelId: string;

  beforeAll(async () => {
    openai = await startMockOpenAIUpstream();
    anthropic = await startMockAnthropicUpstream();
    mcp = await startMockMcpServer('logged', 'streamable-http');
    // The mock MCP server listens on 127.0.0.1.
    gateway = await startTestGateway({ env: { MCP_ALLOW_PRIVATE_ADDRESSES: 'true' } });
    expect((await gateway.admin('POST', '/admin/mcp-servers', { name: 'logged', url: mcp.url, public: true })).status).toBe(201);
    ({ channelId } = await addRoutedModel(gateway, { model: 'logged', channel: { name: 'openai', type: 'openai', base_url: openai.url, api_key: 'sk-upstream-test', models: ['logged'] } }));
    await addRoutedModel(gateway, { model: 'claude-logged', channel: { name: 'anthropic', type: 'anthropic', base_url: anthropic.url, api_key: 'sk-ant-upstream-test', models: ['claude-logged'] } });
    account = await seedAccount(gateway);
  });

  afterAll(async () => {
    await gateway?.close();
    await openai?.close();
    await anthropic?.close();
    await mcp?.close();
  });

  it('logs a chat request with key, account, model, channel, tokens, cost, latency and attempts', async () => {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: account.key, maxRetries: 0 });
    const { data, response } = await client.chat.completions.create({ model: 'logged', messages: [{ role: 'user', content: PROMPT }] }).withResponse();
    const line = await lineOf(gateway, response.headers.get('x-request-id'));
    expect(line).toMatchObject({
      level: 'info',
      method: 'POST',
      path: '/v1/chat/completions',
      status: 200,
      error_code: null,
      trace_id: null,
      key_id: account.keyId,
      account_id: account.accountId,
      model: 'logged',
      channel: channelId,
      protocol: 'openai-chat',
      stream: false,
      input_tokens: data.usage?.prompt_tokens,
      output_tokens: data.usage?.completion_tokens,
      cost_usd: response.headers.get('x-request-cost-usd'),
      attempts: 1,
    });
    expect(typeof line.latency_ms).toBe('number');
    expect(typeof line.time).toBe('string');
  });

  it('logs a stream with its tokens once it has ended, and the caller\'s trace id', async () => {
    const client = new Anthropic({ baseURL: gateway.url, apiKey: account.key, maxRetries: 0 });
    const traceId = '5bf92f3577b34da6a3ce929d0e0e4736';
    const stream = client.messages.stream({ model: 'claude-logged', max_tokens: 64, messages: [{ role: 'user', content: PROMPT }] }, { headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } });
    const final = await stream.finalMessage();
    const requestId = (await stream.withResponse()).response.headers.get('x-request-id');
    const line = await lineOf(gateway, requestId);
    expect(line).toMatchObject({
      path: '/v1/messages',
      status: 200,
      trace_id: traceId,
      model: 'claude-logged',
      protocol: 'anthropic-messages',
      stream: true,
      input_tokens: final.usage.input_tokens,
      output_tokens: final.usage.output_tokens,
      attempts: 1,
    });
    expect(typeof line.ttfb_ms).toBe('number');
    // Without tracing the caller's trace context is still passed upstream.
    expect(anthropic.requests.at(-1)?.headers.traceparent).toBe(`00-${traceId}-00f067aa0ba902b7-01`);
  });

  it('logs an MCP tool call on /mcp with its key, account and tool, as the call\'s meter settled it', async () => {
    const client = new Client({ name: 'access-log-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${account.key}` } } }));
    try {
      const result = await client.callTool({ name: 'logged__add', arguments: { a: 2, b: 3 } }) as CallToolResult;
      expect(result.isError ?? false).toBe(false);
    } finally {
      await client.close();
    }
    const deadline = performance.now() + 5000;
    let called: AccessLine | undefined;
    while ((called = accessLines(gateway).find((line) => line.path === '/mcp' && line.model === 'logged__add')) === undefined && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(called).toMatchObject({ method: 'POST', status: 200, key_id: account.keyId, account_id: account.accountId, protocol: 'mcp', cost_usd: '0' });
  });

  it('logs a refused key with its error code and no key fields', async () => {
    const wrongKey = 'sk-wrongwrongwrongwrongwrongwrong';
    const response = await fetch(`${gateway.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${wrongKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'logged', messages: [{ role: 'user', content: PROMPT }] }),
    });
    expect(response.status).toBe(401);
    const line = await lineOf(gateway, response.headers.get('x-request-id'));
    expect(line).toMatchObject({ status: 401, error_code: 'invalid_api_key', path: '/v1/chat/completions' });
    expect(line).not.toHaveProperty('key_id');
  });

  it('logs an upstream failure with the gateway\'s error code and every attempt', async () => {
    openai.setFault({ kind: 'status', status: 500, times: 10 });
    try {
      const response = await fetch(`${gateway.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'logged', messages: [{ role: 'user', content: PROMPT }] }),
      });
      expect(response.status).toBe(502);
      const line = await lineOf(gateway, response.headers.get('x-request-id'));
      expect(line).toMatchObject({ status: 502, error_code: 'upstream_error', model: 'logged', input_tokens: 0, output_tokens: 0, cost_usd: '0' });
      expect(line.attempts).toBeGreaterThanOrEqual(1);
    } finally {
      openai.setFault(null);
    }
  });

  it('leaves health probes out', async () => {
    const response = await fetch(`${gateway.url}/healthz`);
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(linesOf(gateway, requestId)).toEqual([]);
  });

  it('never writes prompt or answer text, keys or upstream credentials to the log', () => {
    const all = gateway.logs.join('\n');
    expect(all).not.toContain('PROMPT-TEXT-k2p9');
    expect(all).not.toContain('lighthouse');
    expect(all).not.toContain(account.key);
    expect(all).not.toContain('sk-upstream-test');
    expect(all).not.toContain('sk-ant-upstream-test');
    expect(all).not.toContain('sk-wrongwrongwrongwrongwrongwrong');
  });
});

describe('ACCESS_LOG=off', () => {
  it('writes no access log lines', async () => {
    const gateway = await startTestGateway({ env: { ACCESS_LOG: 'off' } });
    try {
      const response = await fetch(`${gateway.baseURL}/models`, { headers: { authorization: 'Bearer sk-wrongwrongwrongwrongwrongwrong' } });
      expect(response.status).toBe(401);
      await fetch(`${gateway.url}/healthz`);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(accessLines(gateway)).toEqual([]);
    } finally {
      await gateway.close();
    }
  });
});
