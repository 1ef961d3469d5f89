/**
 * A streamed answer of 40 MiB never holds the gateway's event loop long: the text delivered since the last stream
 * checkpoint is read and counted in turns of a few milliseconds, never in one synchronous step, so a checkpoint (or
 * the settlement of a cut stream) of a huge answer leaves the gateway answering other requests. The gateway runs as
 * its own process (the mock upstream and the client stay in the test process). How long its loop is held is read
 * inside it as CPU time: a probe loaded into the gateway (--import) counts the CPU time its main thread spent between
 * two turns of a 10 ms timer, so a machine that leaves the process unscheduled does not read as a hold, and a
 * synchronous step reads as what it is whatever the load. The gateway's own event-loop delay gauge (wall time) is
 * logged beside it. Checkpoints come every 5 s (INSTANCE_STALE_SECONDS 30), so a single one used to
 * read and count megabytes of answer in one step: a hold of about a second.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, freePort, startCommand, waitForHttp, type RunningCommand } from '../cli/cli-process.js';
import { createThrowawayPostgresDatabase, isPostgresUrl, type ThrowawayPostgresDatabase } from '../../support/postgres-test-database.js';
import { countTextTokensLocally } from '../../../src/tokenize/count-tokens-locally.js';
import { LARGE_STREAM_DELTA, reportedOutputTokens, startLargeStreamUpstream, type LargeStreamUpstream } from '../../support/mock-large-stream-upstream.js';

const MEGABYTES = 40;
/**
 * The most CPU time the gateway's main thread may spend between two turns of its loop while the stream runs. A
 * synchronous step of the relay takes a few milliseconds; the rest is room for garbage collection. The whole-backlog
 * checkpoint this guards against spent about a second in one step.
 */
const MAX_HOLD_MS = 500;
/** The longest a small request sent while the stream runs may wait for its answer. */
const MAX_SIDE_REQUEST_MS = 1500;

let upstream: LargeStreamUpstream;
let gateway: RunningCommand;
let directory: string;
let base: string;
let adminToken: string;
let database: ThrowawayPostgresDatabase | null = null;

/**
 * Loaded into the gateway process (NODE_OPTIONS --import): a 10 ms timer that takes the CPU time the main thread
 * spent since its last turn (process.threadCpuUsage, user and system). On SIGUSR2 it writes the largest since the
 * last report to stderr as `loop-hold-probe <report number> <ms>` and starts again.
 */
const PROBE = `
  import { writeSync } from 'node:fs';
  let last = process.threadCpuUsage();
  let longest = 0;
  let reports = 0;
  setInterval(() => {
    const spent = process.threadCpuUsage(last);
    last = process.threadCpuUsage();
    longest = Math.max(longest, (spent.user + spent.system) / 1000);
  }, 10).unref();
  process.on('SIGUSR2', () => {
    const spent = process.threadCpuUsage(last);
    reports += 1;
    writeSync(2, 'loop-hold-probe ' + reports + ' ' + Math.max(longest, (spent.user + spent.system) / 1000) + '\\n');
    last = process.threadCpuUsage();
    longest = 0;
  });`;

let probeReports = 0;

/** The most CPU time the gateway's main thread spent between two turns of its loop since the last call (ms). */
async function longestHoldCpuMs(): Promise<number> {
  probeReports += 1;
  const line = new RegExp(`^loop-hold-probe ${probeReports} (\\S+)$`, 'm');
  process.kill(gateway.pid, 'SIGUSR2');
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = line.exec(gateway.stderr())?.[1];
    if (value !== undefined) return Number(value);
    if (Date.now() > deadline) throw new Error(`no report ${probeReports} from the loop-hold probe: ${gateway.stderr().slice(-2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function admin<T = Record<string, unknown>>(method: string, route: string, body?: unknown): Promise<T> {
  const response = await fetch(base + route, { method, headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const parsed = (await response.json()) as T;
  if (response.status >= 300) throw new Error(`${method} ${route}: ${response.status} ${JSON.stringify(parsed)}`);
  return parsed;
}

/** A fresh account with credit and a key: millions of tokens a minute would run into one key's token limits. */
async function freshKey(): Promise<{ key: string; keyId: string }> {
  const account = await admin<{ id: string }>('POST', '/admin/accounts', { email: `hold-${randomBytes(4).toString('hex')}@example.com` });
  await admin('POST', `/admin/accounts/${account.id}/credits`, { amount_usd: 1000 });
  const key = await admin<{ key: string; id: string }>('POST', `/admin/accounts/${account.id}/keys`, {});
  return { key: key.key, keyId: key.id };
}

/** The gateway's longest event-loop delay of its last 10 seconds (ms). */
async function loopDelayMaxMs(): Promise<number> {
  const text = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${adminToken}` } })).text();
  const value = /^unigate_event_loop_delay_max_seconds (\S+)$/m.exec(text)?.[1];
  if (value === undefined) throw new Error('no unigate_event_loop_delay_max_seconds in /metrics');
  return Number(value) * 1000;
}

