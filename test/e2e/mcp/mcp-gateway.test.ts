/**
 * The MCP gateway over real HTTP, on the suite's database (SQLite, or PostgreSQL with TEST_DATABASE_URL): the
 * official MCP SDK's client at the gateway's /mcp and /mcp/{server}, two real MCP servers built with the same SDK as
 * upstreams (one on Streamable HTTP, one on the older HTTP+SSE transport). Tools are listed as `<server>__<tool>`
 * and called through; the servers' headers are sealed at rest and sent upstream; a key sees and calls only the
 * servers it may use (`null`: the public ones; `[]`: none); sessions are bound to the key that opened them; a server
 * that dies mid-call gives the client a protocol error, not a hang.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockMcpServer, type MockMcpServer } from '../../support/mock-mcp-server.js';
import { rawTableText } from '../../support/raw-table.js';

const ALPHA_SECRET = 'Bearer alpha-upstream-secret-6f1c';

let gateway: TestGateway;
let alpha: MockMcpServer;
let beta: MockMcpServer;
let alphaId: string;
/** A key of every public server (allowed_mcp_servers null), one of both servers, one of none, another account's. */
let publicKey: SeededAccount;
let bothKey: SeededAccount;
let noneKey: SeededAccount;
let otherAccount: SeededAccount;

async function connect(key: string, path = '/mcp'): Promise<Client> {
  const client = new Client({ name: 'mcp-gateway-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}${path}`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
}

function text(result: CallToolResult): string {
  const first = result.content[0];
  return first?.type === 'text' ? first.text : '';
}

async function rawPost(key: string | null, body: unknown, headers: Record<string, string> = {}, path = '/mcp'): Promise<Response> {
  return fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(key === null ? {} : { authorization: `Bearer ${key}` }), ...headers },
    body: JSON.stringify(body),
  });
}

const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } } };

beforeAll(async () => {
  [alpha, beta] = await Promise.all([startMockMcpServer('alpha', 'streamable-http'), startMockMcpServer('beta', 'sse')]);
  // The mock servers listen on 127.0.0.1: this gateway is told to allow private addresses, as an operator would for them.
  gateway = await startTestGateway({ env: { MCP_ALLOW_PRIVATE_ADDRESSES: 'true' } });
  const created = await gateway.admin<{ id: string }>('POST', '/admin/mcp-servers', { name: 'alpha', url: alpha.url, headers: { Authorization: ALPHA_SECRET }, public: true });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  alphaId = created.body.id;
  const second = await gateway.admin('POST', '/admin/mcp-servers', { name: 'beta', url: beta.url, transport: 'sse' });
  expect(second.status, JSON.stringify(second.body)).toBe(201);
  [publicKey, bothKey, noneKey, otherAccount] = await Promise.all([
    seedAccount(gateway),
    seedAccount(gateway, { key: { allowed_mcp_servers: ['alpha', 'beta'] } }),
    seedAccount(gateway, { key: { allowed_mcp_servers: [] } }),
    seedAccount(gateway, { key: { allowed_mcp_servers: ['alpha', 'beta'] } }),
  ]);
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([alpha?.close(), beta?.close()]);
});

describe('the MCP server registry', () => {
  it('keeps headers sealed: listed by name, never in clear', async () => {
    const listed = await gateway.admin<{ data: Array<Record<string, unknown>> }>('GET', '/admin/mcp-servers');
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).not.toContain('alpha-upstream-secret');
    const entry = listed.body.data.find((server) => server.name === 'alpha');
    expect(entry).toMatchObject({ object: 'mcp_server', id: alphaId, transport: 'streamable-http', header_names: ['Authorization'], public: true, enabled: true });
    const one = await gateway.admin('GET', `/admin/mcp-servers/${alphaId}`);
    expect(JSON.stringify(one.body)).not.toContain('alpha-upstream-secret');
    // At rest: the stored row holds the headers sealed.
    const stored = await rawTableText(gateway.databaseUrl, 'mcp_servers');
    expect(stored).toContain(alphaId);
    expect(stored).not.toContain('alpha-upstream-secret');
  });

  it('validates names, URLs, transports and headers, and refuses a taken name', async () => {
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ name: 'a__b', url: 'http://127.0.0.1:1/mcp' }, 400, 'name'],
      [{ name: 'tools_', url: 'http://127.0.0.1:1/mcp' }, 400, 'name'],
      [{ name: 'ok', url: 'ftp://127.0.0.1/mcp' }, 400, 'url'],
      [{ name: 'ok', url: 'http://user:pw@127.0.0.1/mcp' }, 400, 'url'],
      [{ name: 'ok', url: 'http://127.0.0.1:1/mcp', transport: 'stdio' }, 400, 'transport'],
      [{ name: 'ok', url: 'http://127.0.0.1:1/mcp', headers: { 'Mcp-Session-Id': 'x' } }, 400, 'headers.Mcp-Session-Id'],
      [{ name: 'ok', url: 'http://127.0.0.1:1/mcp', extra: 1 }, 400, ''],
      [{ name: 'alpha', url: 'http://127.0.0.1:1/mcp' }, 409, 'name'],
    ];
    for (const [body, status, param] of cases) {
      const answer = await gateway.admin<{ error: { param?: string } }>('POST', '/admin/mcp-servers', body);
      expect(answer.status, JSON.stringify(body)).toBe(status);
      if (param !== '') expect(answer.body.error.param).toBe(param);
    }
    expect((await gateway.admin('GET', '/admin/mcp-servers/mcp_nonexistent')).status).toBe(404);
  });

  it('changes and deletes a server', async () => {
    const created = await gateway.admin<{ id: string }>('POST', '/admin/mcp-servers', { name: 'gamma', url: 'http://127.0.0.1:9/mcp', headers: { 'X-Api-Key': 'k1' } });
    expect(created.status).toBe(201);
    const patched = await gateway.admin<Record<string, unknown>>('PATCH', `/admin/mcp-servers/${created.body.id}`, { name: 'gamma2', headers: {}, public: true });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: 'gamma2', header_names: [], public: true });
    expect((await gateway.admin('PATCH', `/admin/mcp-servers/${created.body.id}`, { name: 'alpha' })).status).toBe(409);
    expect((await gateway.admin('DELETE', `/admin/mcp-servers/${created.body.id}`)).status).toBe(200);
    expect((await gateway.admin('GET', `/admin/mcp-servers/${created.body.id}`)).status).toBe(404);
    expect((await gateway.admin('DELETE', `/admin/mcp-servers/${created.body.id}`)).status).toBe(404);
  });

  it('shows and changes a key\'s allowed_mcp_servers', async () => {
    const key = await gateway.admin<{ allowed_mcp_servers: unknown }>('GET', `/admin/keys/${bothKey.keyId}`);
    expect(key.body.allowed_mcp_servers).toEqual(['alpha', 'beta']);
  });
});

