/**
 * WORKERS with the real process: `WORKERS=2 unigate serve` starts two workers sharing the
 * listeners, serves requests, and SIGTERM to the primary stops all of them. The directory's ./gateway.yaml (picked
 * up without GATEWAY_CONFIG) declares a simulator channel so every worker can route from its first request.
 */
import { execFileSync } from 'node:child_process';
import { writeFile, mkdtemp, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  assertBuilt, cleanEnv, freePort, isAlive, killAll, printedAdminTokens, startCommand, waitForHttp, waitUntil, withTimeout, type RunningCommand,
} from './cli-process.js';

let directory: string;
let api: string;
let server: RunningCommand;

/** One request on its own connection (no keep-alive), so the cluster can hand each to either worker. */
function freshConnection(method: string, route: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const outgoing = httpRequest(`${api}${route}`, {
      method,
      agent: false,
      headers: { ...headers, connection: 'close', ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) }) },
      timeout: 10_000,
    }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        text += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
      response.on('error', reject);
    });
    outgoing.on('timeout', () => outgoing.destroy(new Error('request timed out')));
    outgoing.on('error', reject);
    outgoing.end(payload);
  });
}

function childPids(pid: number): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .map((line) => Number(line.trim()))
      .filter((value) => Number.isInteger(value) && value > 0);
  } catch {
    return [];
  }
}

beforeAll(async () => {
  assertBuilt();
  directory = await mkdtemp(path.join(tmpdir(), 'unigate-cli-workers-'));
  await writeFile(path.join(directory, 'gateway.yaml'), [
    'models:',
    '  - id: workers-sim',
    '    pricing: { input_per_mtok: 1, output_per_mtok: 2 }',
    'channels:',
    '  - name: workers-simulator',
    '    type: simulator',
    '    models: [workers-sim]',
    '',
  ].join('\n'));
  const apiPort = await freePort();
  let consolePort = await freePort();
  while (consolePort === apiPort) consolePort = await freePort();
  api = `http://127.0.0.1:${apiPort}`;
  server = startCommand(['serve'], directory, cleanEnv({ PORT: String(apiPort), CONSOLE_PORT: String(consolePort), WORKERS: '2' }));
  await waitForHttp(`${api}/api/status`, server, 20_000);
});

afterAll(async () => {
  killAll();
  if (directory !== undefined) await rm(directory, { recursive: true, force: true });
});

describe('WORKERS=2', () => {
  let workerPids: number[] = [];
  let clientKeyForLaterTests = '';
  let keyIdForLaterTests = '';
  let adminForLaterTests: Record<string, string> = {};

  it('starts two worker processes and prints the admin token once', async () => {
    await waitUntil(() => childPids(server.pid).length >= 2, 10_000, 'two worker processes');
    workerPids = childPids(server.pid);
    expect(workerPids).toHaveLength(2);
    await waitUntil(() => (server.stdout().match(/gateway listening/g) ?? []).length >= 2 || printedAdminTokens(server.stdout()).length > 0, 5000, 'startup output');
    expect(printedAdminTokens(server.stdout())).toHaveLength(1);
    // Without REDIS_URL the primary warns once that limits are counted per worker.
    expect(server.stdout().match(/each worker counts rate limits/g)).toHaveLength(1);
  });

  it('serves many requests on fresh connections: status, admin and chat calls all succeed', async () => {
    const token = printedAdminTokens(server.stdout())[0] as string;
    const admin = { authorization: `Bearer ${token}` };

    const statuses = await Promise.all(Array.from({ length: 12 }, () => freshConnection('GET', '/api/status', {})));
    expect(statuses.map((answer) => answer.status)).toEqual(Array(12).fill(200));
    const admins = await Promise.all(Array.from({ length: 8 }, () => freshConnection('GET', '/admin/channels', admin)));
    for (const answer of admins) {
      expect(answer.status, answer.text).toBe(200);
      expect(answer.text).toContain('workers-simulator');
    }

    const account = await freshConnection('POST', '/admin/accounts', admin, { email: 'workers@example.com' });
    expect(account.status, account.text).toBe(201);
    const accountId = (JSON.parse(account.text) as { id: string }).id;
    expect((await freshConnection('POST', `/admin/accounts/${accountId}/credits`, admin, { amount_usd: 10 })).status).toBe(200);
    const key = await freshConnection('POST', `/admin/accounts/${accountId}/keys`, admin, {});
    expect(key.status).toBe(201);
    const clientKey = (JSON.parse(key.text) as { key: string }).key;

    const chatRound = (size: number) => Promise.all(Array.from({ length: size }, (_, index) => freshConnection('POST', '/v1/chat/completions', { authorization: `Bearer ${clientKey}` }, {
      model: 'workers-sim', messages: [{ role: 'user', content: `question ${index}` }],
    })));
    // Storage decides every reservation the worker's lease cannot cover, so the top-up counts on both at once.
    const chats = await chatRound(12);
    for (const answer of chats) {
      expect(answer.status, answer.text).toBe(200);
      expect(JSON.parse(answer.text)).toMatchObject({ object: 'chat.completion' });
    }
    clientKeyForLaterTests = clientKey;
    keyIdForLaterTests = (JSON.parse(key.text) as { id: string }).id;
    adminForLaterTests = admin;
  });

  it('an admin change made through one worker is in effect on every worker when its answer arrives', async () => {
    const admin = adminForLaterTests;
    const bearer = { authorization: `Bearer ${clientKeyForLaterTests}` };
    const chatOn = (model: string, size: number) => Promise.all(Array.from({ length: size }, () => freshConnection('POST', '/v1/chat/completions', bearer, {
      model, messages: [{ role: 'user', content: 'hello' }],
    })));
    // A new model and channel: the periodic re-read (5 s) would be too late for requests sent right after.
    expect((await freshConnection('POST', '/admin/models', admin, { id: 'workers-late', pricing: { input_per_mtok: 1, output_per_mtok: 2 } })).status).toBe(201);
    const channel = await freshConnection('POST', '/admin/channels', admin, { name: 'workers-late-sim', type: 'simulator', models: ['workers-late'] });
    expect(channel.status, channel.text).toBe(201);
    for (const answer of await chatOn('workers-late', 12)) expect(answer.status, answer.text).toBe(200);

    // Disabling the channel takes the model off every worker at once.
    const channelId = (JSON.parse(channel.text) as { id: string }).id;
    expect((await freshConnection('PATCH', `/admin/channels/${channelId}`, admin, { enabled: false })).status).toBe(200);
    for (const answer of await chatOn('workers-late', 12)) expect(answer.status, answer.text).toBe(503);

    // A disabled key is refused by every worker at once (their key caches would otherwise keep it for a second).
    expect((await freshConnection('PATCH', `/admin/keys/${keyIdForLaterTests}`, admin, { status: 'disabled' })).status).toBe(200);
    for (const answer of await chatOn('workers-sim', 12)) expect([answer.status, (JSON.parse(answer.text) as { error: { code: string } }).error.code]).toEqual([403, 'key_disabled']);
  });

  it('SIGTERM to the primary stops every process, exit code 0', async () => {
    expect(workerPids.length).toBe(2);
    server.child.kill('SIGTERM');
    const result = await withTimeout(server.exited, 10_000, 'primary exit after SIGTERM');
    expect(result.code, server.stderr()).toBe(0);
    await waitUntil(() => workerPids.every((pid) => !isAlive(pid)), 5000, 'workers gone');
    await expect(fetch(`${api}/api/status`, { signal: AbortSignal.timeout(2000) })).rejects.toThrow();
  });
});