beforeAll(async () => {
  assertBuilt();
  upstream = await startLargeStreamUpstream();
  directory = await mkdtemp(path.join(tmpdir(), 'unigate-loop-hold-'));
  // SQLite in the process's directory, or a throwaway PostgreSQL database when TEST_DATABASE_URL names one.
  database = isPostgresUrl(process.env.TEST_DATABASE_URL) ? await createThrowawayPostgresDatabase() : null;
  const port = await freePort();
  let consolePort = await freePort();
  while (consolePort === port) consolePort = await freePort();
  base = `http://127.0.0.1:${port}`;
  adminToken = `adm_${randomBytes(16).toString('hex')}`;
  gateway = startCommand(['serve'], directory, cleanEnv({ PORT: String(port), CONSOLE_PORT: String(consolePort), ADMIN_TOKEN: adminToken, LOG_LEVEL: 'warn', INSTANCE_STALE_SECONDS: '30', NODE_OPTIONS: `--import=data:text/javascript,${encodeURIComponent(PROBE)}`, ...(database === null ? {} : { DATABASE_URL: database.url }) }));
  await waitForHttp(`${base}/api/status`, gateway, 30_000);
  await admin('POST', '/admin/models', { id: 'big', kind: 'chat', pricing: { input_per_mtok: 1, output_per_mtok: 1 } });
  await admin('POST', '/admin/channels', { name: 'large-stream', type: 'openai', base_url: upstream.url, api_key: 'sk-upstream-test', models: { big: 'big' } });
}, 60_000);

afterAll(async () => {
  gateway?.kill();
  await gateway?.exited;
  await upstream?.close();
  await database?.drop();
  if (directory !== undefined) await rm(directory, { recursive: true, force: true });
});

interface Family {
  name: string;
  request: (key: string) => { path: string; headers: Record<string, string>; body: unknown };
  ending: string;
}

const FAMILIES: Family[] = [
  {
    name: 'chat completions, passed through',
    request: (key) => ({ path: '/v1/chat/completions', headers: { authorization: `Bearer ${key}` }, body: { model: 'big', stream: true, messages: [{ role: 'user', content: `stream ${MEGABYTES} MB` }] } }),
    ending: 'data: [DONE]',
  },
  {
    name: 'Anthropic Messages, translated',
    request: (key) => ({ path: '/v1/messages', headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' }, body: { model: 'big', stream: true, max_tokens: 64000, messages: [{ role: 'user', content: `stream ${MEGABYTES} MB` }] } }),
    ending: 'message_stop',
  },
];

interface Observed {
  /** Most CPU time the gateway's main thread spent between two turns of its loop while the stream ran (ms). */
  maxHoldCpuMs: number;
  /** Longest event-loop delay (wall time) the gateway's own gauge reported over the same moments (ms), logged only. */
  maxDelayWallMs: number;
  /** Small requests answered while the stream ran, and the longest one's time (ms). */
  sideAnswered: number;
  sideMaxMs: number;
}

/** While `running` is pending: reads the gateway's delay gauge and sends a small request, every half second. */
async function watch(running: Promise<unknown>, key: string): Promise<Observed> {
  let done = false;
  void running.finally(() => (done = true)).catch(() => undefined);
  const observed: Observed = { maxHoldCpuMs: 0, maxDelayWallMs: 0, sideAnswered: 0, sideMaxMs: 0 };
  await longestHoldCpuMs();
  while (!done) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const started = performance.now();
    const models = await fetch(`${base}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    expect(models.status).toBe(200);
    await models.arrayBuffer();
    const took = performance.now() - started;
    if (!done) {
      observed.sideAnswered += 1;
      observed.sideMaxMs = Math.max(observed.sideMaxMs, took);
    }
    observed.maxDelayWallMs = Math.max(observed.maxDelayWallMs, await loopDelayMaxMs());
  }
  // The gauge covers the last 10 seconds: read once more for the stream's last moments.
  observed.maxDelayWallMs = Math.max(observed.maxDelayWallMs, await loopDelayMaxMs());
  observed.maxHoldCpuMs = await longestHoldCpuMs();
  return observed;
}

/** Streams the answer, to its end or (`cutAt`) until that many bytes arrived. */
async function stream(family: Family, key: string, cutAt: number | null): Promise<{ bytes: number; deltas: number; tail: string; requestId: string }> {
  const { path: route, headers, body } = family.request(key);
  const controller = new AbortController();
  const response = await fetch(`${base}${route}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body), signal: controller.signal });
  if (response.status !== 200) throw new Error(`${response.status}: ${await response.text()}`);
  const requestId = response.headers.get('x-request-id') ?? '';
  let bytes = 0;
  let deltas = 0;
  let tail = '';
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.length;
      const text = tail + Buffer.from(chunk).toString('latin1');
      // Deltas whole in this chunk or completed by it (the kept tail is shorter than two deltas' events).
      deltas += text.split(LARGE_STREAM_DELTA).length - 1 - (tail.split(LARGE_STREAM_DELTA).length - 1);
      tail = text.slice(-LARGE_STREAM_DELTA.length);
      if (cutAt !== null && bytes >= cutAt) {
        controller.abort();
        break;
      }
    }
  } catch (error) {
    if (cutAt === null) throw error;
  }
  return { bytes, deltas, tail, requestId };
}

