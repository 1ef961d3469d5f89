/**
 * Two gateway instances on one database (SQLite file, or PostgreSQL with TEST_DATABASE_URL), as a fleet behind a
 * balancer runs them, with the official MCP SDK client:
 *
 * - a session opened on one instance is served by the other: the client switches instance on every request
 *   mid-session; a session ended on one is gone on both; another key cannot use it on either;
 * - a server a health check (run by instance A) found down is left out of tools/list on instance B and a call to it
 *   fails at once with a JSON-RPC error, without a connection to it, on /mcp and on the Responses `mcp` tool, until a
 *   check finds it up again.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import OpenAI from 'openai';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpHealthChecks } from '../../../src/mcp/mcp-health-checks.js';
import { addRoutedModel, seedAccount, startTestGateway, suiteDatabase, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockGeminiUpstream, type MockGeminiUpstream } from '../../support/mock-gemini-upstream.js';
import { startMockMcpServer, type MockMcpServer } from '../../support/mock-mcp-server.js';

let first: TestGateway;
let second: TestGateway;
let alpha: MockMcpServer;
let flaky: MockMcpServer;
let gone: MockMcpServer;
let geminiUpstream: MockGeminiUpstream;
let flakyId: string;
let account: SeededAccount;
let other: SeededAccount;

/** A client whose requests go to the instances in turn: first, second, first, … */
async function switchingClient(key: string): Promise<{ client: Client; hosts: string[] }> {
  const hosts: string[] = [];
  let turn = 0;
  const alternate = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const target = (turn++ % 2 === 0 ? first : second).url;
    const url = new URL(String(input instanceof Request ? input.url : input));
    hosts.push(target);
    return fetch(`${target}${url.pathname}${url.search}`, init);
  };
  const client = new Client({ name: 'switching-client', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${first.url}/mcp`), { fetch: alternate, requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return { client, hosts };
}

async function connect(gateway: TestGateway, key: string): Promise<Client> {
  const client = new Client({ name: 'one-instance-client', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
}

async function rawPost(gateway: TestGateway, key: string, body: unknown, session: string | null, method = 'POST'): Promise<Response> {
  return fetch(`${gateway.url}/mcp`, {
    method,
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${key}`, ...(session === null ? {} : { 'mcp-session-id': session }) },
    ...(method === 'POST' ? { body: JSON.stringify(body) } : {}),
  });
}

const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } } };

function text(result: CallToolResult): string {
  const firstPart = result.content[0];
  return firstPart?.type === 'text' ? firstPart.text : '';
}

/** One pass of real health checks, run by the first instance (the second runs none of its own). */
async function checkPass(): Promise<void> {
  const { services } = first.gateway;
  const checks = new McpHealthChecks(
    { servers: services.storage.mcpServers, clock: services.clock, logger: services.logger, outbound: { allowPrivateAddresses: true } },
    { intervalMs: 60_000, timeoutMs: 3000, concurrency: 4 },
  );
  await checks.runOnce();
}

beforeAll(async () => {
  [alpha, flaky, gone, geminiUpstream] = await Promise.all([
    startMockMcpServer('alpha', 'streamable-http'), startMockMcpServer('flaky', 'streamable-http'), startMockMcpServer('gone', 'streamable-http'), startMockGeminiUpstream(),
  ]);
  // Instances of one fleet share the database and the key that seals upstream credentials; the tests run the checks.
  const env = { MCP_ALLOW_PRIVATE_ADDRESSES: 'true', MCP_HEALTH_CHECK_INTERVAL_SECONDS: '0', SECRET_KEY: randomBytes(32).toString('hex') };
  first = await startTestGateway({ env });
  second = await startTestGateway({ env: { ...env, DATABASE_URL: first.databaseUrl } });
  for (const [name, server] of [['alpha', alpha], ['flaky', flaky], ['gone', gone]] as const) {
    const created = await first.admin<{ id: string }>('POST', '/admin/mcp-servers', { name, url: server.url, public: true, headers: { 'X-Sealed': `${name}-secret` } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    if (name === 'flaky') flakyId = created.body.id;
  }
  await addRoutedModel(first, { model: 's-gemini', channel: { name: 'g', type: 'gemini', base_url: geminiUpstream.url, api_key: 'gemini-upstream-test', models: { 's-gemini': 'gemini-2.5-flash' } } });
  await second.gateway.services.catalog.reload();
  account = await seedAccount(first, { balanceUsd: 20 });
  other = await seedAccount(first, { balanceUsd: 20 });
});

afterAll(async () => {
  await second?.close();
  await first?.close();
  await Promise.all([alpha?.close(), flaky?.close(), gone?.close(), geminiUpstream?.close()]);
});

describe(`MCP sessions across instances (${suiteDatabase()})`, () => {
  it('serves one session on both instances, the client switching on every request', async () => {
    const { client, hosts } = await switchingClient(account.key);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['alpha__echo', 'flaky__echo', 'gone__echo']));
    for (let round = 0; round < 3; round += 1) {
      const result = await client.callTool({ name: 'alpha__echo', arguments: { text: `round ${round}` } }) as CallToolResult;
      expect(text(result)).toBe(`alpha: round ${round}`);
    }
    expect(client.getServerVersion()?.name).toBe('unigate');
    // Both instances served requests of the one session.
    expect(new Set(hosts)).toEqual(new Set([first.url, second.url]));
    await client.close();
  });

  it('ends a session on both instances when one is told, and keeps it from other keys on either', async () => {
    const opened = await rawPost(first, account.key, INITIALIZE, null);
    expect(opened.status).toBe(200);
    const session = opened.headers.get('mcp-session-id');
    expect(session).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const ping = { jsonrpc: '2.0', id: 2, method: 'ping' };
    expect((await rawPost(second, account.key, ping, session)).status).toBe(200);
    // Another account's key presenting the id is refused as if it did not exist, on both instances.
    expect((await rawPost(second, other.key, ping, session)).status).toBe(404);
    expect((await rawPost(first, other.key, ping, session)).status).toBe(404);
    expect((await rawPost(second, other.key, null, session, 'DELETE')).status).toBe(404);
    // Ended on the second instance: gone on the first too.
    expect((await rawPost(second, account.key, null, session, 'DELETE')).status).toBe(204);
    expect((await rawPost(first, account.key, ping, session)).status).toBe(404);
    expect((await rawPost(second, account.key, ping, session)).status).toBe(404);
  });

  it('never stores a session id in clear', async () => {
    const opened = await rawPost(second, account.key, INITIALIZE, null);
    const session = opened.headers.get('mcp-session-id') ?? '';
    const rows = await (first.gateway.services.storage as unknown as { mcpSessions: { get(hash: string): Promise<unknown> } }).mcpSessions.get(session);
    expect(rows).toBeNull();
  });
});

