/**
 * Upstream MCP servers that require OAuth 2.1 client credentials, over real HTTP on the suite's database (SQLite, or
 * PostgreSQL with TEST_DATABASE_URL), with the official MCP SDK's client at the gateway's /mcp: the gateway gets a
 * token from a mock token endpoint (client_secret_basic or client_secret_post), reuses it, renews it when it expires,
 * replaces it once on a 401 and retries, and turns a refused client secret into a clear error on the call and the
 * server's health. The client secret is sealed and never shown; the token URL obeys the private-address rule; and this
 * gateway, without MCP_ALLOW_STDIO, refuses stdio servers.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockGeminiUpstream, type MockGeminiUpstream } from '../../support/mock-gemini-upstream.js';
import { addRoutedModel, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockOAuthMcpServer, type MockOAuthMcpServer } from '../../support/mock-oauth-mcp-server.js';
import { rawTableText } from '../../support/raw-table.js';

let gateway: TestGateway;
let gemini: MockGeminiUpstream;
let strict: TestGateway;
let upstream: MockOAuthMcpServer;
let caller: SeededAccount;
let serverId: string;

async function connect(key: string): Promise<Client> {
  const client = new Client({ name: 'mcp-oauth-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
}

function text(result: CallToolResult): string {
  const first = result.content[0];
  return first?.type === 'text' ? first.text : '';
}

async function whoami(): Promise<string> {
  const client = await connect(caller.key);
  try {
    return text(await client.callTool({ name: 'guarded__whoami', arguments: {} }) as CallToolResult);
  } finally {
    await client.close();
  }
}

beforeAll(async () => {
  upstream = await startMockOAuthMcpServer({ expiresInSeconds: 3600 });
  [gateway, strict] = await Promise.all([
    startTestGateway({ env: { MCP_ALLOW_PRIVATE_ADDRESSES: 'true', MCP_HEALTH_CHECK_INTERVAL_SECONDS: '0' } }),
    startTestGateway({ env: { MCP_HEALTH_CHECK_INTERVAL_SECONDS: '0' } }),
  ]);
  const created = await gateway.admin<{ id: string }>('POST', '/admin/mcp-servers', {
    name: 'guarded', url: upstream.url, public: true,
    oauth: { token_url: upstream.tokenUrl, client_id: upstream.clientId, client_secret: upstream.clientSecret, scope: 'tools:read tools:call' },
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
  await Promise.all([gateway?.close(), strict?.close()]);
  await upstream?.close();
});

describe('OAuth client credentials for upstream MCP servers', () => {
  it('serves the server to a model through the Responses mcp tool', async () => {
    const openai = new OpenAI({ baseURL: gateway.baseURL, apiKey: caller.key, maxRetries: 0, timeout: 30_000 });
    const answer = await openai.responses.create({
      model: 'r-gemini', input: 'call guarded__whoami with {}', store: false,
      tools: [{ type: 'mcp', server_label: 'guarded', require_approval: 'never' }],
    });
    const called = answer.output.find((item) => item.type === 'mcp_call');
    expect(called, JSON.stringify(answer.output)).toMatchObject({ type: 'mcp_call', server_label: 'guarded', name: 'whoami', error: null });
    if (called?.type !== 'mcp_call') throw new Error('no mcp_call');
    expect(called?.output).toMatch(/^tok-/);
  });

  it('keeps the client secret sealed: shown as set, never in clear', async () => {
    const one = await gateway.admin<Record<string, unknown>>('GET', `/admin/mcp-servers/${serverId}`);
    expect(one.status).toBe(200);
    expect(one.body.oauth).toEqual({
      token_url: upstream.tokenUrl, client_id: upstream.clientId, client_secret: 'set', scope: 'tools:read tools:call', audience: null, auth_method: 'client_secret_basic',
    });
    const listed = await gateway.admin('GET', '/admin/mcp-servers');
    expect(JSON.stringify(listed.body)).not.toContain(upstream.clientSecret);
    expect(JSON.stringify(one.body)).not.toContain(upstream.clientSecret);
    const stored = await rawTableText(gateway.databaseUrl, 'mcp_servers');
    expect(stored).toContain(upstream.clientId);
    expect(stored).not.toContain(upstream.clientSecret);
    const missing = await gateway.admin<{ error: { param: string } }>('POST', '/admin/mcp-servers', { name: 'nosecret', url: upstream.url, oauth: { token_url: upstream.tokenUrl, client_id: 'x' } });
    expect(missing.status).toBe(400);
    expect(missing.body.error.param).toBe('oauth.client_secret');
    // The sealed secret is never sent to a token endpoint it was not given for.
    const moved = await gateway.admin<{ error: { param: string } }>('PATCH', `/admin/mcp-servers/${serverId}`, { oauth: { token_url: 'https://elsewhere.example/token', client_id: upstream.clientId } });
    expect(moved.status).toBe(400);
    expect(moved.body.error.param).toBe('oauth.client_secret');
    expect((await gateway.admin<{ oauth: { token_url: string } }>('GET', `/admin/mcp-servers/${serverId}`)).body.oauth.token_url).toBe(upstream.tokenUrl);
  });

  it('gets one token by client_secret_basic and reuses it for the next calls', async () => {
    // A changed server gets a new token: the next call obtains one.
    await gateway.admin('PATCH', `/admin/mcp-servers/${serverId}`, { enabled: true });
    const before = upstream.tokenRequests.length;
    const first = await whoami();
    const second = await whoami();
    expect(first).toMatch(/^tok-/);
    expect(second).toBe(first);
    const requests = upstream.tokenRequests.slice(before);
    expect(requests.length).toBe(1);
    expect(requests[0]).toMatchObject({ method: 'basic', granted: true, form: { grant_type: 'client_credentials', scope: 'tools:read tools:call', resource: upstream.url } });
    expect(requests[0]?.form.client_secret).toBeUndefined();
  });

  it('obtains a token once for calls made at the same time', async () => {
    await gateway.admin('PATCH', `/admin/mcp-servers/${serverId}`, { enabled: true });
    const before = upstream.tokenRequests.length;
    const tokens = await Promise.all(Array.from({ length: 5 }, () => whoami()));
    expect(new Set(tokens).size).toBe(1);
    expect(upstream.tokenRequests.length - before).toBe(1);
  });

  it('renews a token that expired, before the server has to refuse it', async () => {
    upstream.expiresInSeconds = 2;
    try {
      await gateway.admin('PATCH', `/admin/mcp-servers/${serverId}`, { enabled: true });
      const first = await whoami();
      const rejectedBefore = upstream.rejected;
      await new Promise((resolve) => setTimeout(resolve, 2100));
      const second = await whoami();
      expect(second).not.toBe(first);
      expect(upstream.rejected).toBe(rejectedBefore);
    } finally {
      upstream.expiresInSeconds = 3600;
    }
  });

  it('replaces a token the server refuses (401) once and retries the call', async () => {
    // A token of an hour (the change drops the two-second one the test before may have left): only the 401 renews it.
    await gateway.admin('PATCH', `/admin/mcp-servers/${serverId}`, { enabled: true });
    const first = await whoami();
    upstream.revokeAll();
    const tokensBefore = upstream.tokenRequests.length;
    const rejectedBefore = upstream.rejected;
    const second = await whoami();
    expect(second).not.toBe(first);
    expect(upstream.rejected - rejectedBefore).toBe(1);
    expect(upstream.tokenRequests.length - tokensBefore).toBe(1);
  });

  it('sends client_secret_post credentials in the form when the operator chooses it', async () => {
    const patched = await gateway.admin('PATCH', `/admin/mcp-servers/${serverId}`, { oauth: { token_url: upstream.tokenUrl, client_id: upstream.clientId, auth_method: 'client_secret_post', audience: 'https://tools.example' } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    const before = upstream.tokenRequests.length;
    expect(await whoami()).toMatch(/^tok-/);
    const request = upstream.tokenRequests[before];
    expect(request).toMatchObject({ method: 'post', granted: true, form: { client_id: upstream.clientId, client_secret: upstream.clientSecret, audience: 'https://tools.example' } });
  });

  it('turns a refused client secret into a clear error on the call and marks the server unhealthy', async () => {
    const patched = await gateway.admin('PATCH', `/admin/mcp-servers/${serverId}`, { oauth: { token_url: upstream.tokenUrl, client_id: upstream.clientId, client_secret: 'wrong-secret-value' } });
    expect(patched.status).toBe(200);
    const tokenRequestsBefore = upstream.tokenRequests.length;
    const client = await connect(caller.key);
    try {
      const error = await client.callTool({ name: 'guarded__whoami', arguments: {} }).then(() => null, (thrown: unknown) => thrown);
      expect(error).toBeInstanceOf(McpError);
      expect((error as McpError).message).toContain('token endpoint');
      expect((error as McpError).message).toContain('invalid_client');
      expect((error as McpError).message).not.toContain('wrong-secret-value');
    } finally {
      await client.close();
    }
    const server = await gateway.admin<{ health: { status: string; error: string } | null }>('GET', `/admin/mcp-servers/${serverId}`);
    expect(server.body.health?.status).toBe('unhealthy');
    expect(server.body.health?.error).toContain('invalid_client');
    const live = await gateway.admin<{ error: { message: string } }>('GET', `/admin/mcp-servers/${serverId}/tools`);
    expect(live.status).toBe(502);
    expect(live.body.error.message).toContain('token endpoint');
    // The refusal is repeated for a moment rather than asked again on every call.
    expect(upstream.tokenRequests.length - tokenRequestsBefore).toBe(1);
    // Put right, the server is reached again.
    await gateway.admin('PATCH', `/admin/mcp-servers/${serverId}`, { oauth: { token_url: upstream.tokenUrl, client_id: upstream.clientId, client_secret: upstream.clientSecret } });
    expect(await whoami()).toMatch(/^tok-/);
  });

  it('refuses a token URL on a private address unless the operator allows them', async () => {
    const refused = await strict.admin<{ error: { param: string; message: string } }>('POST', '/admin/mcp-servers', {
      name: 'sneaky', url: 'https://93.184.215.14/mcp', oauth: { token_url: 'http://127.0.0.1:9/token', client_id: 'a', client_secret: 'b' },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.param).toBe('oauth.token_url');
  });

  it('refuses stdio servers when MCP_ALLOW_STDIO is off', async () => {
    const refused = await strict.admin<{ error: { param: string; message: string } }>('POST', '/admin/mcp-servers', { name: 'local', transport: 'stdio', command: process.execPath, args: ['-e', '1'] });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain('MCP_ALLOW_STDIO');
    const listed = await strict.admin<{ data: unknown[] }>('GET', '/admin/mcp-servers');
    expect(listed.body.data).toEqual([]);
  });
});