interface UsageRow {
  request_id: string;
  status: number;
  completion_tokens: number;
}

async function usageRow(keyId: string, requestId: string): Promise<UsageRow | undefined> {
  for (let tries = 0; tries < 50; tries += 1) {
    const rows = await admin<{ data: UsageRow[] }>('GET', `/admin/usage?key_id=${keyId}&limit=5`);
    const row = rows.data.find((entry) => entry.request_id === requestId);
    if (row !== undefined) return row;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return undefined;
}

describe.each(FAMILIES)(`a ${MEGABYTES} MiB stream ($name)`, (family) => {
  it('never holds the gateway loop long, and other requests are answered while it runs', async () => {
    const { key, keyId } = await freshKey();
    const running = stream(family, key, null);
    const observed = await watch(running, key);
    const result = await running;
    console.log(`${family.name}: ${MEGABYTES} MiB, longest loop hold ${observed.maxHoldCpuMs.toFixed(0)} ms of CPU (event-loop delay gauge ${observed.maxDelayWallMs.toFixed(0)} ms), ${observed.sideAnswered} requests answered meanwhile (slowest ${observed.sideMaxMs.toFixed(0)} ms)`);
    expect(result.tail).toContain(family.ending);
    expect(result.bytes).toBeGreaterThan(MEGABYTES * 1024 * 1024);
    expect(observed.sideAnswered).toBeGreaterThan(0);
    expect(observed.sideMaxMs).toBeLessThan(MAX_SIDE_REQUEST_MS);
    expect(observed.maxHoldCpuMs).toBeLessThan(MAX_HOLD_MS);
    // Billed at the usage the upstream reported at the end, as before.
    expect((await usageRow(keyId, result.requestId))?.completion_tokens).toBe(reportedOutputTokens(Math.round(MEGABYTES * 1024 * 1024)));
  }, 240_000);

  it('cut by the caller after most of it, is settled at the text delivered without holding the loop', async () => {
    const { key, keyId } = await freshKey();
    const running = stream(family, key, Math.round(MEGABYTES * 1024 * 1024 * 0.9));
    // Watched until the cut stream is settled: its delivered text is counted at its last checkpoint and at its settlement.
    const settled = running.then((result) => usageRow(keyId, result.requestId));
    const observed = await watch(settled, key);
    const [result, row] = await Promise.all([running, settled]);
    console.log(`${family.name}, cut: longest loop hold ${observed.maxHoldCpuMs.toFixed(0)} ms of CPU (event-loop delay gauge ${observed.maxDelayWallMs.toFixed(0)} ms), ${observed.sideAnswered} requests answered meanwhile (slowest ${observed.sideMaxMs.toFixed(0)} ms)`);
    expect(observed.sideAnswered).toBeGreaterThan(0);
    expect(observed.sideMaxMs).toBeLessThan(MAX_SIDE_REQUEST_MS);
    expect(observed.maxHoldCpuMs).toBeLessThan(MAX_HOLD_MS);
    expect(row?.status).toBe(499);
    // At least every delta that reached the caller, counted with the local tokenizer (the gateway may have sent more).
    const received = result.deltas;
    expect(row?.completion_tokens).toBeGreaterThanOrEqual(await countTextTokensLocally(LARGE_STREAM_DELTA.repeat(received)));
  }, 240_000);
});