describe(`MCP server health across instances (${suiteDatabase()})`, () => {
  it('leaves a server found down out of tools/list on the other instance and fails its calls at once, until it is up again', async () => {
    await checkPass();
    const client = await connect(second, account.key);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('gone__echo');

    // The server stops; the first instance's check finds it down; the second acts on it.
    await gone.close();
    await checkPass();
    const listed = (await client.listTools()).tools.map((tool) => tool.name);
    expect(listed).not.toContain('gone__echo');
    expect(listed).toContain('alpha__echo');
    const started = performance.now();
    const error = await client.callTool({ name: 'gone__echo', arguments: { text: 'x' } }).then(() => null, (caught: unknown) => caught);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(-32011);
    expect((error as McpError).message).toContain("The MCP server 'gone' is down");
    expect((error as McpError).data).toEqual({ code: 'mcp_server_down', server: 'gone' });
    expect(performance.now() - started).toBeLessThan(2000);
    await client.close();
  });

  it('does not connect to a server marked down, and uses it again once a check finds it up', async () => {
    const repository = first.gateway.services.storage.mcpServers;
    const before = (await repository.get(flakyId))?.updatedAt;
    // What a check on any instance writes when it fails; the server itself is in fact up.
    expect(await repository.recordHealth(flakyId, { status: 'unhealthy', error: 'connect ECONNREFUSED', checkedAt: Date.now(), latencyMs: null, tools: [] }, before)).toBe(true);
    const requestsBefore = flaky.requests;
    const client = await connect(second, account.key);
    expect((await client.listTools()).tools.map((tool) => tool.name).filter((name) => name.startsWith('flaky__'))).toEqual([]);
    const error = await client.callTool({ name: 'flaky__echo', arguments: { text: 'x' } }).then(() => null, (caught: unknown) => caught);
    expect((error as McpError).code).toBe(-32011);

    // The Responses `mcp` tool on the first instance: the server's listing fails as down, nothing is tried.
    const openai = new OpenAI({ baseURL: first.baseURL, apiKey: account.key, maxRetries: 0, timeout: 30_000 });
    const data = await openai.responses.create({ model: 's-gemini', input: 'call flaky__echo with {"text":"hi"}', store: false, tools: [{ type: 'mcp', server_label: 'flaky', require_approval: 'never' }] });
    const listing = data.output.find((item) => item.type === 'mcp_list_tools');
    expect(listing?.type === 'mcp_list_tools' ? listing.error : null).toContain('is down');
    expect(data.output.some((item) => item.type === 'mcp_call')).toBe(false);
    expect(flaky.requests).toBe(requestsBefore);

    // A check finds it up: both instances use it again.
    await checkPass();
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('flaky__echo');
    expect(text(await client.callTool({ name: 'flaky__echo', arguments: { text: 'back' } }) as CallToolResult)).toBe('flaky: back');
    await client.close();
    const again = await connect(first, account.key);
    expect(text(await again.callTool({ name: 'flaky__echo', arguments: { text: 'also here' } }) as CallToolResult)).toBe('flaky: also here');
    await again.close();
  });
});
