/**
 * What an MCP call is allowed and charged, over real HTTP on the suite's database (SQLite, or PostgreSQL with
 * TEST_DATABASE_URL), the official SDK client at /mcp and a real SDK server upstream: a price per call held and
 * charged exactly (refused as a tool error result with the spec's error object when the balance cannot pay), calls
 * per minute and concurrency refused with a clear message, a usage row per call without its arguments, tool rules
 * that hide and refuse tools, account allowlists, and private addresses refused unless the operator allows them.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushWrites, seedAccount, startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { startMockMcpServer, type MockMcpServer } from '../../support/mock-mcp-server.js';

let gateway: TestGateway;
let strict: TestGateway;
let upstream: MockMcpServer;

async function connect(key: string): Promise<Client> {
  const client = new Client({ name: 'mcp-rules-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
}

function text(result: CallToolResult): string {
  const first = result.content[0];
  return first?.type === 'text' ? first.text : '';
}

interface UsageRow { request_id: string; status: number; error_code: string | null; cost_usd: number; model: string | null; mcp: { server: string; tool: string; bytes_in: number; bytes_out: number; payload?: string } | null }

async function usageOf(accountId: string): Promise<UsageRow[]> {
  await flushWrites(gateway);
  return (await gateway.admin<{ data: UsageRow[] }>('GET', `/admin/usage?account_id=${accountId}`)).body.data;
}

beforeAll(async () => {
  upstream = await startMockMcpServer('paid', 'streamable-http');
  // The mock server listens on 127.0.0.1: this gateway allows private addresses, explicitly; `strict` does not.
  [gateway, strict] = await Promise.all([
    startTestGateway({ env: { MCP_ALLOW_PRIVATE_ADDRESSES: 'true' } }),
    startTestGateway(),
  ]);
  const created = await gateway.admin('POST', '/admin/mcp-servers', {
    name: 'paid', url: upstream.url, public: true, price_per_call: '0.25', calls_per_minute: 3,
    tool_rules: { default: 'allowed', tools: { whoami: 'refused' } },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  expect(created.body).toMatchObject({ price_per_call: '0.25', calls_per_minute: 3, concurrency: null, log_payloads: false, tool_rules: { default: 'allowed', tools: { whoami: 'refused' } } });
});

afterAll(async () => {
  await Promise.all([gateway?.close(), strict?.close()]);
  await upstream?.close();
});

describe('price per call', () => {
  it('charges the price exactly, once per call, with a usage row that keeps no arguments', async () => {
    const payer = await seedAccount(gateway, { balanceUsd: 1 });
    const client = await connect(payer.key);
    const sum = await client.callTool({ name: 'paid__add', arguments: { a: 20, b: 22 } }) as CallToolResult;
    expect(text(sum)).toBe('42');
    const balance = await gateway.admin<{ balance_usd: number }>('GET', `/admin/accounts/${payer.accountId}`);
    await flushWrites(gateway);
    const after = await gateway.admin<{ balance_usd: number }>('GET', `/admin/accounts/${payer.accountId}`);
    expect(after.body.balance_usd ?? balance.body.balance_usd).toBe(0.75);
    const rows = await usageOf(payer.accountId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 200, cost_usd: 0.25, mcp: { server: 'paid', tool: 'add' } });
    expect(rows[0]?.mcp?.bytes_in).toBe(Buffer.byteLength('{"a":20,"b":22}'));
    expect(rows[0]?.mcp?.bytes_out).toBeGreaterThan(0);
    expect(rows[0]?.mcp?.payload).toBeUndefined();
    expect(JSON.stringify(rows)).not.toContain('"a":20');
    await client.close();
  });

  it('refuses a call the balance cannot pay, as a tool error result with the spec\'s error object, without reaching the server', async () => {
    const poor = await seedAccount(gateway, { balanceUsd: 0.1 });
    const client = await connect(poor.key);
    const before = upstream.calls.length;
    const refused = await client.callTool({ name: 'paid__echo', arguments: { text: 'x' } }) as CallToolResult;
    expect(refused.isError).toBe(true);
    const body = JSON.parse(text(refused)) as { error: { code: string; type: string; message: string } };
    expect(body.error.code).toBe('insufficient_balance');
    expect(typeof body.error.message).toBe('string');
    expect(upstream.calls.length).toBe(before);
    const rows = await usageOf(poor.accountId);
    expect(rows[0]).toMatchObject({ error_code: 'insufficient_balance', cost_usd: 0 });
    await client.close();
  });
});

describe('limits', () => {
  it('refuses calls past the calls-per-minute limit with a clear message', async () => {
    const busy = await seedAccount(gateway, { balanceUsd: 10 });
    const client = await connect(busy.key);
    for (let call = 0; call < 3; call += 1) expect(text(await client.callTool({ name: 'paid__echo', arguments: { text: 'hi' } }) as CallToolResult)).toBe('paid: hi');
    const refused = await client.callTool({ name: 'paid__echo', arguments: { text: 'hi' } }) as CallToolResult;
    expect(refused.isError).toBe(true);
    const body = JSON.parse(text(refused)) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('rate_limit_exceeded');
    expect(body.error.message).toContain('mcp-calls-per-minute:paid');
    expect(refused._meta?.['unigate/status']).toBe(429);
    await client.close();
  });

  it('a key\'s override replaces the server\'s limit, and a concurrency limit refuses a second call in flight', async () => {
    const limited = await seedAccount(gateway, { balanceUsd: 10 });
    const put = await gateway.admin('PUT', `/admin/keys/${limited.keyId}/mcp-policy`, { limits: { paid: { calls_per_minute: null, concurrency: 1 } } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const client = await connect(limited.key);
    const hanging = client.callTool({ name: 'paid__hang' }, undefined, { timeout: 60_000 }).catch((error: unknown) => error);
    const deadline = Date.now() + 5000;
    while (!upstream.calls.includes('hang') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    const refused = await client.callTool({ name: 'paid__echo', arguments: { text: 'x' } }) as CallToolResult;
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain('Too many concurrent calls for this API key on the MCP server');
    await client.close();
    void hanging;
  });
});

describe('tool rules and allowlists', () => {
  it('a refused tool is neither listed nor callable; a key may narrow further, never widen', async () => {
    const user = await seedAccount(gateway, { balanceUsd: 10 });
    const client = await connect(user.key);
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain('paid__echo');
    expect(names).not.toContain('paid__whoami');
    const error = await client.callTool({ name: 'paid__whoami' }).catch((caught: unknown) => caught);
    expect((error as McpError).code).toBe(-32602);
    // The key refuses echo and tries to allow whoami: the first narrows, the second cannot widen.
    expect((await gateway.admin('PUT', `/admin/keys/${user.keyId}/mcp-policy`, { tool_rules: { paid__echo: 'refused', paid__whoami: 'allowed' } })).status).toBe(200);
    const narrowed = (await client.listTools()).tools.map((tool) => tool.name);
    expect(narrowed).not.toContain('paid__echo');
    expect(narrowed).not.toContain('paid__whoami');
    expect(narrowed).toContain('paid__add');
    // read_only: the mock server declares none of its tools read-only, so none is left.
    expect((await gateway.admin('PUT', `/admin/accounts/${user.accountId}/mcp-policy`, { tool_rules: { paid: 'read_only' } })).status).toBe(200);
    expect((await client.listTools()).tools).toEqual([]);
    await client.close();
  });

  it('an account allowlist narrows its keys\' servers; unknown owners are 404', async () => {
    const fenced = await seedAccount(gateway, { balanceUsd: 10 });
    expect((await gateway.admin('PUT', `/admin/accounts/${fenced.accountId}/mcp-policy`, { allowed_servers: [] })).status).toBe(200);
    const client = await connect(fenced.key);
    expect((await client.listTools()).tools).toEqual([]);
    await client.close();
    expect((await gateway.admin('GET', '/admin/accounts/acct_nope/mcp-policy')).status).toBe(404);
    expect((await gateway.admin('PUT', `/admin/keys/${fenced.keyId}/mcp-policy`, { allowed_servers: ['paid'] })).status).toBe(400);
    expect((await gateway.admin('PUT', `/admin/keys/${fenced.keyId}/mcp-policy`, { tool_rules: { paid: 'sometimes' } })).status).toBe(400);
  });
});

describe('private addresses', () => {
  it('are refused at registration unless the operator allows them', async () => {
    for (const url of ['http://127.0.0.1:9/mcp', 'http://localhost:9/mcp', 'http://169.254.169.254/mcp', 'http://[::1]:9/mcp', 'http://10.0.0.1/mcp']) {
      const refused = await strict.admin<{ error: { param?: string; message: string } }>('POST', '/admin/mcp-servers', { name: 'inside', url });
      expect(refused.status, url).toBe(400);
      expect(refused.body.error.param).toBe('url');
      expect(refused.body.error.message).toContain('MCP_ALLOW_PRIVATE_ADDRESSES');
    }
  });
});
