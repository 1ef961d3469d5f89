/**
 * Streamed tool calls on /mcp over real HTTP, on the suite's database (SQLite, or PostgreSQL with TEST_DATABASE_URL):
 * the official MCP SDK's client (which accepts `text/event-stream`) calls a tool of a real MCP server (built with the
 * same SDK) that reports progress. The gateway answers with an SSE stream: a priming event, the server's progress
 * relayed with the client's own token, then the result, each with an event id. When the connection breaks mid-call
 * the SDK's transport resumes with GET and `Last-Event-ID` and gets the rest from the instance holding the stream;
 * another account's key, another session and an unknown id are refused.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedAccount, startTestGateway, suiteDatabase, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockMcpServer, type MockMcpServer } from '../../support/mock-mcp-server.js';

let gateway: TestGateway;
let slowServer: MockMcpServer;
let owner: SeededAccount;
let otherAccount: SeededAccount;

function text(result: CallToolResult): string {
  const first = result.content[0];
  return first?.type === 'text' ? first.text : '';
}

/** A fetch that, once armed, breaks the first streamed POST answer after the event carrying the first progress. */
function breakingFetch(log: Array<{ method: string; lastEventId: string | null }>): { fetch: FetchLike; arm: () => void } {
  let armed = false;
  const wrapped: FetchLike = async (input, init) => {
    const method = init?.method ?? 'GET';
    log.push({ method, lastEventId: new Headers(init?.headers).get('last-event-id') });
    const response = await fetch(input, init);
    if (!armed || method !== 'POST' || !(response.headers.get('content-type') ?? '').includes('text/event-stream') || response.body === null) return response;
    armed = false;
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let seen = '';
    let breakNext = false;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (breakNext) {
          await reader.cancel();
          controller.error(new Error('connection broken by the test'));
          return;
        }
        const { value, done } = await reader.read();
        if (done) {
          controller.close();
          return;
        }
        seen += decoder.decode(value, { stream: true });
        controller.enqueue(value);
        if (seen.includes('notifications/progress')) breakNext = true;
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
  return { fetch: wrapped, arm: () => { armed = true; } };
}

async function connect(key: string, fetchLike?: FetchLike): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'mcp-streams-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
    reconnectionOptions: { initialReconnectionDelay: 50, maxReconnectionDelay: 500, reconnectionDelayGrowFactor: 1.5, maxRetries: 3 },
    ...(fetchLike === undefined ? {} : { fetch: fetchLike }),
  });
  await client.connect(transport);
  return { client, transport };
}

function resume(key: string, session: string, lastEventId: string): Promise<Response> {
  return fetch(`${gateway.url}/mcp`, { headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18', 'last-event-id': lastEventId } });
}

beforeAll(async () => {
  slowServer = await startMockMcpServer('slowpoke', 'sse', { slowTool: true });
  gateway = await startTestGateway({ env: { MCP_ALLOW_PRIVATE_ADDRESSES: 'true' } });
  expect((await gateway.admin('POST', '/admin/mcp-servers', { name: 'slowpoke', url: slowServer.url, transport: 'sse', public: true })).status).toBe(201);
  [owner, otherAccount] = await Promise.all([seedAccount(gateway), seedAccount(gateway)]);
});

afterAll(async () => {
  await gateway?.close();
  await slowServer?.close();
});

describe(`streamed tool calls on /mcp (${suiteDatabase()})`, () => {
  it('answers a tool call as an SSE stream with ids, relaying the upstream\'s progress before the result', async () => {
    const raw = await fetch(`${gateway.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${owner.key}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } } }),
    });
    const session = raw.headers.get('mcp-session-id') as string;
    const streamed = await fetch(`${gateway.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${owner.key}`, 'mcp-session-id': session },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'call-1', method: 'tools/call', params: { name: 'slowpoke__slow', _meta: { progressToken: 'mine-7' } } }),
    });
    expect(streamed.status).toBe(200);
    expect(streamed.headers.get('content-type')).toBe('text/event-stream');
    const events = (await streamed.text()).split('\n\n').filter((block) => block !== '').map((block) => {
      const lines = block.split('\n');
      return { id: lines.find((line) => line.startsWith('id: '))?.slice(4) ?? null, data: lines.find((line) => line.startsWith('data: '))?.slice(6) ?? '' };
    });
    expect(events.every((event) => event.id !== null)).toBe(true);
    expect(new Set(events.map((event) => event.id)).size).toBe(events.length);
    expect(events[0]?.data).toBe('');
    const messages = events.slice(1).map((event) => JSON.parse(event.data) as { method?: string; params?: Record<string, unknown>; id?: string; result?: CallToolResult });
    expect(messages.filter((message) => message.method === 'notifications/progress').map((message) => message.params))
      .toEqual([1, 2, 3].map((progress) => ({ progressToken: 'mine-7', progress, total: 3, message: `step ${progress}` })));
    const last = messages.at(-1);
    expect(last?.id).toBe('call-1');
    expect(text(last?.result as CallToolResult)).toBe('slowpoke done');

    // A call without a progress token streams no progress; a client that accepts only JSON gets JSON.
    const plain = await fetch(`${gateway.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${owner.key}`, 'mcp-session-id': session },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'slowpoke__slow' } }),
    });
    expect(plain.headers.get('content-type')).toContain('application/json');
    expect(await plain.json()).toMatchObject({ id: 2, result: { content: [{ type: 'text', text: 'slowpoke done' }] } });
  });

  it('relays progress to the SDK client and resumes a broken stream with Last-Event-ID', async () => {
    const log: Array<{ method: string; lastEventId: string | null }> = [];
    const breaking = breakingFetch(log);
    const { client, transport } = await connect(owner.key, breaking.fetch);
    const progress: Progress[] = [];
    const tokens: string[] = [];
    breaking.arm();
    const result = await client.callTool({ name: 'slowpoke__slow' }, undefined, { onprogress: (update) => progress.push(update), onresumptiontoken: (token) => tokens.push(token) }) as CallToolResult;
    expect(text(result)).toBe('slowpoke done');
    // The stream broke after the first progress; the rest came on the resumed stream, nothing twice.
    expect(progress.map((update) => update.progress)).toEqual([1, 2, 3]);
    const resumed = log.filter((entry) => entry.method === 'GET' && entry.lastEventId !== null);
    expect(resumed.length).toBeGreaterThanOrEqual(1);
    expect(tokens).toContain(resumed[0]?.lastEventId);

    // The stream stays resumable from any of its ids, by its key and session only.
    const session = transport.sessionId as string;
    const first = tokens[0] as string;
    const replay = await resume(owner.key, session, first);
    expect(replay.status).toBe(200);
    const replayed = await replay.text();
    expect(replayed).toContain('slowpoke done');
    expect(replayed).not.toContain(`id: ${first}\n`);
    expect((await resume(otherAccount.key, session, first)).status).toBe(404);
    const { client: second, transport: secondTransport } = await connect(owner.key);
    expect((await resume(owner.key, secondTransport.sessionId as string, first)).status).toBe(404);
    expect((await resume(owner.key, session, `${first.split('.')[0]}x.1`)).status).toBe(404);
    expect((await resume(owner.key, session, 'nonsense')).status).toBe(404);
    const noId = await fetch(`${gateway.url}/mcp`, { headers: { authorization: `Bearer ${owner.key}`, accept: 'text/event-stream', 'mcp-session-id': session } });
    expect(noId.status).toBe(405);
    await Promise.all([client.close(), second.close()]);
  });
});
