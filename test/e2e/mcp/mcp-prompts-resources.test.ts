/**
 * Prompts and resources through the MCP gateway over real HTTP, on the suite's database (SQLite, or PostgreSQL with
 * TEST_DATABASE_URL): the official MCP SDK's client at /mcp and /mcp/{server}, two real MCP servers built with the
 * same SDK as upstreams (Streamable HTTP and the older HTTP+SSE transport), each with a prompt, a resource and a
 * resource template. Prompts are listed as `<server>__<prompt>` and fetched from their server under their own name;
 * resources on /mcp carry `mcp-gateway://<server>/<uri>` and read back from their server with their own URI, templates
 * included; /mcp/{server} keeps the server's URIs. A key sees and reads only the servers it may use, a session is its
 * key's alone, texts pass the caller's output guardrails, and each read leaves a usage row without its arguments,
 * URI or contents.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UriTemplate } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushWrites, seedAccount, startTestGateway, suiteDatabase, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockMcpServer, type MockMcpServer } from '../../support/mock-mcp-server.js';

interface UsageRow {
  status: number;
  error_code: string | null;
  mcp: { server: string; tool: string; bytes_in?: number; bytes_out?: number } | null;
  guardrails: Array<{ name: string; direction: string; outcome: string }>;
}

let gateway: TestGateway;
let alpha: MockMcpServer;
let beta: MockMcpServer;
/** Keys of: both servers; the public one (alpha) only; none; another account's with both; an account with guardrails. */
let bothKey: SeededAccount;
let publicKey: SeededAccount;
let noneKey: SeededAccount;
let otherAccount: SeededAccount;
let guarded: SeededAccount;

