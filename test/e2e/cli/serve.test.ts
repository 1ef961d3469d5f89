/**
 * Install, environment and command line with the real process: `node bin/unigate.js serve` in an empty directory
 * with no configuration, a restart in the same directory, and the `migrate`, `admin-token` and `keys create` commands.
 * The steps build on each other (one operator session), so they run in order.
 */
import { existsSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { createThrowawayPostgresDatabase } from '../../support/postgres-test-database.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  assertBuilt, cleanEnv, freePort, killAll, printedAdminTokens, runCommand, startCommand, waitForHttp, waitUntil, withTimeout, type RunningCommand,
} from './cli-process.js';

interface Answer {
  status: number;
  text: string;
  body: Record<string, unknown>;
}

let directory: string;
let env: Record<string, string>;
let api: string;
let consoleUrl: string;
let apiPort: number;
let consolePort: number;
let server: RunningCommand | null = null;

const OPERATOR_EMAIL = 'Operator@Example.com';
let adminToken = '';
let clientKey = '';

async function request(method: string, route: string, token: string | null, body?: unknown, base = api): Promise<Answer> {
  const response = await fetch(base + route, {
    method,
    headers: { ...(token === null ? {} : { authorization: `Bearer ${token}` }), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // not JSON (the console page)
  }
  return { status: response.status, text, body: parsed };
}

function chat(key: string, model: string): Promise<Answer> {
  return request('POST', '/v1/chat/completions', key, { model, messages: [{ role: 'user', content: 'hello' }] });
}

async function startServe(): Promise<RunningCommand> {
  const handle = startCommand(['serve'], directory, env);
  server = handle;
  await waitForHttp(`${api}/api/status`, handle, 15_000);
  await waitUntil(() => handle.stdout().includes('gateway listening') || /listening/i.test(handle.stdout()), 5000, 'startup log line');
  return handle;
}

async function stopServe(handle: RunningCommand): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }> {
  const started = Date.now();
  handle.child.kill('SIGTERM');
  const result = await withTimeout(handle.exited, 8000, 'exit after SIGTERM');
  server = null;
  return { ...result, ms: Date.now() - started };
}

beforeAll(async () => {
  assertBuilt();
  directory = await mkdtemp(path.join(tmpdir(), 'unigate-cli-'));
  apiPort = await freePort();
  consolePort = await freePort();
  while (consolePort === apiPort) consolePort = await freePort();
  api = `http://127.0.0.1:${apiPort}`;
  consoleUrl = `http://127.0.0.1:${consolePort}`;
  env = cleanEnv({ PORT: String(apiPort), CONSOLE_PORT: String(consolePort) });
});

afterAll(async () => {
  killAll();
  if (directory !== undefined) await rm(directory, { recursive: true, force: true });
});

describe('unigate serve on a fresh directory, no configuration', () => {
  it('comes up, prints a one-time admin token and a log line with the listeners and channels, stores SQLite under ./data', async () => {
    const handle = await startServe();
    const tokens = printedAdminTokens(handle.stdout());
    expect(tokens, handle.stdout()).toHaveLength(1);
    adminToken = tokens[0] as string;

    const line = handle.stdout().split('\n').find((item) => item.includes(`:${apiPort}`) && item.includes(`:${consolePort}`));
    expect(line, handle.stdout()).toBeDefined();
    expect(line).toMatch(/channels/);
    // Where the first operator signs up, and that operators need a second factor.
    expect(line).toContain(`:${consolePort}/operator/setup`);
    expect(line).toMatch(/two-factor/);
    // The log line does not repeat the secret.
    expect(line).not.toContain(adminToken);

    expect(existsSync(path.join(directory, 'data', 'gateway.db'))).toBe(true);
  });

  it('answers GET /api/status and the console root', async () => {
    const status = await request('GET', '/api/status', null);
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ storage: { ok: true } });
    const page = await fetch(`${consoleUrl}/`, { signal: AbortSignal.timeout(5000) });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type') ?? '').toMatch(/text\/html/);
    await page.text();
  });

  it('accepts the printed token on /admin/* and refuses anything else', async () => {
    const ok = await request('GET', '/admin/channels', adminToken);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toMatchObject({ data: [] });
    expect((await request('GET', '/admin/channels', null)).status).toBe(401);
    expect((await request('GET', '/admin/channels', `${adminToken}x`)).status).toBe(401);
  });

  it('answers an unknown model with 400 and a model without a channel with 503', async () => {
    const account = await request('POST', '/admin/accounts', adminToken, { email: OPERATOR_EMAIL });
    expect(account.status, account.text).toBe(201);
    const accountId = account.body.id as string;
    expect((await request('POST', `/admin/accounts/${accountId}/credits`, adminToken, { amount_usd: 5 })).status).toBe(200);
    const key = await request('POST', `/admin/accounts/${accountId}/keys`, adminToken, {});
    expect(key.status).toBe(201);
    clientKey = key.body.key as string;

    const unknown = await chat(clientKey, 'no-such-model');
    expect(unknown.status, unknown.text).toBe(400);
    expect(unknown.body).toMatchObject({ error: { type: expect.any(String), code: expect.any(String), message: expect.any(String) } });

    expect((await request('POST', '/admin/models', adminToken, { id: 'cli-unrouted', pricing: { input_per_mtok: 1 } })).status).toBe(201);
    const unrouted = await chat(clientKey, 'cli-unrouted');
    expect(unrouted.status, unrouted.text).toBe(503);
    expect(unrouted.body).toMatchObject({ error: { type: expect.any(String), code: expect.any(String), message: expect.any(String) } });
  });

  it('exits 0 within a few seconds of SIGTERM', async () => {
    const handle = server as RunningCommand;
    const result = await stopServe(handle);
    expect(result.code, handle.stderr()).toBe(0);
    expect(result.ms).toBeLessThan(5000);
    await expect(fetch(`${api}/api/status`, { signal: AbortSignal.timeout(2000) })).rejects.toThrow();
  });
});

