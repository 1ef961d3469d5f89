/**
 * The test harness's wait for a started gateway: a port found free can be bound first by another test file's
 * server, which then answers 200 in the gateway's place. The wait must not take that answer for the gateway's.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, freePort, killAll, listensOn, startCommand, waitForHttp } from './cli-process.js';

let directory: string;
let squatter: Server;
let port: number;

beforeAll(async () => {
  assertBuilt();
  directory = await mkdtemp(path.join(tmpdir(), 'unigate-port-taken-'));
  squatter = createServer((_request, response) => response.end('{"status":"ok"}'));
  await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
  const address = squatter.address();
  port = typeof address === 'object' && address !== null ? address.port : 0;
});

afterAll(async () => {
  killAll();
  await new Promise((resolve) => squatter.close(resolve));
  await rm(directory, { recursive: true, force: true });
});

describe('waiting for a started gateway', () => {
  it('does not take another process\'s answer on the port for the gateway\'s, and reports the gateway\'s EADDRINUSE', async () => {
    const gateway = startCommand(['serve'], directory, cleanEnv({ HOST: '127.0.0.1', PORT: String(port), CONSOLE_PORT: String(await freePort()), DATA_DIR: path.join(directory, 'data'), LOG_LEVEL: 'warn' }));
    expect(await listensOn(gateway, port)).toBe(false);
    await expect(waitForHttp(`http://127.0.0.1:${port}/api/status`, gateway, 30_000)).rejects.toThrow(/EADDRINUSE/);
  }, 40_000);

  it('takes the gateway\'s own answer', async () => {
    const own = await freePort();
    const gateway = startCommand(['serve'], directory, cleanEnv({ HOST: '127.0.0.1', PORT: String(own), CONSOLE_PORT: String(await freePort()), DATA_DIR: path.join(directory, 'own'), LOG_LEVEL: 'warn' }));
    await waitForHttp(`http://127.0.0.1:${own}/api/status`, gateway, 30_000);
    expect(await listensOn(gateway, own)).toBe(true);
    expect(await listensOn(gateway, port)).toBe(false);
  }, 40_000);
});
