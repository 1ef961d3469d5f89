/**
 * Streams in flight on an instance killed with SIGKILL are charged at their last checkpoint, exactly once: by a
 * surviving instance once the dead one is stale (PostgreSQL, two instances), or by the same instance id restarted
 * (the suite's database, one instance). The charge lands in the ledger with a usage row coded `instance_stopped`,
 * the balance is the credit minus the charges, no hold is left and the ledger check passes.
 */
import type { SQLInputValue } from 'node:sqlite';
import { openSqliteConnection } from '../../../src/storage/sqlite-connection.js';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { killAll } from '../cli/cli-process.js';
import { startServeCluster, type ServeCluster, type ServeInstance } from '../serve-cluster.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';

const YAML = [
  'models:',
  '  - { id: slow-stream, pricing: { input_per_mtok: 100, output_per_mtok: 100 } }',
  'channels:',
  // 400 tokens a chunk at a time, 40 ms apart: a stream lasts about 16 s, far longer than the test needs it.
  '  - { name: slow-stream, type: simulator, models: [slow-stream], settings: { output_tokens: 400, chunk_delay_ms: 40 } }',
];
const CREDIT_NANO = 5_000_000_000n;
const STREAMS = 4;

type Row = Record<string, unknown>;

/** Reads the shared database straight (what the instances wrote), SQLite or PostgreSQL. */
async function query(databaseUrl: string, text: string, parameters: unknown[] = []): Promise<Row[]> {
  if (databaseUrl.startsWith('sqlite:')) {
    const database = openSqliteConnection(databaseUrl.slice('sqlite:'.length), { readOnly: true, mustExist: true });
    try {
      return database.prepare(text.replace(/\$\d+/g, '?')).all(...(parameters as SQLInputValue[])) as Row[];
    } finally {
      database.close();
    }
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query(text, parameters)).rows as Row[];
  } finally {
    await client.end();
  }
}

async function waitFor<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number): Promise<T> {
  const started = Date.now();
  let value = await read();
  while (!done(value)) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value, (_key, item: unknown) => (typeof item === 'bigint' ? item.toString() : item))}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    value = await read();
  }
  return value;
}

/** Opens a stream, reads its first `events` events, and keeps reading in the background until the connection dies. */
async function openStream(url: string, key: string): Promise<{ requestId: string; ended: Promise<void> }> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'slow-stream', messages: [{ role: 'user', content: 'tell me a long story' }], stream: true, max_tokens: 400 }),
  });
  expect(response.status).toBe(200);
  const requestId = response.headers.get('x-request-id') ?? '';
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  let events = 0;
  while (events < 5) {
    const { value, done } = await reader.read();
    if (done) break;
    events += new TextDecoder().decode(value).split('\n\n').length - 1;
  }
  const ended = (async () => {
    for (let reads = 0; reads < 100_000; reads += 1) if ((await reader.read()).done) return;
  })().catch(() => undefined);
  return { requestId, ended };
}

async function seedAccount(cluster: ServeCluster): Promise<{ accountId: string; key: string }> {
  const account = await cluster.admin<{ id: string }>('POST', '/admin/accounts', { email: `checkpoints-${Date.now()}@example.com` });
  await cluster.admin('POST', `/admin/accounts/${account.body.id}/credits`, { amount_usd: Number(CREDIT_NANO) / 1e9 });
  const key = (await cluster.admin<{ key: string }>('POST', `/admin/accounts/${account.body.id}/keys`, {})).body.key;
  return { accountId: account.body.id, key };
}

