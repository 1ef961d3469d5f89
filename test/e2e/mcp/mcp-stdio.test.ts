/**
 * Local stdio MCP servers the gateway starts itself (MCP_ALLOW_STDIO on), over real HTTP on the suite's database
 * (SQLite, or PostgreSQL with TEST_DATABASE_URL), with the official MCP SDK's client at the gateway's /mcp and
 * /mcp/{server}: the fixture (the SDK's McpServer on its StdioServerTransport) is started without a shell with its
 * sealed environment, listed and called through, health-checked, restarted after it is killed, ends a call it dies in
 * with a protocol error, and is ended when its server is changed or deleted and when the gateway stops.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockGeminiUpstream, type MockGeminiUpstream } from '../../support/mock-gemini-upstream.js';
import { addRoutedModel, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { rawTableText } from '../../support/raw-table.js';

const FIXTURE = fileURLToPath(new URL('../../support/fixtures/stdio-mcp-server.mjs', import.meta.url));
const SECRET = 'stdio-env-secret-41c7';

let gateway: TestGateway;
let gemini: MockGeminiUpstream;
let caller: SeededAccount;
let serverId: string;

async function connect(path = '/mcp'): Promise<Client> {
  const client = new Client({ name: 'mcp-stdio-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}${path}`), { requestInit: { headers: { authorization: `Bearer ${caller.key}` } } }));
  return client;
}

function text(result: CallToolResult): string {
  const first = result.content[0];
  return first?.type === 'text' ? first.text : '';
}

async function call(name: string, args: Record<string, unknown> = {}, path = '/mcp'): Promise<string> {
  const client = await connect(path);
  try {
    return text(await client.callTool({ name, arguments: args }) as CallToolResult);
  } finally {
    await client.close();
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until<T>(probe: () => Promise<T | null>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => null);
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error('condition never held');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

beforeAll(async () => {
  gateway = await startTestGateway({ env: { MCP_ALLOW_STDIO: 'true', MCP_HEALTH_CHECK_INTERVAL_SECONDS: '0' } });
  const created = await gateway.admin<{ id: string }>('POST', '/admin/mcp-servers', {
    name: 'local', transport: 'stdio', command: process.execPath, args: [FIXTURE], env: { FIXTURE_SECRET: SECRET }, public: true,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  serverId = created.body.id;
  gemini = await startMockGeminiUpstream();
  await addRoutedModel(gateway, { model: 'r-gemini', channel: { name: 'g', type: 'gemini', base_url: gemini.url, api_key: 'gemini-upstream-test', models: { 'r-gemini': 'gemini-2.5-flash' } } });
  await gateway.gateway.services.catalog.reload();
  caller = await seedAccount(gateway, { balanceUsd: 20 });
});

afterAll(async () => {
  await gemini?.close();
  await gateway?.close();
});

describe('local stdio MCP servers', () => {
  it('serves the server to a model through the Responses mcp tool', async () => {
    const openai = new OpenAI({ baseURL: gateway.baseURL, apiKey: caller.key, maxRetries: 0, timeout: 30_000 });
    const answer = await openai.responses.create({
      model: 'r-gemini', input: 'call local__echo with {"text":"from a model"}', store: false,
      tools: [{ type: 'mcp', server_label: 'local', require_approval: 'never' }],
    });
    const called = answer.output.find((item) => item.type === 'mcp_call');
    expect(called, JSON.stringify(answer.output)).toMatchObject({ type: 'mcp_call', server_label: 'local', name: 'echo', error: null });
    if (called?.type !== 'mcp_call') throw new Error('no mcp_call');
    expect(called?.output).toBe('local: from a model');
  });

  it('shows the program and its environment by name only', async () => {
    const one = await gateway.admin<Record<string, unknown>>('GET', `/admin/mcp-servers/${serverId}`);
    expect(one.body).toMatchObject({ transport: 'stdio', url: null, command: process.execPath, args: [FIXTURE], env_names: ['FIXTURE_SECRET'], oauth: null });
    expect(JSON.stringify(one.body)).not.toContain(SECRET);
    const stored = await rawTableText(gateway.databaseUrl, 'mcp_servers');
    expect(stored).toContain(serverId);
    expect(stored).not.toContain(SECRET);
    const withUrl = await gateway.admin<{ error: { param: string } }>('POST', '/admin/mcp-servers', { name: 'both', transport: 'stdio', command: 'node', url: 'https://example.com/mcp' });
    expect(withUrl.status).toBe(400);
    expect(withUrl.body.error.param).toBe('url');
    const noCommand = await gateway.admin<{ error: { param: string } }>('POST', '/admin/mcp-servers', { name: 'none', transport: 'stdio' });
    expect(noCommand.status).toBe(400);
    expect(noCommand.body.error.param).toBe('command');
    const commandOnHttp = await gateway.admin<{ error: { param: string } }>('POST', '/admin/mcp-servers', { name: 'http', url: 'https://example.com/mcp', command: 'node' });
    expect(commandOnHttp.status).toBe(400);
  });

  it('lists and calls its tools through /mcp and /mcp/{server}, with its sealed environment', async () => {
    const client = await connect();
    try {
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      expect(names).toEqual(expect.arrayContaining(['local__echo', 'local__pid', 'local__env', 'local__crash']));
      expect(text(await client.callTool({ name: 'local__echo', arguments: { text: 'hi' } }) as CallToolResult)).toBe('local: hi');
    } finally {
      await client.close();
    }
    expect(await call('local__echo', { text: 'scoped' }, '/mcp/local')).toBe('local: scoped');
    expect(await call('local__env', { name: 'FIXTURE_SECRET' })).toBe(SECRET);
    // The gateway's own environment is not passed on.
    expect(await call('local__env', { name: 'ADMIN_TOKEN' })).toBe('(unset)');
  });

  it('keeps one process for every call, and lists its tools live for the operator', async () => {
    const first = Number(await call('local__pid'));
    const second = Number(await call('local__pid'));
    expect(first).toBeGreaterThan(0);
    expect(second).toBe(first);
    const live = await gateway.admin<{ data: Array<{ name: string; read_only: boolean }> }>('GET', `/admin/mcp-servers/${serverId}/tools`);
    expect(live.status).toBe(200);
    expect(live.body.data).toEqual(expect.arrayContaining([{ name: 'pid', description: 'Its process id', read_only: true }]));
  });

  it('restarts the process after it is killed', async () => {
    const before = Number(await call('local__pid'));
    process.kill(before, 'SIGKILL');
    const after = await until(async () => {
      const pid = Number(await call('local__pid'));
      return pid !== before && pid > 0 ? pid : null;
    });
    expect(after).not.toBe(before);
    expect(alive(before)).toBe(false);
    expect(await call('local__echo', { text: 'again' })).toBe('local: again');
  });

  it('gives a call the process dies in a protocol error, not a hang, and restarts it', async () => {
    const client = await connect();
    try {
      const error = await client.callTool({ name: 'local__crash', arguments: {} }).then(() => null, (thrown: unknown) => thrown);
      expect(error).toBeInstanceOf(McpError);
      expect(JSON.stringify((error as McpError).message)).not.toContain(SECRET);
    } finally {
      await client.close();
    }
    expect(gateway.logs.join('\n')).not.toContain(SECRET);
    await until(async () => ((await call('local__echo', { text: 'back' })) === 'local: back' ? true : null));
  });

  it('ends the process when the server is changed, and again when it is deleted', async () => {
    const before = Number(await call('local__pid'));
    // The sealed environment is never given to another program than the one it was given for.
    const moved = await gateway.admin<{ error: { param: string } }>('PATCH', `/admin/mcp-servers/${serverId}`, { args: ['-e', 'console.log(process.env.FIXTURE_SECRET)'] });
    expect(moved.status).toBe(400);
    expect(moved.body.error.param).toBe('env');
    expect(alive(before)).toBe(true);
    const patched = await gateway.admin('PATCH', `/admin/mcp-servers/${serverId}`, { env: { FIXTURE_SECRET: 'changed-value' } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    await until(async () => (alive(before) ? null : true), 10_000);
    expect(await call('local__env', { name: 'FIXTURE_SECRET' })).toBe('changed-value');
    const current = Number(await call('local__pid'));
    const deleted = await gateway.admin('DELETE', `/admin/mcp-servers/${serverId}`);
    expect(deleted.status).toBe(200);
    await until(async () => (alive(current) ? null : true), 10_000);
  });

  it('ends its processes when the gateway stops', async () => {
    const created = await gateway.admin<{ id: string }>('POST', '/admin/mcp-servers', { name: 'last', transport: 'stdio', command: process.execPath, args: [FIXTURE], public: true });
    expect(created.status).toBe(201);
    const pid = Number(await call('last__pid'));
    expect(alive(pid)).toBe(true);
    await gateway.close();
    expect(alive(pid)).toBe(false);
  });
});
