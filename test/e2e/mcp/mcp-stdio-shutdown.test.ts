/**
 * A local stdio MCP server still starting when the gateway stops is ended with it, at once: the fixture (the SDK's
 * McpServer on its StdioServerTransport) takes minutes to answer `initialize`, a client's listing has the gateway start
 * it, and the gateway is closed while the start is under way. The child's process must be gone once close() settles,
 * and close() must not wait for the start's own timeout (30 s; the test's limit is well under it). Over real HTTP on
 * the suite's database (SQLite, or PostgreSQL with TEST_DATABASE_URL).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { seedAccount, startTestGateway, type TestGateway } from '../../support/gateway-harness.js';

const FIXTURE = fileURLToPath(new URL('../../support/fixtures/stdio-mcp-server.mjs', import.meta.url));

let gateway: TestGateway | undefined;
let directory: string | undefined;

afterAll(async () => {
  await gateway?.close();
  if (directory !== undefined) await rm(directory, { recursive: true, force: true });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls until `probe` gives a value (bounded). */
async function until<T>(probe: () => Promise<T | null>, attempts = 150): Promise<T> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    const value = await probe().catch(() => null);
    if (value !== null) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('condition never held');
}

describe('a local stdio MCP server still starting when the gateway stops', () => {
  it('is ended with the gateway, without waiting for its start to time out', async () => {
    directory = await mkdtemp(path.join(tmpdir(), 'unigate-stdio-'));
    const pidFile = path.join(directory, 'slow.pid');
    gateway = await startTestGateway({ env: { MCP_ALLOW_STDIO: 'true', MCP_HEALTH_CHECK_INTERVAL_SECONDS: '0' } });
    const created = await gateway.admin<{ id: string }>('POST', '/admin/mcp-servers', {
      name: 'slow', transport: 'stdio', command: process.execPath, args: [FIXTURE], public: true,
      env: { FIXTURE_PID_FILE: pidFile, FIXTURE_START_DELAY_MS: '600000' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const caller = await seedAccount(gateway, { balanceUsd: 5 });

    // A client's listing has the gateway start the server; it is left waiting on the start.
    const client = new Client({ name: 'mcp-stdio-shutdown-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp/slow`), { requestInit: { headers: { authorization: `Bearer ${caller.key}` } } }));
    const listing = client.listTools().then((listed) => listed.tools.map((tool) => tool.name), () => []);
    const pid = await until(async () => {
      const written = Number(await readFile(pidFile, 'utf8'));
      return written > 0 ? written : null;
    });
    expect(alive(pid)).toBe(true);
    expect(gateway.gateway.services.mcpOutbound.stdioProcesses?.loaded()?.pidOf(created.body.id)).toBe(pid);

    await gateway.close();
    expect(alive(pid)).toBe(false);
    // The listing settled without the server's tools (it never started).
    expect(await listing).toEqual([]);
    await client.close().catch(() => {});
  }, 20_000);
});
