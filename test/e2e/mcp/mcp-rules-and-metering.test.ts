/**
 * What an MCP call is allowed and charged, over real HTTP on the suite's database (SQLite, or PostgreSQL with
 * TEST_DATABASE_URL; limits counted in Redis with TEST_REDIS_URL), the official SDK client at /mcp and a real SDK
 * server upstream: a price per call held and charged exactly (refused as a tool error result with the spec's error
 * object when the balance cannot pay), calls per minute and concurrency refused with a clear message (a key's, its
 * project's and its account's limits each counted over their owner's calls), a usage row per call without its
 * arguments unless the server logs payloads, tool rules that hide and refuse tools, account allowlists, and private
 * addresses refused unless the operator allows them, at registration and at every connection.
 */
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushWrites, seedAccount, startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { startMockMcpServer, type MockMcpServer } from '../../support/mock-mcp-server.js';
import { awayFromWindowEdge } from '../console/console-gateway.js';
import { RedisFixture, TEST_REDIS_URL, testKeyPrefix } from '../../unit/limits/redis-test-support.js';

let gateway: TestGateway;
let strict: TestGateway;
let upstream: MockMcpServer;
let redis: RedisFixture | null = null;

async function connect(key: string, through: TestGateway = gateway): Promise<Client> {
  const client = new Client({ name: 'mcp-rules-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${through.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
}

function text(result: CallToolResult): string {
  const first = result.content[0];
  return first?.type === 'text' ? first.text : '';
}

interface UsageRow { request_id: string; protocol: string; latency_ms: number | null; status: number; error_code: string | null; cost_usd: number; model: string | null; mcp: { server: string; tool: string; bytes_in: number; bytes_out: number; payload?: string } | null }

async function usageOf(accountId: string): Promise<UsageRow[]> {
  await flushWrites(gateway);
  return (await gateway.admin<{ data: UsageRow[] }>('GET', `/admin/usage?account_id=${accountId}`)).body.data;
}

beforeAll(async () => {
  upstream = await startMockMcpServer('paid', 'streamable-http');
  // The mock server listens on 127.0.0.1: this gateway allows private addresses, explicitly; `strict`, an instance on
  // the same database, does not (and runs no health checks, which would record the servers down for both).
  const secretKey = randomBytes(32).toString('hex');
  // With TEST_REDIS_URL both instances count their limits in Redis, under a prefix of this file's own.
  if (TEST_REDIS_URL !== undefined) redis = new RedisFixture(TEST_REDIS_URL, testKeyPrefix());
  const shared = { SECRET_KEY: secretKey, ...(redis === null ? {} : { REDIS_URL: redis.url, REDIS_KEY_PREFIX: redis.prefix }) };
  gateway = await startTestGateway({ env: { ...shared, MCP_ALLOW_PRIVATE_ADDRESSES: 'true' } });
  strict = await startTestGateway({ env: { ...shared, DATABASE_URL: gateway.databaseUrl, MCP_HEALTH_CHECK_INTERVAL_SECONDS: '0' } });
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
  await redis?.cleanUp();
});

describe('price per call', () => {
  it('charges the price exactly, once per call, with a usage row that keeps no arguments', async () => {
    const payer = await seedAccount(gateway, { balanceUsd: 1 });
    const client = await connect(payer.key);
    const callStarted = performance.now();
    const sum = await client.callTool({ name: 'paid__add', arguments: { a: 20, b: 22 } }) as CallToolResult;
    const callMs = performance.now() - callStarted;
    expect(text(sum)).toBe('42');
    const balance = await gateway.admin<{ balance_usd: number }>('GET', `/admin/accounts/${payer.accountId}`);
    await flushWrites(gateway);
    const after = await gateway.admin<{ balance_usd: number }>('GET', `/admin/accounts/${payer.accountId}`);
    expect(after.body.balance_usd ?? balance.body.balance_usd).toBe(0.75);
    const rows = await usageOf(payer.accountId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ protocol: 'mcp', model: 'paid__add', status: 200, error_code: null, cost_usd: 0.25, mcp: { server: 'paid', tool: 'add' } });
    // The row's latency is the gateway's time for the call: measured, and within what the client waited.
    expect(rows[0]?.latency_ms).toBeGreaterThanOrEqual(0);
    expect(rows[0]?.latency_ms).toBeLessThanOrEqual(Math.ceil(callMs));
    expect(rows[0]?.mcp?.bytes_in).toBe(Buffer.byteLength('{"a":20,"b":22}'));
    expect(rows[0]?.mcp?.bytes_out).toBeGreaterThan(0);
    expect(rows[0]?.mcp?.payload).toBeUndefined();
    expect(JSON.stringify(rows)).not.toContain('"a":20');
    await client.close();
  });

  it('keeps a call\'s arguments and result on its usage row only where the operator logs the server\'s payloads', async () => {
    // The same upstream under a second name, logging payloads, open only to the key that names it.
    const logged = await gateway.admin('POST', '/admin/mcp-servers', { name: 'logged', url: upstream.url, log_payloads: true });
    expect(logged.status, JSON.stringify(logged.body)).toBe(201);
    expect(logged.body).toMatchObject({ log_payloads: true });
    const auditor = await seedAccount(gateway, { balanceUsd: 1, key: { allowed_mcp_servers: ['logged'] } });
    const client = await connect(auditor.key);
    expect(text(await client.callTool({ name: 'logged__add', arguments: { a: 2, b: 3 } }) as CallToolResult)).toBe('5');
    await client.close();
    const rows = await usageOf(auditor.accountId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 200, cost_usd: 0, mcp: { server: 'logged', tool: 'add', bytes_in: Buffer.byteLength('{"a":2,"b":3}') } });
    const payload = JSON.parse(rows[0]?.mcp?.payload ?? 'null') as { arguments: unknown; result: CallToolResult };
    expect(payload.arguments).toEqual({ a: 2, b: 3 });
    expect(payload.result.content).toEqual([{ type: 'text', text: '5' }]);
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
    // Windows are aligned to the minute: the calls must not straddle its end, or the last would pass.
    await awayFromWindowEdge(60_000, 15_000);
    for (let call = 0; call < 3; call += 1) expect(text(await client.callTool({ name: 'paid__echo', arguments: { text: 'hi' } }) as CallToolResult)).toBe('paid: hi');
    const refused = await client.callTool({ name: 'paid__echo', arguments: { text: 'hi' } }) as CallToolResult;
    expect(refused.isError).toBe(true);
    const body = JSON.parse(text(refused)) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('rate_limit_exceeded');
    expect(body.error.message).toContain('mcp-calls-per-minute:paid');
    expect(refused._meta?.['unigate/status']).toBe(429);
    await client.close();
  }, 60_000);

  it('a key\'s override replaces the server\'s limit, and a concurrency limit refuses a second call in flight', async () => {
    const limited = await seedAccount(gateway, { balanceUsd: 10 });
    const put = await gateway.admin('PUT', `/admin/keys/${limited.keyId}/mcp-policy`, { limits: { paid: { calls_per_minute: null, concurrency: 1 } } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const client = await connect(limited.key);
    const hanging = client.callTool({ name: 'paid__hang' }, undefined, { timeout: 60_000 }).catch((error: unknown) => error);
    const deadline = Date.now() + 30_000;
    while (!upstream.calls.includes('hang') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(upstream.calls).toContain('hang');
    const refused = await client.callTool({ name: 'paid__echo', arguments: { text: 'x' } }) as CallToolResult;
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain('Too many concurrent calls for this API key on the MCP server');
    await client.close();
    void hanging;
  }, 60_000);

  it('each level counts its own limit over its owner: the key\'s per key, a project\'s over its keys, an account\'s over all its keys', async () => {
    await withinOneMinute(async () => {
      const team = await seedAccount(gateway, { balanceUsd: 10 });
      const agents = await projectOf(team.accountId, 'agents');
      const other = await projectOf(team.accountId, 'other');
      const [first, second, outside] = [await keyIn(team.accountId, agents), await keyIn(team.accountId, agents), await keyIn(team.accountId, other)];
      expect((await gateway.admin('PUT', `/admin/accounts/${team.accountId}/mcp-policy`, { limits: { paid: { calls_per_minute: 4 } } })).status).toBe(200);
      expect((await gateway.admin('PUT', `/admin/projects/${agents}/mcp-policy`, { limits: { paid: { calls_per_minute: 2 } } })).status).toBe(200);
      // A wider limit never lifts the key's: the server's 3 a minute still holds for each key of an account allowed 10.
      const roomy = await seedAccount(gateway, { balanceUsd: 10 });
      expect((await gateway.admin('PUT', `/admin/accounts/${roomy.accountId}/mcp-policy`, { limits: { paid: { calls_per_minute: 10 } } })).status).toBe(200);

      // The project's 2 are shared by its two keys: the first uses them up, the second is refused at once.
      expect(await callsUntilRefused(first, 'project-mcp-calls-per-minute:paid')).toBe(3);
      expect(await callsUntilRefused(second, 'project-mcp-calls-per-minute:paid')).toBe(1);
      // A key of another project is not counted in the first project's limit, but in the account's 4, of which the
      // first project's key used 2 (its refused call took nothing: a refusal releases every window it was counted in).
      expect(await callsUntilRefused(outside, 'account-mcp-calls-per-minute:paid')).toBe(3);
      // The account's key outside any project: the account's 4 are used up by its other keys.
      expect(await callsUntilRefused(team.key, 'account-mcp-calls-per-minute:paid')).toBe(1);
      expect(await callsUntilRefused(roomy.key, 'mcp-calls-per-minute:paid')).toBe(4);
    });
  }, 120_000);

  it('a project\'s and an account\'s concurrency are shared by their keys', async () => {
    const team = await seedAccount(gateway, { balanceUsd: 10 });
    const agents = await projectOf(team.accountId, 'agents');
    const [first, second] = [await keyIn(team.accountId, agents), await keyIn(team.accountId, agents)];
    expect((await gateway.admin('PUT', `/admin/projects/${agents}/mcp-policy`, { limits: { paid: { concurrency: 1 } } })).status).toBe(200);
    const solo = await seedAccount(gateway, { balanceUsd: 10 });
    const soloSecond = await gateway.admin<{ key: string }>('POST', `/admin/accounts/${solo.accountId}/keys`, {});
    expect(soloSecond.status, JSON.stringify(soloSecond.body)).toBe(201);
    expect((await gateway.admin('PUT', `/admin/accounts/${solo.accountId}/mcp-policy`, { limits: { paid: { concurrency: 1 } } })).status).toBe(200);

    const clients: Client[] = [];
    try {
      const hangWhile = async (key: string): Promise<void> => {
        const client = await connect(key);
        clients.push(client);
        const before = upstream.calls.filter((call) => call === 'hang').length;
        void client.callTool({ name: 'paid__hang' }, undefined, { timeout: 60_000 }).catch((error: unknown) => error);
        const deadline = Date.now() + 30_000;
        while (upstream.calls.filter((call) => call === 'hang').length === before && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
        expect(upstream.calls.filter((call) => call === 'hang').length).toBeGreaterThan(before);
      };
      const callAs = async (key: string): Promise<CallToolResult> => {
        const client = await connect(key);
        clients.push(client);
        return await client.callTool({ name: 'paid__echo', arguments: { text: 'x' } }) as CallToolResult;
      };

      await hangWhile(first);
      const refused = await callAs(second);
      expect(refused.isError).toBe(true);
      expect(text(refused)).toContain('Too many concurrent calls for this API key\'s project on the MCP server \'paid\' (limit 1)');
      expect(refused._meta?.['unigate/status']).toBe(429);
      // The account's key outside the project holds none of its slots.
      expect(text(await callAs(team.key))).toBe('paid: x');

      await hangWhile(solo.key);
      const refusedByAccount = await callAs(soloSecond.body.key);
      expect(refusedByAccount.isError).toBe(true);
      expect(text(refusedByAccount)).toContain('Too many concurrent calls for this API key\'s account on the MCP server \'paid\' (limit 1)');
    } finally {
      await Promise.all(clients.map((client) => client.close()));
    }
  }, 120_000);
});

/** A new project of the account, by id. */
async function projectOf(accountId: string, name: string): Promise<string> {
  const project = await gateway.admin<{ id: string }>('POST', `/admin/accounts/${accountId}/projects`, { name });
  expect(project.status, JSON.stringify(project.body)).toBe(201);
  return project.body.id;
}

/** A new key of the account in `projectId`, as its secret. */
async function keyIn(accountId: string, projectId: string): Promise<string> {
  const key = await gateway.admin<{ key: string }>('POST', `/admin/accounts/${accountId}/keys`, { project_id: projectId });
  expect(key.status, JSON.stringify(key.body)).toBe(201);
  return key.body.key;
}

/** The number of the first call refused as past the calls-per-minute limit named `dimension` (at most 6 tried). */
async function callsUntilRefused(key: string, dimension: string): Promise<number> {
  const client = await connect(key);
  try {
    for (let call = 1; call <= 6; call += 1) {
      const answer = await client.callTool({ name: 'paid__echo', arguments: { text: 'hi' } }) as CallToolResult;
      if (answer.isError === true) {
        const body = JSON.parse(text(answer)) as { error: { code: string; message: string } };
        expect(body.error.code).toBe('rate_limit_exceeded');
        expect(body.error.message).toContain(`(${dimension})`);
        expect(answer._meta?.['unigate/status']).toBe(429);
        return call;
      }
    }
    return Infinity;
  } finally {
    await client.close();
  }
}

/**
 * Runs a scenario that counts calls in minute windows inside one minute: windows are aligned to the minute, so it
 * starts away from a minute's end, and one that a loaded machine made straddle it runs once more, from scratch.
 */
async function withinOneMinute(scenario: () => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    await awayFromWindowEdge(60_000, 30_000);
    const minute = Math.floor(Date.now() / 60_000);
    try {
      await scenario();
      return;
    } catch (error) {
      if (attempt >= 2 || Math.floor(Date.now() / 60_000) === minute) throw error;
    }
  }
}

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

  it('a project allowlist narrows its keys\' servers, never widens its account\'s, and leaves the account\'s other keys alone', async () => {
    const team = await seedAccount(gateway, { balanceUsd: 10 });
    const project = await gateway.admin<{ id: string }>('POST', `/admin/accounts/${team.accountId}/projects`, { name: 'fenced' });
    expect(project.status, JSON.stringify(project.body)).toBe(201);
    const inProject = await gateway.admin<{ key: string }>('POST', `/admin/accounts/${team.accountId}/keys`, { project_id: project.body.id });
    expect(inProject.status, JSON.stringify(inProject.body)).toBe(201);
    const toolsOf = async (key: string): Promise<string[]> => {
      const client = await connect(key);
      try {
        return (await client.listTools()).tools.map((tool) => tool.name);
      } finally {
        await client.close();
      }
    };
    expect((await gateway.admin('PUT', `/admin/projects/${project.body.id}/mcp-policy`, { allowed_servers: [] })).status).toBe(200);
    expect(await toolsOf(inProject.body.key)).toEqual([]);
    const refused = await connect(inProject.body.key);
    expect(((await refused.callTool({ name: 'paid__echo', arguments: { text: 'x' } }).catch((caught: unknown) => caught)) as McpError).code).toBe(-32602);
    await refused.close();
    expect(await toolsOf(team.key)).toContain('paid__echo');
    // The account closes paid: a project naming it gets nothing back.
    expect((await gateway.admin('PUT', `/admin/accounts/${team.accountId}/mcp-policy`, { allowed_servers: [] })).status).toBe(200);
    expect((await gateway.admin('PUT', `/admin/projects/${project.body.id}/mcp-policy`, { allowed_servers: ['paid'] })).status).toBe(200);
    expect(await toolsOf(inProject.body.key)).toEqual([]);
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

  it('are refused at every connection too: a server registered where they were allowed is never reached from an instance that refuses them', async () => {
    // The same private server by address and by a name that resolves to it: the name is checked as it resolves.
    const byName = await gateway.admin('POST', '/admin/mcp-servers', { name: 'by-name', url: upstream.url.replace('127.0.0.1', 'localhost') });
    expect(byName.status, JSON.stringify(byName.body)).toBe(201);
    const caller = await seedAccount(gateway, { balanceUsd: 10, key: { allowed_mcp_servers: ['paid', 'by-name'] } });
    const requestsBefore = upstream.requests;
    const client = await connect(caller.key, strict);
    expect((await client.listTools()).tools).toEqual([]);
    for (const [name, server] of [['paid__echo', 'paid'], ['by-name__echo', 'by-name']] as const) {
      const error = await client.callTool({ name, arguments: { text: 'x' } }).catch((caught: unknown) => caught);
      expect(error, name).toBeInstanceOf(McpError);
      expect((error as McpError).code).toBe(-32603);
      expect((error as McpError).message).toContain(`MCP server '${server}'`);
    }
    await client.close();
    expect(upstream.requests).toBe(requestsBefore);
    // Never reached, never charged (the rows are the refusing instance's to write).
    await flushWrites(strict);
    const rows = await usageOf(caller.accountId);
    expect(rows).toHaveLength(2);
    expect(rows.every((row) => row.status === 502 && row.error_code === 'upstream_error' && row.cost_usd === 0)).toBe(true);
    expect((await gateway.admin<{ balance_usd: number }>('GET', `/admin/accounts/${caller.accountId}`)).body.balance_usd).toBe(10);
  });
});
