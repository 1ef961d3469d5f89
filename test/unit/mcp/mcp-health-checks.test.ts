/**
 * The MCP health checker's bounds, against a real listener on 127.0.0.1 that accepts connections and never answers:
 * a check gives up at its timeout as unhealthy, `stop` ends a pass at once without recording anything, and a
 * failure's text never carries a header value.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkError, McpHealthChecks } from '../../../src/mcp/mcp-health-checks.js';
import { silentLogger } from '../../../src/shared/logger.js';
import type { McpServer, McpServerHealth, McpServerRepository } from '../../../src/storage/repositories/mcp-server-repository.js';

let silent: Server;
let url: string;

beforeAll(async () => {
  silent = createServer(() => { /* never answers */ });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const address = silent.address();
  url = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}/mcp`;
});

afterAll(async () => {
  silent.closeAllConnections();
  await new Promise((resolve) => silent.close(resolve));
});

function repository(recorded: Array<{ id: string; health: McpServerHealth }>): McpServerRepository {
  const server: McpServer = {
    id: 'mcp_1', name: 'silent', url, transport: 'streamable-http', headerNames: ['Authorization'], public: true, enabled: true,
    createdAt: 0, updatedAt: 0, callsPerMinute: null, concurrency: null, pricePerCallNano: null, logPayloads: false,
    toolRules: { default: 'allowed', tools: {} }, health: null, oauth: null, stdio: null, ownerAccountId: null,
  };
  return {
    list: () => Promise.resolve([server, { ...server, id: 'mcp_2', name: 'off', enabled: false }]),
    headersOf: () => Promise.resolve({ Authorization: 'Bearer unit-secret-5678' }),
    recordHealth: (id, health) => {
      recorded.push({ id, health });
      return Promise.resolve(true);
    },
  } as Partial<McpServerRepository> as McpServerRepository;
}

const dependencies = (recorded: Array<{ id: string; health: McpServerHealth }>) => ({
  servers: repository(recorded), clock: { now: () => Date.now() }, logger: silentLogger, outbound: { allowPrivateAddresses: true },
});

describe('MCP health checks', () => {
  it('records a server that never answers unhealthy at the timeout, and checks only enabled servers', async () => {
    const recorded: Array<{ id: string; health: McpServerHealth }> = [];
    const checks = new McpHealthChecks(dependencies(recorded), { intervalMs: 60_000, timeoutMs: 500, concurrency: 4 });
    const started = Date.now();
    expect(await checks.runOnce()).toBe(1);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({ id: 'mcp_1', health: { status: 'unhealthy', latencyMs: null, tools: [] } });
    expect(recorded[0]?.health.error).toMatch(/no answer within|timed out/i);
    await checks.stop();
  });

  it('stop ends a running pass at once and records nothing', async () => {
    const recorded: Array<{ id: string; health: McpServerHealth }> = [];
    const checks = new McpHealthChecks(dependencies(recorded), { intervalMs: 60_000, timeoutMs: 30_000, concurrency: 4 });
    const pass = checks.runOnce();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const stopping = Date.now();
    await checks.stop();
    await pass;
    expect(Date.now() - stopping).toBeLessThan(2000);
    expect(recorded).toEqual([]);
  });

  it('masks header values in an error and keeps it single-line and bounded', () => {
    const text = checkError(new Error(`401 from server\nechoed Bearer unit-secret-5678 ${'x'.repeat(400)}`), ['Bearer unit-secret-5678']);
    expect(text).not.toContain('unit-secret');
    expect(text).toContain('[redacted]');
    expect(text).not.toContain('\n');
    expect(text.length).toBeLessThanOrEqual(300);
  });
});
