/** Regression tests for bugs the end-to-end suite found; each fails again if its bug comes back. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, freePort, killAll, startCommand, waitForHttp, type RunningCommand } from './cli-process.js';

let directory: string;
let api: string;
let server: RunningCommand;

beforeAll(async () => {
  assertBuilt();
  directory = await mkdtemp(path.join(tmpdir(), 'unigate-cli-bugs-'));
  const port = await freePort();
  const consolePort = await freePort();
  api = `http://127.0.0.1:${port}`;
  server = startCommand(['serve'], directory, cleanEnv({ PORT: String(port), CONSOLE_PORT: String(consolePort) }));
  await waitForHttp(`${api}/api/status`, server);
});

afterAll(async () => {
  killAll();
  await rm(directory, { recursive: true, force: true });
});

it('a malformed percent-escape in a path parameter is answered with an error object and does not kill the process', async () => {
  for (const route of ['/v1/models/%E0%A4%A', '/admin/channels/%ZZ']) {
    const response = await fetch(api + route, { signal: AbortSignal.timeout(3000) });
    expect([400, 401, 404]).toContain(response.status);
    const body = (await response.json()) as { error?: { message?: unknown; type?: unknown; code?: unknown } };
    expect(typeof body.error?.message).toBe('string');
  }
  const status = await fetch(`${api}/api/status`, { signal: AbortSignal.timeout(3000) });
  expect(status.status).toBe(200);
  expect(server.hasExited()).toBe(false);
});
