/**
 * MCP servers health-checked in the background, over real HTTP on the suite's database (SQLite, or PostgreSQL with
 * TEST_DATABASE_URL): a real SDK server is listed as healthy with its tools, latency and tool count in
 * /admin/mcp-servers; once it is stopped the next check records it unhealthy with an error that carries no header
 * value; GET /admin/mcp-servers/:id/tools lists the tools live, answers 502 for a server that is down and 404 for
 * an unknown id.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { startMockMcpServer, type MockMcpServer } from '../../support/mock-mcp-server.js';

interface Health { status: string; error: string | null; checked_at: string; latency_ms: number | null; tool_count: number; tools: Array<{ name: string; read_only: boolean }> }
interface ServerJson { id: string; name: string; health: Health | null }

let gateway: TestGateway;
let upstream: MockMcpServer;
let serverId: string;
const SECRET = 'Bearer health-secret-value-1234';

async function healthOf(): Promise<Health | null> {
  const listed = await gateway.admin<{ data: ServerJson[] }>('GET', '/admin/mcp-servers');
  return listed.body.data.find((server) => server.id === serverId)?.health ?? null;
}

async function waitFor(predicate: (health: Health | null) => boolean, timeoutMs = 15_000): Promise<Health | null> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const health = await healthOf();
    if (predicate(health)) return health;
    if (Date.now() > deadline) throw new Error(`health never matched: ${JSON.stringify(health)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

beforeAll(async () => {
  upstream = await startMockMcpServer('checked', 'streamable-http');
  gateway = await startTestGateway({ env: { MCP_ALLOW_PRIVATE_ADDRESSES: 'true', MCP_HEALTH_CHECK_INTERVAL_SECONDS: '1', MCP_HEALTH_CHECK_TIMEOUT_SECONDS: '2' } });
  const created = await gateway.admin<ServerJson>('POST', '/admin/mcp-servers', { name: 'checked', url: upstream.url, headers: { Authorization: SECRET } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  expect(created.body.health).toBeNull();
  serverId = created.body.id;
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

describe('MCP health checks', () => {
  it('records a running server healthy with its tools, latency and tool count', async () => {
    const health = await waitFor((value) => value?.status === 'healthy');
    expect(health?.error).toBeNull();
    expect(health?.tool_count).toBeGreaterThan(0);
    expect(health?.tools.length).toBe(health?.tool_count);
    expect(health?.tools.map((tool) => tool.name)).toContain('add');
    expect(typeof health?.latency_ms).toBe('number');
    expect(Date.parse(health?.checked_at ?? '')).not.toBeNaN();
  });

  it('lists the tools live, and refuses an unknown id', async () => {
    const live = await gateway.admin<{ object: string; data: Array<{ name: string }>; latency_ms: number }>('GET', `/admin/mcp-servers/${serverId}/tools`);
    expect(live.status, JSON.stringify(live.body)).toBe(200);
    expect(live.body.object).toBe('list');
    expect(live.body.data.map((tool) => tool.name)).toContain('add');
    const unknown = await gateway.admin('GET', '/admin/mcp-servers/mcp_nope/tools');
    expect(unknown.status).toBe(404);
  });

  it('turns unhealthy with an error once the server stops, without its header values', async () => {
    await upstream.close();
    const health = await waitFor((value) => value?.status === 'unhealthy');
    expect(health?.error).toEqual(expect.any(String));
    expect(health?.error?.length).toBeGreaterThan(0);
    expect(health?.error).not.toContain('health-secret-value');
    expect(health?.tool_count).toBe(0);
    expect(health?.latency_ms).toBeNull();
    const live = await gateway.admin<{ error: { type: string; message: string } }>('GET', `/admin/mcp-servers/${serverId}/tools`);
    expect(live.status).toBe(502);
    expect(live.body.error.message).toContain('checked');
    expect(JSON.stringify(live.body)).not.toContain('health-secret-value');
  });
});