describe('restart in the same directory', () => {
  it('prints no new token; the old token, the data and the key still work', async () => {
    const handle = await startServe();
    expect(printedAdminTokens(handle.stdout())).toEqual([]);
    expect(handle.stdout()).not.toMatch(/admin token/i);
    expect((await request('GET', '/admin/channels', adminToken)).status).toBe(200);
    const accounts = await request('GET', '/admin/accounts', adminToken);
    expect(JSON.stringify(accounts.body)).toContain(OPERATOR_EMAIL.toLowerCase());
    // Authenticated (not 401): the key survived; the model still has no channel.
    expect((await chat(clientKey, 'cli-unrouted')).status).toBe(503);
  });

  it('keys create --account <email> prints a key that works', async () => {
    expect((await request('POST', '/admin/models', adminToken, { id: 'cli-sim', pricing: { input_per_mtok: 1, output_per_mtok: 1 } })).status).toBe(201);
    expect((await request('POST', '/admin/channels', adminToken, { name: 'cli-simulator', type: 'simulator', models: ['cli-sim'] })).status).toBe(201);

    const result = await runCommand(['keys', 'create', '--account', OPERATOR_EMAIL, '--name', 'from the cli'], directory, env);
    expect(result.code, result.stderr).toBe(0);
    const key = /\b(sk-[A-Za-z0-9_-]{20,})/.exec(result.stdout)?.[1];
    expect(key, result.stdout).toBeDefined();
    const answer = await chat(key as string, 'cli-sim');
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body).toMatchObject({ object: 'chat.completion' });

    const brand = await runCommand(['keys', 'create', '--account', OPERATOR_EMAIL.toLowerCase(), '--form', 'brand'], directory, env);
    expect(brand.code, brand.stderr).toBe(0);
    const brandKey = /\b(unigate_sk_live_[A-Za-z0-9_-]{20,})/.exec(brand.stdout)?.[1];
    expect(brandKey, brand.stdout).toBeDefined();
    expect((await chat(brandKey as string, 'cli-sim')).status).toBe(200);
  });

  it('keys create refuses an unknown account and a missing --account with a non-zero exit', async () => {
    const unknown = await runCommand(['keys', 'create', '--account', 'nobody@example.com'], directory, env);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/nobody@example\.com/);
    const missing = await runCommand(['keys', 'create'], directory, env);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/--account/);
  });

  it('admin-token prints a new token; after the next serve start only the new one works', async () => {
    const rotated = await runCommand(['admin-token'], directory, env);
    expect(rotated.code, rotated.stderr).toBe(0);
    const tokens = printedAdminTokens(rotated.stdout);
    expect(tokens, rotated.stdout).toHaveLength(1);
    const newToken = tokens[0] as string;
    expect(newToken).not.toBe(adminToken);

    const stopped = await stopServe(server as RunningCommand);
    expect(stopped.code).toBe(0);
    const handle = await startServe();
    expect(printedAdminTokens(handle.stdout())).toEqual([]);
    const old = await request('GET', '/admin/channels', adminToken);
    expect(old.status).toBe(401);
    expect(old.body).toMatchObject({ error: { type: expect.any(String), code: expect.any(String), message: expect.any(String) } });
    expect((await request('GET', '/admin/channels', newToken)).status).toBe(200);
    adminToken = newToken;
  });

  it('exits 0 on SIGTERM again', async () => {
    const result = await stopServe(server as RunningCommand);
    expect(result.code).toBe(0);
    expect(result.ms).toBeLessThan(5000);
  });
});

