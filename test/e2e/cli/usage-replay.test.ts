/**
 * `unigate usage replay` run as the real command against a running gateway's database, for the data directory of an
 * instance that is not running: the usage-log batches kept in `<DATA_DIR>/usage-dead-letter` become usage rows
 * (visible through GET /admin/usage), their files are removed, and a second run finds nothing. A running gateway
 * does the same with its own folder by itself, no command run.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { deadLetterDirectory, writeDeadLetter } from '../../../src/usage-log/dead-letter-file.js';
import type { UsageLogRow } from '../../../src/domain/usage-records.js';
import { call } from '../admin/helpers.js';
import { assertBuilt, cleanEnv, runCommand } from './cli-process.js';

let gateway: TestGateway;
/** The data directory of an instance that is not running (the running gateway writes its own folder itself). */
let stoppedInstance: string;

beforeAll(async () => {
  assertBuilt();
  gateway = await startTestGateway();
  stoppedInstance = await mkdtemp(path.join(tmpdir(), 'unigate-stopped-instance-'));
});

afterAll(async () => {
  await gateway?.close();
  await rm(stoppedInstance, { recursive: true, force: true });
});

function row(requestId: string): UsageLogRow {
  return {
    requestId, accountId: null, keyId: null, model: 'replayed-model', channelId: null, protocol: 'openai', endpoint: 'chat.completions',
    stream: false, status: 200, errorCode: null, promptTokens: 3, completionTokens: 2, cachedTokens: 0, reasoningTokens: 0, totalTokens: 5,
    costNano: 1234n, latencyMs: 7, ttfbMs: null, attempts: 1, createdAt: Date.now(),
  };
}

it('writes the dead-letter batches to the usage log and removes their files; safe to repeat', async () => {
  const directory = deadLetterDirectory(stoppedInstance);
  const requestId = `req_replay_${Date.now()}`;
  await writeDeadLetter(directory, [row(requestId), row(`${requestId}_2`)], Date.now());
  const unigate = () => runCommand(['usage', 'replay'], stoppedInstance, cleanEnv({ DATABASE_URL: gateway.databaseUrl, DATA_DIR: stoppedInstance }));

  const first = await unigate();
  expect(first.code, first.stderr).toBe(0);
  expect(JSON.parse(first.stdout)).toMatchObject({ replayed: [{ rows: 2 }], failed: [] });
  expect(await readdir(directory)).toEqual([]);
  const rows = await call<{ data: Array<{ request_id: string }> }>(gateway.url, 'GET', '/admin/usage?model=replayed-model&limit=10', { token: gateway.adminToken });
  expect(rows.body.data.map((entry) => entry.request_id).sort()).toEqual([requestId, `${requestId}_2`]);

  const second = await unigate();
  expect(second.code).toBe(0);
  expect(JSON.parse(second.stdout)).toEqual({ replayed: [], failed: [] });
});

it('a running gateway writes the batches kept in its own folder by itself, and removes their files', async () => {
  const directory = deadLetterDirectory(gateway.dataDirectory);
  const requestId = `req_kept_${Date.now()}`;
  await writeDeadLetter(directory, [row(requestId)], Date.now());
  const started = Date.now();
  let found: string[] = [];
  while (Date.now() - started < 15_000) {
    const rows = await call<{ data: Array<{ request_id: string }> }>(gateway.url, 'GET', '/admin/usage?model=replayed-model&limit=10', { token: gateway.adminToken });
    found = rows.body.data.map((entry) => entry.request_id).filter((id) => id === requestId);
    if (found.length > 0 && (await readdir(directory)).length === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  expect(found).toEqual([requestId]);
  expect(await readdir(directory)).toEqual([]);
});
