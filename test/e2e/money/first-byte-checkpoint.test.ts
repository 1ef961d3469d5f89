/**
 * A stream is checkpointed as its first byte reaches the caller, not at the next checkpoint interval (2 s): three
 * instances on one PostgreSQL (and Redis when TEST_REDIS_URL is set) carry streams, one is killed with SIGKILL once its
 * two newest streams have their first checkpoints, written at their first byte before the next interval, and its restart charges both at their checkpoint
 * (at least their input) with `instance_stopped` usage rows; its holds are released and the books balance.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { killAll } from '../cli/cli-process.js';
import { startServeCluster, type ServeCluster, type ServeInstance } from '../serve-cluster.js';
import { RedisFixture, TEST_REDIS_URL, testKeyPrefix } from '../../unit/limits/redis-test-support.js';

const INPUT_NANO_PER_TOKEN = 100_000n;
const YAML = [
  'models:',
  '  - { id: slow-stream, pricing: { input_per_mtok: 100, output_per_mtok: 100 } }',
  'channels:',
  // 400 tokens one at a time, 40 ms apart: a stream lasts about 16 s.
  '  - { name: slow-stream, type: simulator, models: [slow-stream], settings: { output_tokens: 400, chunk_delay_ms: 40 } }',
];
const CREDIT_NANO = 5_000_000_000n;
const VICTIM = 'first-byte-victim';

type Row = Record<string, unknown>;

async function query(databaseUrl: string, text: string, parameters: unknown[] = []): Promise<Row[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query(text, parameters)).rows as Row[];
  } finally {
    await client.end();
  }
}

async function waitFor<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number, pollMs = 100): Promise<T> {
  const started = Date.now();
  let value = await read();
  while (!done(value)) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
    value = await read();
  }
  return value;
}

interface OpenedStream {
  requestId: string;
  startedAt: number;
  /** Resolves when the connection ends (read to the end in the background). */
  ended: Promise<void>;
}

/** Opens a stream and reads until its first content event arrived; the rest is read in the background. */
async function openStream(url: string, key: string): Promise<OpenedStream> {
  const startedAt = performance.now();
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'slow-stream', messages: [{ role: 'user', content: 'tell me a long story about a lighthouse keeper' }], stream: true, max_tokens: 400 }),
  });
  expect(response.status).toBe(200);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  let text = '';
  while (!text.includes('"content"')) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  const ended = (async () => {
    for (let reads = 0; reads < 100_000; reads += 1) if ((await reader.read()).done) return;
  })().catch(() => undefined);
  return { requestId: response.headers.get('x-request-id') ?? '', startedAt, ended };
}