describe('other commands', () => {
  it('migrate applies the migrations (fresh directory and an existing database) and exits 0', async () => {
    const fresh = await mkdtemp(path.join(tmpdir(), 'unigate-cli-migrate-'));
    try {
      const first = await runCommand(['migrate'], fresh, env);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toMatch(/migrat/i);
      expect(existsSync(path.join(fresh, 'data', 'gateway.db'))).toBe(true);
      expect(printedAdminTokens(first.stdout)).toEqual([]);
    } finally {
      await rm(fresh, { recursive: true, force: true });
    }
    const again = await runCommand(['migrate'], directory, env);
    expect(again.code, again.stderr).toBe(0);
  });

  it('an unknown command exits non-zero and prints the usage', async () => {
    const result = await runCommand(['frobnicate'], directory, env);
    expect(result.code).not.toBe(0);
    expect(result.stdout + result.stderr).toMatch(/usage/i);
    expect(result.stdout + result.stderr).toMatch(/frobnicate/);
    for (const command of ['serve', 'migrate', 'admin-token', 'keys create']) expect(result.stdout + result.stderr).toContain(command);
  });

  it('serve exits non-zero, naming the cause, when its port is taken (on PostgreSQL, whose pool would keep it alive)', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    const database = await createThrowawayPostgresDatabase();
    try {
      const handle = startCommand(['serve'], directory, { ...env, DATABASE_URL: database.url, PORT: String(port), CONSOLE_PORT: String(await freePort()) });
      const result = await withTimeout(handle.exited, 20_000, 'exit after a failed listen');
      expect(result.code).toBe(1);
      expect(handle.stderr()).toContain('EADDRINUSE');
    } finally {
      await new Promise((resolve) => taken.close(resolve));
      await database.drop();
    }
  }, 30_000);

  it('an unknown keys subcommand exits non-zero', async () => {
    const result = await runCommand(['keys', 'delete'], directory, env);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/usage/i);
  });

  it('help prints the usage and exits 0', async () => {
    const result = await runCommand(['--help'], directory, env);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/usage/i);
  });
});