describe('/mcp with the official SDK client', () => {
  it('lists the union of the allowed servers\' tools as <server>__<tool> and calls each on its server', async () => {
    const client = await connect(bothKey.key);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'alpha__add', 'alpha__echo', 'alpha__fail', 'alpha__hang', 'alpha__whoami', 'beta__add', 'beta__echo', 'beta__fail', 'beta__hang', 'beta__whoami',
    ]);
    expect(tools.find((tool) => tool.name === 'alpha__add')?.inputSchema).toMatchObject({ type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } });

    const sum = await client.callTool({ name: 'alpha__add', arguments: { a: 2, b: 40 } }) as CallToolResult;
    expect(text(sum)).toBe('42');
    expect(sum.structuredContent).toEqual({ sum: 42 });
    expect(text(await client.callTool({ name: 'beta__echo', arguments: { text: 'over sse' } }) as CallToolResult)).toBe('beta: over sse');
    // The sealed header reached the server it belongs to, and only that one.
    expect(text(await client.callTool({ name: 'alpha__whoami' }) as CallToolResult)).toBe(ALPHA_SECRET);
    expect(text(await client.callTool({ name: 'beta__whoami' }) as CallToolResult)).toBe('');
    // A tool's own failure is a result with isError, as the server gave it.
    const failed = await client.callTool({ name: 'alpha__fail' }) as CallToolResult;
    expect(failed.isError).toBe(true);
    expect(text(failed)).toBe('it failed');
    await client.close();
  });

  it('answers protocol errors for unknown tools and invalid arguments', async () => {
    const client = await connect(bothKey.key);
    for (const name of ['nope__echo', 'alpha', 'alpha__', '__echo']) {
      const error = await client.callTool({ name }).catch((caught: unknown) => caught);
      expect(error, name).toBeInstanceOf(McpError);
      expect((error as McpError).code).toBe(-32602);
    }
    // The upstream's own validation of arguments reaches the client.
    const invalid = await client.callTool({ name: 'alpha__add', arguments: { a: 'two' } }).catch((caught: unknown) => caught);
    if (invalid instanceof McpError) expect(invalid.code).toBe(-32602);
    else expect((invalid as CallToolResult).isError).toBe(true);
    await client.close();
  });

  it('serves one server at /mcp/{server}', async () => {
    const client = await connect(bothKey.key, '/mcp/beta');
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(['beta__add', 'beta__echo', 'beta__fail', 'beta__hang', 'beta__whoami']);
    const error = await client.callTool({ name: 'alpha__echo', arguments: { text: 'x' } }).catch((caught: unknown) => caught);
    expect((error as McpError).code).toBe(-32602);
    await client.close();
  });
});

