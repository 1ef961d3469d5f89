/**
 * A key's MCP servers set by an account's member through the console API, over real HTTP on the suite's database:
 * a developer (not the owner) is offered exactly the servers the operator opened to the account, and a key made or
 * changed with any other server (the operator's private one, another account's grant) is refused with the spec's
 * 400 naming `allowed_mcp_servers`, the key left as it was; once the operator grants the account a server, the
 * member may give it to a key. An account registers no server: neither its owner's console session (the operator
 * API) nor its API key (the admin API) reaches the registry. The servers are never connected to (health checks off).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedAccount } from '../../support/gateway-harness.js';
import { type ConsoleClient, linkToken, strongPassword, uniqueEmail, waitForMail } from '../../support/console-client.js';
import { signUpUser, startConsoleGateway, type ConsoleGateway, type SignedUpUser } from './console-gateway.js';

interface KeyJson { id: string; allowed_mcp_servers: string[] | null }
interface ErrorJson { error: { code: string; type: string; param?: string; message: string } }

let setup: ConsoleGateway;
let owner: SignedUpUser;
let developer: ConsoleClient;

async function inviteDeveloper(): Promise<ConsoleClient> {
  const email = uniqueEmail('developer');
  const invited = await owner.client.request('POST', '/api/members/invitations', { email, role: 'developer' });
  expect(invited.status, invited.text).toBe(201);
  const token = linkToken(await waitForMail(setup.mail, email, /invited you/i));
  const client = setup.client();
  const accepted = await client.request('POST', '/api/invitations/accept', { token, password: strongPassword() });
  expect(accepted.status, accepted.text).toBe(200);
  return client;
}

async function storedServers(keyId: string): Promise<string[] | null | undefined> {
  return (await setup.gateway.gateway.services.storage.keys.getById(keyId))?.allowedMcpServers;
}

function expectRefused(answer: { status: number; body: unknown; text: string }, server: string): void {
  expect(answer.status, answer.text).toBe(400);
  expect((answer.body as ErrorJson).error).toMatchObject({ code: 'bad_request', type: 'invalid_request_error', param: 'allowed_mcp_servers' });
  expect((answer.body as ErrorJson).error.message).toContain(`'${server}'`);
}

beforeAll(async () => {
  setup = await startConsoleGateway({ MCP_ALLOW_PRIVATE_ADDRESSES: 'true', MCP_HEALTH_CHECK_INTERVAL_SECONDS: '0' });
  for (const [name, open] of [['docs', true], ['crm', false], ['ledger', false]] as const) {
    const created = await setup.gateway.admin('POST', '/admin/mcp-servers', { name, url: `http://127.0.0.1:9/${name}/mcp`, public: open });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  }
  // Another account is granted `ledger`: a grant of one account opens nothing to another.
  const other = await seedAccount(setup.gateway);
  expect((await setup.gateway.admin('PUT', `/admin/accounts/${other.accountId}/mcp-policy`, { allowed_servers: ['ledger'] })).status).toBe(200);
  owner = await signUpUser(setup);
  developer = await inviteDeveloper();
}, 120_000);

afterAll(async () => {
  await setup?.close();
});

describe('a key\'s MCP servers from the console', () => {
  it('offers a member the account\'s servers only and refuses a key with any other, on create and on change', async () => {
    const offered = await developer.request<{ data: Array<{ name: string }> }>('GET', '/api/mcp-servers');
    expect(offered.status, offered.text).toBe(200);
    expect(offered.body.data).toEqual([{ name: 'docs' }]);

    const keysBefore = (await developer.request<{ data: KeyJson[] }>('GET', '/api/keys')).body.data.length;
    expectRefused(await developer.request('POST', '/api/keys', { name: 'reaches-crm', allowed_mcp_servers: ['docs', 'crm'] }), 'crm');
    expectRefused(await developer.request('POST', '/api/keys', { name: 'reaches-ledger', allowed_mcp_servers: ['ledger'] }), 'ledger');
    expect((await developer.request<{ data: KeyJson[] }>('GET', '/api/keys')).body.data).toHaveLength(keysBefore);

    const created = await developer.request<{ key: KeyJson }>('POST', '/api/keys', { name: 'docs-only', allowed_mcp_servers: ['docs'] });
    expect(created.status, created.text).toBe(201);
    const keyId = created.body.key.id;
    expect(created.body.key.allowed_mcp_servers).toEqual(['docs']);

    expectRefused(await developer.request('PATCH', `/api/keys/${keyId}`, { allowed_mcp_servers: ['docs', 'crm'] }), 'crm');
    expectRefused(await developer.request('PATCH', `/api/keys/${keyId}`, { name: 'renamed', allowed_mcp_servers: ['ledger'] }), 'ledger');
    expect(await storedServers(keyId)).toEqual(['docs']);
    expect((await setup.gateway.gateway.services.storage.keys.getById(keyId))?.name).toBe('docs-only');

    // The operator grants the account crm (and only crm): the member may now give it, and no longer docs.
    expect((await setup.gateway.admin('PUT', `/admin/accounts/${owner.accountId}/mcp-policy`, { allowed_servers: ['crm'] })).status).toBe(200);
    expect((await developer.request<{ data: Array<{ name: string }> }>('GET', '/api/mcp-servers')).body.data).toEqual([{ name: 'crm' }]);
    const granted = await developer.request<{ key: KeyJson }>('PATCH', `/api/keys/${keyId}`, { allowed_mcp_servers: ['crm'] });
    expect(granted.status, granted.text).toBe(200);
    expect(await storedServers(keyId)).toEqual(['crm']);
    expectRefused(await developer.request('PATCH', `/api/keys/${keyId}`, { allowed_mcp_servers: ['docs'] }), 'docs');
    expect(await storedServers(keyId)).toEqual(['crm']);
  });

  it('lets no account register a server, by its console session or its API key', async () => {
    const before = (await setup.gateway.admin<{ data: Array<{ name: string }> }>('GET', '/admin/mcp-servers')).body.data.map((server) => server.name);
    const server = { name: 'own-tools', url: 'https://mcp.example.com/mcp', public: true };
    for (const client of [owner.client, developer]) {
      const answer = await client.request('POST', '/api/operator/admin/mcp-servers', server);
      expect(answer.status, answer.text).toBe(403);
    }
    const key = (await owner.client.request<{ secret: string }>('POST', '/api/keys', { name: 'admin-attempt' })).body.secret;
    const byKey = await fetch(`${setup.gateway.url}/admin/mcp-servers`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(server) });
    expect(byKey.status).toBe(401);
    expect((await setup.gateway.admin<{ data: Array<{ name: string }> }>('GET', '/admin/mcp-servers')).body.data.map((entry) => entry.name)).toEqual(before);
  });
});