async function connect(key: string, path = '/mcp'): Promise<Client> {
  const client = new Client({ name: 'mcp-prompts-resources-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}${path}`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
}

async function rpcError(promise: Promise<unknown>): Promise<McpError> {
  const error = await promise.then(() => null, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(McpError);
  return error as McpError;
}

function textOf(content: { type: string; text?: string } | undefined): string {
  return content?.type === 'text' ? content.text ?? '' : '';
}

async function usageRows(keyId: string): Promise<UsageRow[]> {
  await flushWrites(gateway);
  return (await gateway.admin<{ data: UsageRow[] }>('GET', `/admin/usage?key_id=${keyId}&limit=200`)).body.data;
}

async function rawPost(key: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${gateway.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${key}`, ...headers },
    body: JSON.stringify(body),
  });
}

beforeAll(async () => {
  [alpha, beta] = await Promise.all([startMockMcpServer('alpha', 'streamable-http'), startMockMcpServer('beta', 'sse')]);
  // Health checks off: the tests count every request a server receives, and a check would be one.
  gateway = await startTestGateway({ env: { MCP_ALLOW_PRIVATE_ADDRESSES: 'true', MCP_HEALTH_CHECK_INTERVAL_SECONDS: '0' } });
  expect((await gateway.admin('POST', '/admin/mcp-servers', { name: 'alpha', url: alpha.url, public: true })).status).toBe(201);
  expect((await gateway.admin('POST', '/admin/mcp-servers', { name: 'beta', url: beta.url, transport: 'sse' })).status).toBe(201);
  for (const policy of [
    { name: 'mask-codeword', kind: 'deny_list', mode: 'mask', applies_to: 'output', settings: { words: ['codeword'] } },
    { name: 'no-forbidden', kind: 'deny_list', mode: 'block', applies_to: 'output', settings: { words: ['forbidden'] } },
  ]) {
    const created = await gateway.admin('POST', '/admin/guardrails', policy);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  }
  [bothKey, publicKey, noneKey, otherAccount, guarded] = await Promise.all([
    seedAccount(gateway, { key: { allowed_mcp_servers: ['alpha', 'beta'] } }),
    seedAccount(gateway),
    seedAccount(gateway, { key: { allowed_mcp_servers: [] } }),
    seedAccount(gateway, { key: { allowed_mcp_servers: ['alpha', 'beta'] } }),
    seedAccount(gateway),
  ]);
  const bound = await gateway.admin('PATCH', `/admin/accounts/${guarded.accountId}`, { guardrails: ['mask-codeword', 'no-forbidden'] });
  expect(bound.status, JSON.stringify(bound.body)).toBe(200);
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([alpha?.close(), beta?.close()]);
});

describe(`prompts through /mcp (${suiteDatabase()})`, () => {
  it('advertises prompts and resources (without subscriptions) at initialize', async () => {
    const client = await connect(bothKey.key);
    expect(client.getServerCapabilities()).toMatchObject({ tools: {}, prompts: {}, resources: { subscribe: false } });
    await client.close();
  });

  it('lists the union of the allowed servers\' prompts as <server>__<prompt> and gets each from its server', async () => {
    const client = await connect(bothKey.key);
    const { prompts } = await client.listPrompts();
    expect(prompts.map((prompt) => prompt.name).sort()).toEqual(['alpha__greet', 'beta__greet']);
    expect(prompts.find((prompt) => prompt.name === 'beta__greet')).toMatchObject({ description: 'Greets someone (beta)', arguments: [{ name: 'who', required: true }] });

    const before = beta.calls.length;
    const got = await client.getPrompt({ name: 'beta__greet', arguments: { who: 'ann' } });
    expect(got.description).toBe('A greeting from beta');
    expect(textOf(got.messages[0]?.content)).toBe('beta says hello to ann');
    // A link in a prompt points at the gateway's URI of the resource, which reads back from its server.
    const link = got.messages[1]?.content;
    expect(link).toMatchObject({ type: 'resource_link', uri: 'mcp-gateway://beta/note://beta/readme' });
    expect(beta.calls.slice(before)).toEqual(['prompt:greet']);
    const linked = await client.readResource({ uri: (link as { uri: string }).uri });
    expect(linked.contents[0]).toMatchObject({ uri: 'mcp-gateway://beta/note://beta/readme', text: 'readme of beta' });

    // Unknown names, and the upstream's own validation of arguments, are protocol errors.
    for (const name of ['nope__greet', 'alpha', 'alpha__', '__greet', 'alpha__missing']) {
      expect((await rpcError(client.getPrompt({ name, arguments: { who: 'x' } }))).code, name).toBe(-32602);
    }
    expect((await rpcError(client.getPrompt({ name: 'alpha__greet' }))).code).toBe(-32602);
    await client.close();
  });

  it('keeps a usage row per prompt get, without its arguments', async () => {
    const client = await connect(bothKey.key);
    await client.getPrompt({ name: 'alpha__greet', arguments: { who: 'private-name-91' } });
    await client.close();
    const rows = (await usageRows(bothKey.keyId)).filter((row) => row.mcp?.tool === 'prompt:greet' && row.mcp.server === 'alpha');
    expect(rows.length).toBeGreaterThanOrEqual(1);
    expect(rows[0]).toMatchObject({ status: 200, error_code: null });
    expect(JSON.stringify(rows)).not.toContain('private-name-91');
  });
});

describe(`resources through /mcp (${suiteDatabase()})`, () => {
  it('lists resources and templates with gateway URIs and reads each from its server with its own URI', async () => {
    const client = await connect(bothKey.key);
    const { resources } = await client.listResources();
    expect(resources.map((resource) => resource.uri).sort()).toEqual(['mcp-gateway://alpha/note://alpha/readme', 'mcp-gateway://beta/note://beta/readme']);
    const read = await client.readResource({ uri: 'mcp-gateway://alpha/note://alpha/readme' });
    expect(read.contents).toEqual([{ uri: 'mcp-gateway://alpha/note://alpha/readme', mimeType: 'text/plain', text: 'readme of alpha' }]);

    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((template) => template.uriTemplate).sort()).toEqual(['mcp-gateway://alpha/file:///logs/{day}', 'mcp-gateway://beta/file:///logs/{day}']);
    // A template expands, as the client expands it, into the gateway URI of what the server's template names.
    const template = resourceTemplates.find((candidate) => candidate.uriTemplate.startsWith('mcp-gateway://beta/')) as { uriTemplate: string };
    const uri = new UriTemplate(template.uriTemplate).expand({ day: '2026-12-06' });
    expect(uri).toBe('mcp-gateway://beta/file:///logs/2026-12-06');
    const before = beta.calls.length;
    const day = await client.readResource({ uri });
    expect(day.contents[0]).toMatchObject({ uri, text: 'beta logs of 2026-12-06' });
    expect(beta.calls.slice(before)).toEqual(['read:file:///logs/2026-12-06']);

    // A URI that names no server of this key, or not in the gateway's form, is not found.
    for (const missing of ['note://alpha/readme', 'mcp-gateway://gamma/note://gamma/readme', 'mcp-gateway://alpha', 'mcp-gateway://alpha/']) {
      expect((await rpcError(client.readResource({ uri: missing }))).code, missing).toBe(-32002);
    }
    // The server's own "not found" reaches the client.
    expect(await rpcError(client.readResource({ uri: 'mcp-gateway://alpha/note://alpha/nothing' }))).toBeInstanceOf(McpError);
    // Subscriptions are not offered.
    expect((await rpcError(client.request({ method: 'resources/subscribe', params: { uri: 'mcp-gateway://alpha/note://alpha/readme' } }, (await import('@modelcontextprotocol/sdk/types.js')).EmptyResultSchema))).code).toBe(-32601);
    await client.close();
  });

  it('keeps the server\'s own URIs at /mcp/{server} and reaches no other server there', async () => {
    const client = await connect(bothKey.key, '/mcp/beta');
    expect((await client.listResources()).resources.map((resource) => resource.uri)).toEqual(['note://beta/readme']);
    expect((await client.listResourceTemplates()).resourceTemplates.map((template) => template.uriTemplate)).toEqual(['file:///logs/{day}']);
    expect((await client.readResource({ uri: 'note://beta/readme' })).contents[0]).toMatchObject({ uri: 'note://beta/readme', text: 'readme of beta' });
    expect((await client.readResource({ uri: 'file:///logs/monday' })).contents[0]).toMatchObject({ uri: 'file:///logs/monday', text: 'beta logs of monday' });
    expect((await client.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual(['beta__greet']);
    const got = await client.getPrompt({ name: 'beta__greet', arguments: { who: 'bo' } });
    expect(got.messages[1]?.content).toMatchObject({ type: 'resource_link', uri: 'note://beta/readme' });
    const alphaBefore = alpha.requests;
    expect((await rpcError(client.getPrompt({ name: 'alpha__greet', arguments: { who: 'x' } }))).code).toBe(-32602);
    // Here every URI is the server's own: a gateway URI of another server is beta's to refuse, and alpha is never asked.
    await rpcError(client.readResource({ uri: 'mcp-gateway://alpha/note://alpha/readme' }));
    expect(alpha.requests).toBe(alphaBefore);
    await client.close();
  });

  it('keeps a usage row per read, without the URI or contents', async () => {
    const client = await connect(bothKey.key);
    await client.readResource({ uri: 'mcp-gateway://alpha/file:///logs/secret-day-77' });
    await client.close();
    const rows = (await usageRows(bothKey.keyId)).filter((row) => row.mcp?.tool === 'resource' && row.mcp.server === 'alpha');
    expect(rows.length).toBeGreaterThanOrEqual(1);
    expect(rows[0]).toMatchObject({ status: 200 });
    expect(JSON.stringify(rows)).not.toContain('secret-day-77');
  });
});

describe(`who may see and read what (${suiteDatabase()})`, () => {
  it('a key of the public server only sees and reads nothing of the other', async () => {
    const client = await connect(publicKey.key);
    expect((await client.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual(['alpha__greet']);
    expect((await client.listResources()).resources.map((resource) => resource.uri)).toEqual(['mcp-gateway://alpha/note://alpha/readme']);
    expect((await client.listResourceTemplates()).resourceTemplates.map((template) => template.uriTemplate)).toEqual(['mcp-gateway://alpha/file:///logs/{day}']);
    const betaBefore = beta.requests;
    expect((await rpcError(client.getPrompt({ name: 'beta__greet', arguments: { who: 'x' } }))).code).toBe(-32602);
    expect((await rpcError(client.readResource({ uri: 'mcp-gateway://beta/note://beta/readme' }))).code).toBe(-32002);
    expect((await rpcError(client.readResource({ uri: 'mcp-gateway://beta/file:///logs/x' }))).code).toBe(-32002);
    expect(beta.requests).toBe(betaBefore);
    await client.close();
  });

  it('a key of no server sees empty lists and reads nothing', async () => {
    const client = await connect(noneKey.key);
    expect((await client.listPrompts()).prompts).toEqual([]);
    expect((await client.listResources()).resources).toEqual([]);
    expect((await client.listResourceTemplates()).resourceTemplates).toEqual([]);
    const before = alpha.requests;
    expect((await rpcError(client.readResource({ uri: 'mcp-gateway://alpha/note://alpha/readme' }))).code).toBe(-32002);
    expect((await rpcError(client.getPrompt({ name: 'alpha__greet', arguments: { who: 'x' } }))).code).toBe(-32602);
    expect(alpha.requests).toBe(before);
    await client.close();
  });

  it('refuses another account\'s key on a session', async () => {
    const opened = await rawPost(bothKey.key, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } } });
    const session = opened.headers.get('mcp-session-id') as string;
    const headers = { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
    const read = { jsonrpc: '2.0', id: 2, method: 'resources/read', params: { uri: 'mcp-gateway://alpha/note://alpha/readme' } };
    const own = await rawPost(bothKey.key, read, headers);
    expect(await own.json()).toMatchObject({ result: { contents: [{ text: 'readme of alpha' }] } });
    expect((await rawPost(otherAccount.key, read, headers)).status).toBe(404);
    expect((await rawPost(otherAccount.key, { jsonrpc: '2.0', id: 3, method: 'prompts/get', params: { name: 'alpha__greet', arguments: { who: 'x' } } }, headers)).status).toBe(404);
  });
});

describe(`guardrails on prompts and resources (${suiteDatabase()})`, () => {
  it('masks a prompt\'s and a resource\'s text and blocks what a policy blocks', async () => {
    const client = await connect(guarded.key);
    const got = await client.getPrompt({ name: 'alpha__greet', arguments: { who: 'codeword' } });
    const said = textOf(got.messages[0]?.content);
    expect(said).toContain('alpha says hello to');
    expect(said).not.toContain('codeword');
    const masked = await client.readResource({ uri: 'mcp-gateway://alpha/file:///logs/codeword' });
    expect((masked.contents[0] as { text: string }).text).not.toContain('codeword');
    const blocked = await rpcError(client.readResource({ uri: 'mcp-gateway://alpha/file:///logs/forbidden' }));
    expect(blocked.code).toBe(-32010);
    expect(blocked.message).not.toContain('alpha logs');
    await client.close();
    const rows = (await usageRows(guarded.keyId)).filter((row) => row.mcp?.server === 'alpha');
    expect(rows.some((row) => row.error_code === 'guardrail_blocked' && row.guardrails.some((entry) => entry.name === 'no-forbidden' && entry.outcome === 'blocked'))).toBe(true);
  });
});