describe('who may call what', () => {
  it('a key with allowed_mcp_servers null sees and calls the public servers only', async () => {
    const client = await connect(publicKey.key);
    const { tools } = await client.listTools();
    expect(tools.every((tool) => tool.name.startsWith('alpha__'))).toBe(true);
    expect(tools).toHaveLength(5);
    const betaCalls = beta.calls.length;
    const error = await client.callTool({ name: 'beta__echo', arguments: { text: 'x' } }).catch((caught: unknown) => caught);
    expect((error as McpError).code).toBe(-32602);
    expect(beta.calls.length).toBe(betaCalls);
    await client.close();
    await expect(connect(publicKey.key, '/mcp/beta')).rejects.toThrow();
  });

  it('a key with [] sees nothing and calls nothing', async () => {
    const client = await connect(noneKey.key);
    expect((await client.listTools()).tools).toEqual([]);
    const before = alpha.calls.length;
    const error = await client.callTool({ name: 'alpha__echo', arguments: { text: 'x' } }).catch((caught: unknown) => caught);
    expect((error as McpError).code).toBe(-32602);
    expect(alpha.calls.length).toBe(before);
    await client.close();
    await expect(connect(noneKey.key, '/mcp/alpha')).rejects.toThrow();
  });

  it('a key whose allowlist is narrowed loses the server at once', async () => {
    const narrowed = await seedAccount(gateway, { key: { allowed_mcp_servers: ['alpha', 'beta'] } });
    const client = await connect(narrowed.key);
    expect((await client.listTools()).tools).toHaveLength(10);
    const patched = await gateway.admin('PATCH', `/admin/keys/${narrowed.keyId}`, { allowed_mcp_servers: ['alpha'] });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect((await client.listTools()).tools).toHaveLength(5);
    await client.close();
  });

  it('refuses a missing key and binds a session to the key that opened it', async () => {
    const anonymous = await rawPost(null, INITIALIZE);
    expect(anonymous.status).toBe(401);

    const opened = await rawPost(bothKey.key, INITIALIZE);
    expect(opened.status).toBe(200);
    const session = opened.headers.get('mcp-session-id');
    expect(session).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await opened.json()).toMatchObject({ jsonrpc: '2.0', id: 1, result: { protocolVersion: '2025-06-18', capabilities: { tools: {} } } });
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
    const sessionHeaders = { 'mcp-session-id': session as string, 'mcp-protocol-version': '2025-06-18' };
    expect((await rawPost(bothKey.key, list, sessionHeaders)).status).toBe(200);
    // Another account's key (allowed the same servers) cannot ride on the session.
    expect((await rawPost(otherAccount.key, list, sessionHeaders)).status).toBe(404);
    // Nor can the session move to another endpoint.
    expect((await rawPost(bothKey.key, list, sessionHeaders, '/mcp/alpha')).status).toBe(404);
    // Without a session, or with an unknown protocol revision, the request is refused.
    expect((await rawPost(bothKey.key, list)).status).toBe(400);
    expect((await rawPost(bothKey.key, list, { ...sessionHeaders, 'mcp-protocol-version': '1999-01-01' })).status).toBe(400);
    // A notification is acknowledged with 202 and no body.
    const notified = await rawPost(bothKey.key, { jsonrpc: '2.0', method: 'notifications/initialized' }, sessionHeaders);
    expect(notified.status).toBe(202);
    // Malformed JSON-RPC is answered in JSON-RPC.
    const malformed = await rawPost(bothKey.key, { jsonrpc: '1.0', id: 3, method: 'tools/list' }, sessionHeaders);
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ jsonrpc: '2.0', id: 3, error: { code: -32600 } });
    const unknownMethod = await rawPost(bothKey.key, { jsonrpc: '2.0', id: 4, method: 'sampling/createMessage' }, sessionHeaders);
    expect(await unknownMethod.json()).toMatchObject({ id: 4, error: { code: -32601 } });

    // GET opens no stream; DELETE ends the session for good (another key cannot end it).
    const stream = await fetch(`${gateway.url}/mcp`, { headers: { authorization: `Bearer ${bothKey.key}`, accept: 'text/event-stream', ...sessionHeaders } });
    expect(stream.status).toBe(405);
    const foreignDelete = await fetch(`${gateway.url}/mcp`, { method: 'DELETE', headers: { authorization: `Bearer ${otherAccount.key}`, ...sessionHeaders } });
    expect(foreignDelete.status).toBe(404);
    const ended = await fetch(`${gateway.url}/mcp`, { method: 'DELETE', headers: { authorization: `Bearer ${bothKey.key}`, ...sessionHeaders } });
    expect(ended.status).toBe(204);
    expect((await rawPost(bothKey.key, list, sessionHeaders)).status).toBe(404);
  });
});

describe('an upstream that dies', () => {
  it('gives the client a protocol error, not a hang', async () => {
    const client = await connect(bothKey.key);
    const pending = client.callTool({ name: 'alpha__hang' }).catch((caught: unknown) => caught);
    // The server dies only once the call reached it (on a loaded machine that may take a while): mid-call, not before.
    const deadline = Date.now() + 30_000;
    while (!alpha.calls.includes('hang') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(alpha.calls).toContain('hang');
    await alpha.close();
    const error = await pending;
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(-32603);
    expect((error as McpError).message).toContain("MCP server 'alpha'");
    // The other server keeps working, and listing leaves the dead one out.
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).every((name) => name.startsWith('beta__'))).toBe(true);
    await client.close();
  }, 60_000);
});
