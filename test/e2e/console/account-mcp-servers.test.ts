/**
 * An account's own MCP servers, over real HTTP on the suite's database: with MCP_ALLOW_ACCOUNT_SERVERS off an owner is
 * refused (403, the spec's error object); on, the owner registers a server (a mock built with the official SDK, its
 * static header sealed and sent upstream), the account's key calls its tool through /mcp and is charged the price the
 * operator set, the operator lists it with its owner; another account neither sees nor calls it nor reaches it by id
 * (404); a developer or viewer is refused (403); stdio and private addresses are refused whatever
 * MCP_ALLOW_PRIVATE_ADDRESSES says; a name another server holds is refused. The mock listens on a local address the
 * gateway's address check counts as public (none on the machine: those tests are skipped, saying why).
 */
import { randomBytes } from 'node:crypto';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { accountMcpServer, accountMcpServerList } from '../../../src/contract/keys.js';
import { addressRefusal } from '../../../src/webhooks/endpoint-address.js';
import { flushWrites, seedAccount, startTestGateway, type SeededAccount } from '../../support/gateway-harness.js';
import { startMockMcpServer, type MockMcpServer } from '../../support/mock-mcp-server.js';
import { type ConsoleClient, linkToken, strongPassword, uniqueEmail, waitForMail } from '../../support/console-client.js';
import { signUpUser, startConsoleGateway, type ConsoleGateway, type SignedUpUser } from './console-gateway.js';

interface ErrorJson { error: { code: string; type: string; param?: string; message: string } }
interface ServerJson { id: string; name: string; url: string; header_names: string[]; owner_account_id?: string | null }

/** A local IPv4 address the gateway would reach for an account (not loopback nor private), or null. */
function publicLocalAddress(): string | null {
  for (const entries of Object.values(networkInterfaces())) {
    for (const entry of entries ?? []) {
      if (entry.family === 'IPv4' && !entry.internal && addressRefusal(entry.address, { allowHttpLoopback: false, allowPrivateAddresses: false }) === null) return entry.address;
    }
  }
  return null;
}

const host = publicLocalAddress();
/** One fleet's key that seals upstream credentials, so a second instance on the same database opens them too. */
const secretKey = randomBytes(32).toString('hex');

let on: ConsoleGateway;
let off: ConsoleGateway;
let owner: SignedUpUser;
let stranger: SignedUpUser;
let upstream: MockMcpServer | null = null;

async function invite(role: 'developer' | 'viewer'): Promise<ConsoleClient> {
  const email = uniqueEmail(role);
  const invited = await owner.client.request('POST', '/api/members/invitations', { email, role });
  expect(invited.status, invited.text).toBe(201);
  const token = linkToken(await waitForMail(on.mail, email, /invited you/i));
  const client = on.client();
  const accepted = await client.request('POST', '/api/invitations/accept', { token, password: strongPassword() });
  expect(accepted.status, accepted.text).toBe(200);
  return client;
}