/** Streams open on `victim`, checkpoints written with delivered output, then SIGKILL: the checkpoints it left. */
async function killMidStream(cluster: ServeCluster, victim: ServeInstance, key: string, instanceId: string): Promise<Map<string, bigint>> {
  const streams = await Promise.all(Array.from({ length: STREAMS }, () => openStream(victim.url, key)));
  const ids = streams.map((stream) => stream.requestId);
  const checkpointsOf = async (): Promise<Row[]> => (await query(cluster.databaseUrl, 'select request_id, cost_nano from stream_checkpoints where instance_id = $1', [instanceId]))
    .filter((row) => ids.includes(String(row.request_id)));
  // Wait until every stream has a checkpoint and the figures have moved on at least once (output delivered since).
  const first = await waitFor('a checkpoint of every stream', checkpointsOf, (rows) => rows.length === STREAMS, 10_000);
  const firstCost = new Map(first.map((row) => [String(row.request_id), BigInt(String(row.cost_nano))]));
  await waitFor('checkpoints with more output', checkpointsOf, (rows) => rows.every((row) => BigInt(String(row.cost_nano)) > (firstCost.get(String(row.request_id)) ?? 0n)), 10_000);
  victim.process.kill();
  await victim.process.exited;
  await Promise.all(streams.map((stream) => stream.ended));
  cluster.instances.splice(cluster.instances.indexOf(victim), 1);
  const left = await checkpointsOf();
  expect(left).toHaveLength(STREAMS);
  return new Map(left.map((row) => [String(row.request_id), BigInt(String(row.cost_nano))]));
}

/** Every killed stream charged exactly its checkpoint, once, with its usage row; the books balance; no hold left. */
async function expectChargedAtCheckpoints(cluster: ServeCluster, accountId: string, instanceId: string, checkpoints: Map<string, bigint>): Promise<void> {
  const ids = [...checkpoints.keys()];
  const placeholders = ids.map((_id, index) => `$${index + 1}`).join(', ');
  const rows = await waitFor('usage rows of the killed streams',
    () => query(cluster.databaseUrl, `select request_id, status, error_code, cost_nano, prompt_tokens, completion_tokens from usage_logs where request_id in (${placeholders})`, ids),
    (found) => found.length === STREAMS, 15_000);
  for (const row of rows) {
    expect(row.error_code).toBe('instance_stopped');
    expect(Number(row.status)).toBe(502);
    expect(BigInt(String(row.cost_nano))).toBe(checkpoints.get(String(row.request_id)));
    expect(Number(row.prompt_tokens)).toBeGreaterThan(0);
    expect(Number(row.completion_tokens)).toBeGreaterThan(0);
  }
  const entries = await query(cluster.databaseUrl, `select request_id, amount_nano from ledger_entries where kind = 'usage' and request_id in (${placeholders})`, ids);
  expect(entries).toHaveLength(STREAMS);
  let charged = 0n;
  for (const entry of entries) {
    expect(-BigInt(String(entry.amount_nano))).toBe(checkpoints.get(String(entry.request_id)));
    charged += -BigInt(String(entry.amount_nano));
  }
  expect(charged).toBeGreaterThan(0n);
  const [account] = await query(cluster.databaseUrl, 'select balance_nano from accounts where id = $1', [accountId]);
  expect(BigInt(String(account?.balance_nano))).toBe(CREDIT_NANO - charged);
  expect(await query(cluster.databaseUrl, 'select * from stream_checkpoints where instance_id = $1', [instanceId])).toEqual([]);
  const holds = await cluster.admin<{ data: Array<{ instance_id: string }> }>('GET', `/admin/money/holds?account_id=${accountId}`);
  expect(holds.body.data.filter((hold) => hold.instance_id === instanceId)).toEqual([]);
  const check = await cluster.admin<{ ok: boolean; problems: unknown[] }>('GET', `/admin/ledger/check?account_id=${accountId}`);
  expect(check.body).toMatchObject({ ok: true, problems: [] });
}

/** Opens a speech stream (audio bytes), reads its first chunk, and keeps reading in the background until it dies. */
async function openSpeechStream(url: string, key: string, input: string): Promise<{ requestId: string; ended: Promise<void> }> {
  const response = await fetch(`${url}/v1/audio/speech`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'slow-speech', input, voice: 'alloy' }),
  });
  expect(response.status).toBe(200);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  expect((await reader.read()).done).toBe(false);
  const ended = (async () => {
    for (let reads = 0; reads < 100_000; reads += 1) if ((await reader.read()).done) return;
  })().catch(() => undefined);
  return { requestId: response.headers.get('x-request-id') ?? '', ended };
}

