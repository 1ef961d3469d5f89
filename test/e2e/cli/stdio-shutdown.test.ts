/**
 * The real process (`node bin/unigate.js serve`, MCP_ALLOW_STDIO on) with a local stdio MCP server: the program the
 * gateway starts for it is ended when the gateway is stopped with SIGTERM, so no server outlives its gateway.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, freePort, killAll, REPO_ROOT, startCommand, waitForHttp, waitUntil, withTimeout, type RunningCommand } from './cli-process.js';

const FIXTURE = path.join(REPO_ROOT, 'test', 'support', 'fixtures', 'stdio-mcp-server.mjs');
const ADMIN_TOKEN = 'adm_stdio_shutdown_test_token_0123456789';

let directory: string;
let server: RunningCommand;
let api: string;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function admin(method: string, route: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(api + route, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(20_000),
  });
  return { status: response.status, body: await response.json() as Record<string, unknown> };
}

beforeAll(async () => {
  assertBuilt();
  directory = await mkdtemp(path.join(tmpdir(), 'unigate-stdio-'));
  const apiPort = await freePort();
  let consolePort = await freePort();
  while (consolePort === apiPort) consolePort = await freePort();
  api = `http://127.0.0.1:${apiPort}`;
  server = startCommand(['serve'], directory, cleanEnv({
    PORT: String(apiPort), CONSOLE_PORT: String(consolePort), ADMIN_TOKEN, MCP_ALLOW_STDIO: 'true', MCP_HEALTH_CHECK_INTERVAL_SECONDS: '0',
  }));
  await waitForHttp(`${api}/api/status`, server, 20_000);
});

afterAll(async () => {
  killAll();
  await rm(directory, { recursive: true, force: true });
});

describe('a stdio MCP server of the real process', () => {
  it('is started on use and ended when the gateway gets SIGTERM', async () => {
    const pidFile = path.join(directory, 'fixture.pid');
    const created = await admin('POST', '/admin/mcp-servers', { name: 'local', transport: 'stdio', command: process.execPath, args: [FIXTURE], env: { FIXTURE_PID_FILE: pidFile } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const listed = await admin('GET', `/admin/mcp-servers/${String(created.body.id)}/tools`);
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    await waitUntil(() => existsSync(pidFile), 5000, 'the fixture wrote its pid');
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(alive(pid)).toBe(true);
    server.child.kill('SIGTERM');
    const exited = await withTimeout(server.exited, 15_000, 'exit after SIGTERM');
    expect(exited.code, server.stderr()).toBe(0);
    await waitUntil(() => !alive(pid), 5000, 'the fixture ended');
  });
});