async function connect(key: string): Promise<Client> {
  const client = new Client({ name: 'account-mcp-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${on.gateway.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
}

async function keyOf(user: SignedUpUser): Promise<string> {
  const created = await user.client.request<{ secret: string }>('POST', '/api/keys', { name: 'mcp' });
  expect(created.status, created.text).toBe(201);
  return created.body.secret;
}

function expectError(answer: { status: number; body: unknown; text: string }, status: number, code: string): void {
  expect(answer.status, answer.text).toBe(status);
  expect((answer.body as ErrorJson).error.code).toBe(code);
}

beforeAll(async () => {
  // Private addresses allowed for the operator's servers: an account's are refused them all the same.
  // Checks run now are bounded to two seconds: a server nothing answers on is down within them.
  on = await startConsoleGateway({ SECRET_KEY: secretKey, MCP_ALLOW_ACCOUNT_SERVERS: 'true', MCP_ALLOW_PRIVATE_ADDRESSES: 'true', MCP_HEALTH_CHECK_INTERVAL_SECONDS: '0', MCP_HEALTH_CHECK_TIMEOUT_SECONDS: '2' });
  off = await startConsoleGateway({ MCP_ALLOW_PRIVATE_ADDRESSES: 'true', MCP_HEALTH_CHECK_INTERVAL_SECONDS: '0' });
  owner = await signUpUser(on);
  stranger = await signUpUser(on);
  if (host !== null) upstream = await startMockMcpServer('acct', 'streamable-http', { host });
  const operators = await on.gateway.admin('POST', '/admin/mcp-servers', { name: 'docs', url: 'http://127.0.0.1:9/docs/mcp', public: true });
  expect(operators.status, JSON.stringify(operators.body)).toBe(201);
}, 120_000);

afterAll(async () => {
  await Promise.all([on?.close(), off?.close()]);
  await upstream?.close();
});

describe('an account\'s own MCP servers', () => {
  it('are refused with 403 while the operator has not allowed them', async () => {
    const user = await signUpUser(off);
    expectError(await user.client.request('POST', '/api/mcp-servers', { name: 'mine', url: 'https://mcp.example.com/mcp' }), 403, 'forbidden');
    // The list says the switch is off, so the console offers no way to add one.
    const listed = await user.client.request('GET', '/api/mcp-servers/own');
    expect(listed.status, listed.text).toBe(200);
    expect(accountMcpServerList.parse(listed.body)).toEqual({ object: 'list', data: [], account_servers_allowed: false });
    expect((await off.gateway.admin<{ data: unknown[] }>('GET', '/admin/mcp-servers')).body.data).toEqual([]);
  });

  it('refuses stdio, private addresses and a name another server holds', async () => {
    expectError(await owner.client.request('POST', '/api/mcp-servers', { name: 'local', transport: 'stdio', command: 'node' }), 400, 'bad_request');
    for (const url of ['http://127.0.0.1:9/mcp', 'http://10.1.2.3/mcp', 'http://[::1]:9/mcp', 'http://192.168.0.5/mcp', 'http://localhost:9/mcp']) {
      const refused = await owner.client.request('POST', '/api/mcp-servers', { name: 'inside', url });
      expectError(refused, 400, 'bad_request');
      expect((refused.body as unknown as ErrorJson).error.param).toBe('url');
    }
    expectError(await owner.client.request('POST', '/api/mcp-servers', { name: 'docs', url: 'https://mcp.example.com/mcp' }), 409, 'conflict');
    expect(accountMcpServerList.parse((await owner.client.request('GET', '/api/mcp-servers/own')).body)).toEqual({ object: 'list', data: [], account_servers_allowed: true });
  });

  it('refuses a developer and a viewer', async () => {
    for (const role of ['developer', 'viewer'] as const) {
      const member = await invite(role);
      expectError(await member.request('POST', '/api/mcp-servers', { name: `by-${role}`, url: 'https://mcp.example.com/mcp' }), 403, 'forbidden');
      expectError(await member.request('GET', '/api/mcp-servers/own'), 403, 'forbidden');
    }
  });

  it.skipIf(host === null)('serves the owner\'s server to its own keys only, charged, and to no other account', async () => {
    const created = await owner.client.request<ServerJson>('POST', '/api/mcp-servers', { name: 'acct', url: upstream?.url, headers: { Authorization: 'Bearer upstream-secret' } });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ name: 'acct', header_names: ['Authorization'] });
    expect(created.text).not.toContain('upstream-secret');
    accountMcpServer.parse(created.body);
    const id = created.body.id;
    const own = await owner.client.request('GET', '/api/mcp-servers/own');
    expect(accountMcpServerList.parse(own.body).data.map((server) => server.id)).toEqual([id]);

    // The operator sees it with its owner, and may price it.
    const listed = await on.gateway.admin<{ data: ServerJson[] }>('GET', '/admin/mcp-servers');
    expect(listed.body.data.find((server) => server.id === id)?.owner_account_id).toBe(owner.accountId);
    expect((await on.gateway.admin('PATCH', `/admin/mcp-servers/${id}`, { price_per_call: '0.25' })).status).toBe(200);

    const offered = await owner.client.request<{ data: Array<{ name: string }> }>('GET', '/api/mcp-servers');
    expect(offered.body.data.map((server) => server.name).sort()).toEqual(['acct', 'docs']);
    await on.gateway.admin('POST', `/admin/accounts/${owner.accountId}/credits`, { amount_usd: 1 });
    const key = await keyOf(owner);
    const client = await connect(key);
    const tools = (await client.listTools()).tools.map((tool) => tool.name);
    expect(tools).toContain('acct__add');
    const before = (await on.gateway.admin<{ balance_usd: number }>('GET', `/admin/accounts/${owner.accountId}`)).body.balance_usd;
    const sum = await client.callTool({ name: 'acct__add', arguments: { a: 20, b: 22 } }) as CallToolResult;
    expect(sum.content[0]).toMatchObject({ type: 'text', text: '42' });
    await client.close();
    // The static header the owner gave is sent upstream (sealed at rest, never shown back).
    const stored = await on.gateway.gateway.services.storage.mcpServers.headersOf(id);
    expect(stored).toEqual({ Authorization: 'Bearer upstream-secret' });
    await flushWrites(on.gateway);
    const after = (await on.gateway.admin<{ balance_usd: number }>('GET', `/admin/accounts/${owner.accountId}`)).body.balance_usd;
    expect(Math.round((before - after) * 1e9)).toBe(250_000_000);
    expect(upstream?.calls).toEqual(['add']);

    // An instance of the same fleet with the switch off keeps the server stored but serves it to no key.
    const switchedOff = await startTestGateway({ env: { SECRET_KEY: secretKey, DATABASE_URL: on.gateway.databaseUrl, MCP_ALLOW_PRIVATE_ADDRESSES: 'true', MCP_HEALTH_CHECK_INTERVAL_SECONDS: '0' } });
    try {
      const offClient = new Client({ name: 'account-mcp-test', version: '1.0.0' });
      await offClient.connect(new StreamableHTTPClientTransport(new URL(`${switchedOff.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
      expect((await offClient.listTools()).tools.map((tool) => tool.name).filter((name) => name.startsWith('acct__'))).toEqual([]);
      const offCall = await offClient.callTool({ name: 'acct__add', arguments: { a: 1, b: 2 } }).catch((error: unknown) => error);
      expect(offCall instanceof Error || (offCall as CallToolResult).isError === true).toBe(true);
      await offClient.close();
      expect((await switchedOff.admin<{ data: ServerJson[] }>('GET', '/admin/mcp-servers')).body.data.map((server) => server.id)).toContain(id);
    } finally {
      await switchedOff.close();
    }
    expect(upstream?.calls).toEqual(['add']);

    // Another account: not offered, not listed, not callable (even by naming it), not reachable by id.
    const strangerOffered = await stranger.client.request<{ data: Array<{ name: string }> }>('GET', '/api/mcp-servers');
    expect(strangerOffered.body.data.map((server) => server.name)).toEqual(['docs']);
    expect((await stranger.client.request<{ data: unknown[] }>('GET', '/api/mcp-servers/own')).body.data).toEqual([]);
    expectError(await stranger.client.request('POST', '/api/keys', { name: 'reach', allowed_mcp_servers: ['acct'] }), 400, 'bad_request');
    expectError(await stranger.client.request('PATCH', `/api/mcp-servers/${id}`, { url: 'https://evil.example.com/mcp' }), 404, 'not_found');
    expectError(await stranger.client.request('DELETE', `/api/mcp-servers/${id}`), 404, 'not_found');
    const other: SeededAccount = await seedAccount(on.gateway, { key: { allowed_mcp_servers: ['acct', 'docs'] } });
    const strangerClient = await connect(other.key);
    expect((await strangerClient.listTools()).tools.map((tool) => tool.name).filter((name) => name.startsWith('acct__'))).toEqual([]);
    const refused = await strangerClient.callTool({ name: 'acct__add', arguments: { a: 1, b: 2 } }).catch((error: unknown) => error);
    expect(refused instanceof Error || (refused as CallToolResult).isError === true).toBe(true);
    await strangerClient.close();
    expect(upstream?.calls).toEqual(['add']);

    // The owner changes and removes it; a private address is refused on a change too.
    expectError(await owner.client.request('PATCH', `/api/mcp-servers/${id}`, { url: 'http://169.254.169.254/mcp' }), 400, 'bad_request');
    const renamed = await owner.client.request<ServerJson>('PATCH', `/api/mcp-servers/${id}`, { name: 'acct2' });
    expect(renamed.status, renamed.text).toBe(200);
    expect(accountMcpServer.parse(renamed.body).name).toBe('acct2');
    const removed = await owner.client.request('DELETE', `/api/mcp-servers/${id}`);
    expect(removed.status, removed.text).toBe(204);
    expect(accountMcpServerList.parse((await owner.client.request('GET', '/api/mcp-servers/own')).body)).toEqual({ object: 'list', data: [], account_servers_allowed: true });
  });

  it('checks one of its own servers now: recorded as its health, rate-limited, and no one else\'s', async () => {
    const user = await signUpUser(on);
    // A public address (TEST-NET-3) nothing answers on: registered fine, its check fails.
    const created = await user.client.request<ServerJson>('POST', '/api/mcp-servers', { name: `down-${randomBytes(3).toString('hex')}`, url: 'http://203.0.113.77:9/mcp' });
    expect(created.status, created.text).toBe(201);
    const id = created.body.id;
    expect(accountMcpServer.parse(created.body).health).toBeNull();

    // Another account's id, and an id that does not exist: 404, nothing checked.
    expectError(await stranger.client.request('POST', `/api/mcp-servers/${id}/check`), 404, 'not_found');
    expectError(await user.client.request('POST', '/api/mcp-servers/mcp_missing/check'), 404, 'not_found');
    expect((await on.gateway.gateway.services.storage.mcpServers.get(id))?.health).toBeNull();
    // A developer of the account (mcp:manage is owners' and admins'): 403; with the switch off: 403.
    const email = uniqueEmail('developer');
    expect((await user.client.request('POST', '/api/members/invitations', { email, role: 'developer' })).status).toBe(201);
    const developer = on.client();
    expect((await developer.request('POST', '/api/invitations/accept', { token: linkToken(await waitForMail(on.mail, email, /invited you/i)), password: strongPassword() })).status).toBe(200);
    expectError(await developer.request('POST', `/api/mcp-servers/${id}/check`), 403, 'forbidden');
    const offUser = await signUpUser(off);
    expectError(await offUser.client.request('POST', `/api/mcp-servers/${id}/check`), 403, 'forbidden');
    expect((await on.gateway.gateway.services.storage.mcpServers.get(id))?.health).toBeNull();

    // The owner's check: the verdict answered and kept as the server's health.
    const checked = await user.client.request('POST', `/api/mcp-servers/${id}/check`);
    expect(checked.status, checked.text).toBe(200);
    const health = accountMcpServer.parse(checked.body).health;
    expect(health).toMatchObject({ status: 'unhealthy', latency_ms: null, tool_count: 0 });
    expect(health?.error).toBeTruthy();
    expect((await on.gateway.gateway.services.storage.mcpServers.get(id))?.health?.status).toBe('unhealthy');
    const listed = accountMcpServerList.parse((await user.client.request('GET', '/api/mcp-servers/own')).body);
    expect(listed.data[0]?.health?.checked_at).toBe(health?.checked_at);

    // Three checks a minute per server: the fourth is refused with Retry-After, and no connection is made for it.
    expect((await user.client.request('POST', `/api/mcp-servers/${id}/check`)).status).toBe(200);
    expect((await user.client.request('POST', `/api/mcp-servers/${id}/check`)).status).toBe(200);
    const limited = await user.client.request('POST', `/api/mcp-servers/${id}/check`);
    expectError(limited, 429, 'rate_limit_exceeded');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);

    // A disabled server is not connected to.
    const second = await user.client.request<ServerJson>('POST', '/api/mcp-servers', { name: `off-${randomBytes(3).toString('hex')}`, url: 'http://203.0.113.78:9/mcp', enabled: false });
    expect(second.status, second.text).toBe(201);
    expectError(await user.client.request('POST', `/api/mcp-servers/${second.body.id}/check`), 409, 'conflict');
  });

  it.skipIf(host === null)('a check run now of a server that answers lists its tools', async () => {
    const user = await signUpUser(on);
    const created = await user.client.request<ServerJson>('POST', '/api/mcp-servers', { name: `up-${randomBytes(3).toString('hex')}`, url: upstream?.url });
    expect(created.status, created.text).toBe(201);
    const checked = await user.client.request('POST', `/api/mcp-servers/${created.body.id}/check`);
    expect(checked.status, checked.text).toBe(200);
    const health = accountMcpServer.parse(checked.body).health;
    expect(health?.status).toBe('healthy');
    expect(health?.tools.map((tool) => tool.name)).toContain('add');
  });
});