describe('streams of a killed instance are charged at their last checkpoint', () => {
  let cluster: ServeCluster | undefined;
  let speechUpstream: MockOpenAIUpstream | undefined;

  afterEach(async () => {
    killAll();
    await cluster?.close();
    cluster = undefined;
    await speechUpstream?.close();
    speechUpstream = undefined;
  });

  it('by a surviving instance once the dead one is stale (PostgreSQL)', async () => {
    cluster = await startServeCluster(0, YAML, { INSTANCE_STALE_SECONDS: '2' }, { database: 'postgres' });
    const survivor = await cluster.start('survivor', { INSTANCE_ID: 'checkpoint-survivor' });
    const victim = await cluster.start('victim', { INSTANCE_ID: 'checkpoint-victim' });
    const { accountId, key } = await seedAccount(cluster);
    const checkpoints = await killMidStream(cluster, victim, key, 'checkpoint-victim');
    await expectChargedAtCheckpoints(cluster, accountId, 'checkpoint-victim', checkpoints);
    expect(survivor.process.hasExited()).toBe(false);
  }, 90_000);

  it('by the same instance restarted (the suite database)', async () => {
    cluster = await startServeCluster(0, YAML);
    const victim = await cluster.start('victim', { INSTANCE_ID: 'checkpoint-restarted' });
    const { accountId, key } = await seedAccount(cluster);
    const checkpoints = await killMidStream(cluster, victim, key, 'checkpoint-restarted');
    // Nothing was charged while the instance was down (the stale interval is 30 s).
    expect(await query(cluster.databaseUrl, 'select id from ledger_entries where kind = \'usage\' and account_id = $1', [accountId])).toEqual([]);
    await cluster.start('victim-again', { INSTANCE_ID: 'checkpoint-restarted' });
    await expectChargedAtCheckpoints(cluster, accountId, 'checkpoint-restarted', checkpoints);
  }, 90_000);

  it('a speech stream too: billed its characters once the upstream began answering (the suite database)', async () => {
    // 1,000 characters come back as 25 chunks of audio 250 ms apart: about 6 s, longer than a checkpoint interval.
    speechUpstream = await startMockOpenAIUpstream({ chunkDelayMs: 250 });
    cluster = await startServeCluster(0, [
      'models:',
      '  - { id: slow-speech, kind: audio, pricing: { per_mchar: 15 } }',
      'channels:',
      `  - { name: speech, type: openai, base_url: "${speechUpstream.url}", api_key: sk-upstream-test, models: { slow-speech: tts-1 } }`,
    ]);
    const victim = await cluster.start('victim', { INSTANCE_ID: 'speech-restarted' });
    const { accountId, key } = await seedAccount(cluster);
    const stream = await openSpeechStream(victim.url, key, 'a'.repeat(1000));
    const checkpointOf = () => query(cluster!.databaseUrl, 'select cost_nano from stream_checkpoints where request_id = $1', [stream.requestId]);
    const [checkpoint] = await waitFor('the speech stream\'s checkpoint', checkpointOf, (rows) => rows.length === 1, 10_000);
    // 1,000 characters at $15 per million: the whole input, billed by the upstream once it answers.
    expect(BigInt(String(checkpoint?.cost_nano))).toBe(15_000_000n);
    victim.process.kill();
    await victim.process.exited;
    await stream.ended;
    cluster.instances.splice(cluster.instances.indexOf(victim), 1);
    await cluster.start('victim-again', { INSTANCE_ID: 'speech-restarted' });
    const [row] = await waitFor('the speech stream\'s usage row',
      () => query(cluster!.databaseUrl, 'select status, error_code, cost_nano from usage_logs where request_id = $1', [stream.requestId]), (rows) => rows.length === 1, 15_000);
    expect(row).toMatchObject({ error_code: 'instance_stopped' });
    expect(BigInt(String(row?.cost_nano))).toBe(15_000_000n);
    const [account] = await query(cluster.databaseUrl, 'select balance_nano from accounts where id = $1', [accountId]);
    expect(BigInt(String(account?.balance_nano))).toBe(CREDIT_NANO - 15_000_000n);
    const check = await cluster.admin<{ ok: boolean; problems: unknown[] }>('GET', `/admin/ledger/check?account_id=${accountId}`);
    expect(check.body).toMatchObject({ ok: true, problems: [] });
  }, 90_000);
});