describe('a stream killed in its first seconds is charged at the checkpoint of its first byte', () => {
  let cluster: ServeCluster | undefined;
  const redis = TEST_REDIS_URL === undefined ? null : new RedisFixture(TEST_REDIS_URL, testKeyPrefix());

  afterEach(async () => {
    killAll();
    await cluster?.close();
    cluster = undefined;
    await redis?.cleanUp();
  });

  it('three instances on PostgreSQL: SIGKILL in the first seconds of two streams checkpointed at their first byte, charged by the restarted instance', async () => {
    cluster = await startServeCluster(0, YAML, redis === null ? {} : { REDIS_URL: redis.url, REDIS_KEY_PREFIX: redis.prefix }, { database: 'postgres' });
    const victim: ServeInstance = await cluster.start('victim', { INSTANCE_ID: VICTIM });
    const others = [await cluster.start('other-1'), await cluster.start('other-2')];
    const account = await cluster.admin<{ id: string }>('POST', '/admin/accounts', { email: 'first-byte@example.com' });
    const accountId = account.body.id;
    await cluster.admin('POST', `/admin/accounts/${accountId}/credits`, { amount_usd: Number(CREDIT_NANO) / 1e9 });
    const key = (await cluster.admin<{ key: string }>('POST', `/admin/accounts/${accountId}/keys`, {})).body.key;
    const databaseUrl = cluster.databaseUrl;

    // Streams in flight on every instance; the victim's first one tells when its checkpoint interval ticks.
    const probe = await openStream(victim.url, key);
    const background = await Promise.all(others.flatMap((other) => [openStream(other.url, key), openStream(other.url, key)]));
    const probeWrittenAt = async (): Promise<number | null> => {
      const [row] = await query(databaseUrl, 'select updated_at from stream_checkpoints where request_id = $1', [probe.requestId]);
      return row === undefined ? null : Number(row.updated_at);
    };
    let tick = await waitFor('the probe stream\'s checkpoint', probeWrittenAt, (at) => at !== null, 5000, 20);
    // Two new streams right after an interval tick, and their checkpoints read in one statement with the probe's. An
    // interval's pass writes every stream whose figure changed, the probe's included, in one transaction: the new
    // streams' rows there while the probe's still shows the tick they followed were written at their first byte,
    // not by an interval. A loaded machine may let the next tick (2 s on) come first: that round proves nothing, and
    // another is started (its streams are killed with the rest).
    let streams: OpenedStream[] = [];
    let written: Row[] = [];
    const earlierRounds: OpenedStream[] = [];
    for (let round = 1; ; round += 1) {
      const after = tick;
      tick = await waitFor('the next checkpoint interval', probeWrittenAt, (at) => at !== after, 5000, 20);
      streams = await Promise.all([openStream(victim.url, key), openStream(victim.url, key)]);
      const roundIds = streams.map((stream) => stream.requestId);
      const snapshot = await waitFor('checkpoints of the new streams at their first byte, or the next interval',
        () => query(databaseUrl, 'select request_id, cost_nano, updated_at from stream_checkpoints where request_id = any($1)', [[probe.requestId, ...roundIds]]),
        (rows) => rows.length === roundIds.length + 1 || Number(rows.find((row) => row.request_id === probe.requestId)?.updated_at) !== tick, 30_000, 20);
      const probeAt = Number(snapshot.find((row) => row.request_id === probe.requestId)?.updated_at);
      if (probeAt === tick && snapshot.length === roundIds.length + 1) {
        written = snapshot.filter((row) => row.request_id !== probe.requestId);
        break;
      }
      if (round === 3) throw new Error(`three rounds in a row, the next interval's checkpoints came before the new streams' first: ${JSON.stringify(snapshot)}`);
      earlierRounds.push(...streams);
    }
    const ids = streams.map((stream) => stream.requestId);
    const checkpointsOf = async (): Promise<Row[]> => query(databaseUrl, 'select request_id, cost_nano from stream_checkpoints where request_id = any($1)', [ids]);
    victim.process.kill();
    console.log(`killed ${Math.max(...streams.map((stream) => performance.now() - stream.startedAt)).toFixed(0)} ms into the new streams`);
    await victim.process.exited;
    await Promise.all([probe, ...streams, ...earlierRounds].map((stream) => stream.ended));
    cluster.instances.splice(cluster.instances.indexOf(victim), 1);
    // What the victim left is what is charged (a later figure would be larger, never smaller).
    const left = new Map((await checkpointsOf()).map((row) => [String(row.request_id), BigInt(String(row.cost_nano))]));
    expect([...left.keys()].sort(), 'checkpoints the killed instance left of its new streams').toEqual([...ids].sort());
    const checkpoints = new Map(written.map((row) => [String(row.request_id), BigInt(String(row.cost_nano))]));
    for (const id of ids) expect(left.get(id)).toBeGreaterThanOrEqual(checkpoints.get(id) ?? 0n);

    await cluster.start('victim', { INSTANCE_ID: VICTIM });
    const rows = await waitFor('usage rows of the killed streams',
      () => query(databaseUrl, 'select request_id, status, error_code, cost_nano, prompt_tokens from usage_logs where request_id = any($1)', [ids]),
      (found) => found.length === ids.length, 15_000);
    for (const row of rows) {
      expect(row).toMatchObject({ error_code: 'instance_stopped', status: 502 });
      const prompt = BigInt(Number(row.prompt_tokens));
      expect(prompt).toBeGreaterThan(0n);
      // At least the whole input, known before the first byte.
      expect(BigInt(String(row.cost_nano))).toBeGreaterThanOrEqual(prompt * INPUT_NANO_PER_TOKEN);
      expect(BigInt(String(row.cost_nano))).toBe(left.get(String(row.request_id)));
    }
    const entries = await query(databaseUrl, 'select request_id, amount_nano from ledger_entries where kind = \'usage\' and request_id = any($1)', [ids]);
    expect(entries.map((entry) => [entry.request_id, -BigInt(String(entry.amount_nano))]).sort()).toEqual([...left].sort());

    // The other instances' streams end normally; then the books balance to the nano-dollar.
    await Promise.all(background.map((stream) => stream.ended));
    const allIds = [probe.requestId, ...ids, ...earlierRounds.map((stream) => stream.requestId), ...background.map((stream) => stream.requestId)];
    await waitFor('every stream settled', () => query(databaseUrl, 'select request_id from usage_logs where request_id = any($1)', [allIds]), (found) => found.length === allIds.length, 30_000);
    expect(await query(databaseUrl, 'select * from stream_checkpoints where instance_id = $1', [VICTIM])).toEqual([]);
    const holds = await cluster.admin<{ data: Array<{ instance_id: string }> }>('GET', `/admin/money/holds?account_id=${accountId}`);
    expect(holds.body.data.filter((hold) => hold.instance_id === VICTIM)).toEqual([]);
    const [{ spent }] = await query(databaseUrl, 'select coalesce(sum(cost_nano), 0) as spent from usage_logs where account_id = $1', [accountId]) as [{ spent: string }];
    const [{ balance_nano: balance }] = await query(databaseUrl, 'select balance_nano from accounts where id = $1', [accountId]) as [{ balance_nano: string }];
    expect(BigInt(balance)).toBe(CREDIT_NANO - BigInt(spent));
    const check = await cluster.admin<{ ok: boolean; problems: unknown[] }>('GET', `/admin/ledger/check?account_id=${accountId}`);
    expect(check.body).toMatchObject({ ok: true, problems: [] });
  }, 120_000);
});
