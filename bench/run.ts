/**
 * Gateway benchmark: the same load sent straight to a mock upstream and through the gateway,
 * in one run, so the table shows what the gateway adds.
 *
 *   npm run bench                      # builds, then node dist/bench/run.js
 *   BENCH_SECONDS=20 npm run bench     # longer measurement windows (default 8 s, plus 1 s warm-up each)
 *
 * Environment: BENCH_SECONDS, BENCH_WARMUP_SECONDS, BENCH_CONNECTIONS (default 32),
 * BENCH_CHUNK_DELAY_MS (mock pacing of streamed chunks, default 0), BENCH_WORKERS (passed to the
 * gateway as WORKERS), BENCH_DIRECT_ONLY=1 (skip the gateway: only measures the mock).
 *
 * Scenarios: `chat c=1`, `chat c=N`, `stream c=N` (OpenAI format, mock OpenAI upstream, model bench-model)
 * and `translated chat c=1`, `translated stream c=N`: direct = Anthropic-format requests straight at the mock
 * Anthropic upstream (POST /v1/messages); gateway = OpenAI-format requests for bench-claude, whose channel is
 * that Anthropic upstream, so the ratio shows the cost of translating OpenAI → Anthropic → OpenAI.
 *
 * It starts three child processes (the mock OpenAI and Anthropic upstreams from dist/test/mock-upstreams and
 * the gateway `node dist/src/main.js serve` on free 127.0.0.1 ports with a throw-away SQLite database),
 * configures the gateway through the admin API as in the operator contract, runs autocannon, prints
 * a table, writes dist/bench-results.json, and stops the children (also on error and SIGINT).
 * `runBench()` is what the gateway's `bench` command calls; it resolves with `ok: false` rather than
 * throwing when a scenario could not run or more than 1% of its requests failed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, type WriteStream } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { MOCK_UPSTREAM_SERVER_ENTRY } from '../test/mock-upstreams/openai-upstream-server.js';
import { MOCK_ANTHROPIC_UPSTREAM_SERVER_ENTRY } from '../test/mock-upstreams/anthropic-upstream-server.js';
import {
  ANTHROPIC_UPSTREAM_KEY,
  ANTHROPIC_UPSTREAM_MODEL,
  BENCH_CLAUDE_MODEL,
  BENCH_MODEL,
  UPSTREAM_KEY,
  anthropicMessagesRequest,
  openAIChatRequest,
  type RequestSpec,
} from './requests.js';

// ---------------------------------------------------------------- autocannon (CommonJS, no types shipped)

interface Histogram {
  average: number;
  mean: number;
  stddev: number;
  min: number;
  max: number;
  total: number;
  p50: number;
  p90: number;
  p97_5: number;
  p99: number;
  sent?: number;
}
interface AutocannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  mismatches: number;
  non2xx: number;
  '2xx': number;
  statusCodeStats: Record<string, { count: number }>;
  latency: Histogram;
  requests: Histogram;
  throughput: Histogram;
}
interface AutocannonOptions {
  url: string;
  method: 'POST' | 'GET';
  headers: Record<string, string>;
  body?: string;
  connections: number;
  duration: number;
  timeout: number;
  verifyBody?: (body: string) => boolean;
}
interface AutocannonInstance extends PromiseLike<AutocannonResult> {
  stop(): void;
  /** per response: status code, bytes, latency in ms with sub-millisecond precision */
  on(event: 'response', listener: (client: unknown, statusCode: number, bytes: number, ms: number) => void): this;
}
type Autocannon = (opts: AutocannonOptions) => AutocannonInstance;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

// ---------------------------------------------------------------- public types

export interface BenchOptions {
  /** measured seconds per run (default BENCH_SECONDS or 8) */
  seconds?: number;
  /** warm-up seconds before each measured run (default BENCH_WARMUP_SECONDS or 1) */
  warmupSeconds?: number;
  /** concurrency of the throughput scenarios (default BENCH_CONNECTIONS or 32) */
  connections?: number;
  /** mock pacing between streamed chunks (default BENCH_CHUNK_DELAY_MS or 0) */
  chunkDelayMs?: number;
  /** only measure the mock upstream, no gateway (default BENCH_DIRECT_ONLY=1) */
  directOnly?: boolean;
  /** the compiled tree holding src/main.js and test/mock-upstreams (default: the dist this file is in) */
  distDir?: string;
  /** where the JSON results go (default <distDir>/bench-results.json) */
  resultsPath?: string;
  /** output (default console.log) */
  log?: (line: string) => void;
  /** bounded wait for the gateway's GET /api/status (default 20 s) */
  gatewayStartTimeoutMs?: number;
}

export interface SideResult {
  url: string;
  requestsPerSec: number;
  /** spread of the per-second request counts (a falling min hints at degradation during the run) */
  perSecond: { min: number; max: number; stddev: number };
  latencyP50Ms: number;
  latencyP99Ms: number;
  latencyAvgMs: number;
  responses: number;
  ok2xx: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  mismatches: number;
  statusCodes: Record<string, number>;
  errorRate: number;
}

export interface ScenarioReport {
  name: string;
  description: string;
  connections: number;
  stream: boolean;
  /**
   * `openai`: OpenAI format on both sides, mock OpenAI upstream. `anthropic`: direct = Anthropic format at the
   * mock Anthropic upstream, gateway = OpenAI format for a model on an `anthropic` channel (translated).
   */
  upstream: 'openai' | 'anthropic';
  direct?: SideResult;
  gateway?: SideResult;
  /** gateway req/s ÷ direct req/s */
  ratio?: number;
  addedP50Ms?: number;
  addedP99Ms?: number;
  failures: string[];
}

export interface BenchReport {
  ok: boolean;
  failures: string[];
  startedAt: string;
  finishedAt: string;
  seconds: number;
  warmupSeconds: number;
  environment: {
    node: string;
    platform: string;
    cpus: number;
    cpuModel: string;
    chunkDelayMs: number;
    gatewayWorkers: string;
    /** 1-minute load averages at start and end: other work on the machine skews the figures */
    loadAvg1mStart: number;
    loadAvg1mEnd: number;
  };
  scenarios: ScenarioReport[];
}

// ---------------------------------------------------------------- helpers

const MAX_ERROR_RATE = 0.01;

function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name}: expected a non-negative number, got ${raw}`);
  return n;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((res, rej) => {
    srv.once('error', rej);
    srv.listen(0, '127.0.0.1', () => res());
  });
  const addr = srv.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  await new Promise<void>((res) => srv.close(() => res()));
  if (!port) throw new Error('could not find a free port');
  return port;
}

interface Child {
  name: string;
  proc: ChildProcess;
  exited: Promise<number | null>;
  logPath: string;
}

function startChild(name: string, args: string[], opts: { env: NodeJS.ProcessEnv; cwd: string; logPath: string; stdinPipe: boolean }): Child {
  const log: WriteStream = createWriteStream(opts.logPath);
  // detached: the child leads its own process group, so stopChild() also reaches its workers.
  const proc = spawn(process.execPath, args, {
    cwd: opts.cwd,
    env: opts.env,
    detached: true,
    stdio: [opts.stdinPipe ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  proc.stdout?.pipe(log, { end: false });
  proc.stderr?.pipe(log, { end: false });
  const exited = new Promise<number | null>((res) => {
    proc.once('exit', (code, signal) => {
      log.end(`\n[bench] ${name} exited: code=${code} signal=${signal}\n`);
      res(code);
    });
    proc.once('error', (err) => {
      log.end(`\n[bench] ${name} failed to spawn: ${err.message}\n`);
      res(-1);
    });
  });
  return { name, proc, exited, logPath: opts.logPath };
}

function signalGroup(child: Child, signal: NodeJS.Signals): void {
  if (child.proc.exitCode !== null || child.proc.signalCode !== null || child.proc.pid === undefined) return;
  try {
    process.kill(-child.proc.pid, signal);
  } catch {
    try {
      child.proc.kill(signal);
    } catch {
      /* already gone */
    }
  }
}

async function stopChild(child: Child): Promise<void> {
  child.proc.stdin?.end();
  signalGroup(child, 'SIGTERM');
  const done = await Promise.race([child.exited.then(() => true), sleep(3000).then(() => false)]);
  if (!done) {
    signalGroup(child, 'SIGKILL');
    await Promise.race([child.exited, sleep(2000)]);
  }
}

function logTail(path: string, lines = 30): string {
  try {
    return readFileSync(path, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

async function waitForLine(child: Child, prefix: string, timeoutMs: number): Promise<string> {
  return new Promise((res, rej) => {
    let buf = '';
    const timer = setTimeout(() => finish(new Error(`${child.name}: no "${prefix}" line within ${timeoutMs} ms`)), timeoutMs);
    const onData = (d: Buffer): void => {
      buf += d.toString('utf8');
      const line = buf.split('\n').find((l) => l.startsWith(prefix));
      if (line !== undefined) finish(null, line.slice(prefix.length).trim());
      else if (buf.length > 65_536) buf = buf.slice(-4096);
    };
    const onExit = (): void => finish(new Error(`${child.name} exited before printing "${prefix}"`));
    function finish(err: Error | null, value?: string): void {
      clearTimeout(timer);
      child.proc.stdout?.off('data', onData);
      child.proc.off('exit', onExit);
      if (err) rej(err);
      else res(value ?? '');
    }
    child.proc.stdout?.on('data', onData);
    child.proc.once('exit', onExit);
  });
}

async function waitForStatus(url: string, child: Child, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (child.proc.exitCode !== null || child.proc.signalCode !== null) throw new Error(`gateway exited during start-up (${last})`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      if (res.status === 200) return;
      last = `HTTP ${res.status}`;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    await sleep(250);
  }
  throw new Error(`gateway did not answer 200 on ${url} within ${timeoutMs} ms (last: ${last})`);
}

async function adminCall(base: string, token: string, method: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  if (res.status < 200 || res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 500)}`);
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new Error(`${method} ${path} answered non-JSON: ${text.slice(0, 200)}`);
  }
}

/** Finds a field in an admin answer, directly or under a `data`/entity wrapper. */
function pick(obj: Record<string, unknown>, field: string): unknown {
  if (obj[field] !== undefined) return obj[field];
  for (const v of Object.values(obj)) {
    if (v && typeof v === 'object' && !Array.isArray(v) && (v as Record<string, unknown>)[field] !== undefined) {
      return (v as Record<string, unknown>)[field];
    }
  }
  return undefined;
}

async function configureGateway(base: string, adminToken: string, upstreamUrl: string): Promise<string> {
  await adminCall(base, adminToken, 'POST', '/admin/channels', {
    name: 'bench-upstream',
    type: 'openai',
    base_url: upstreamUrl,
    api_key: UPSTREAM_KEY,
    models: [BENCH_MODEL],
  });
  await adminCall(base, adminToken, 'POST', '/admin/models', { id: BENCH_MODEL, pricing: { input_per_mtok: 1, output_per_mtok: 2 } });
  const account = await adminCall(base, adminToken, 'POST', '/admin/accounts', { email: 'bench@example.com' });
  const accountId = pick(account, 'id');
  if (typeof accountId !== 'string' && typeof accountId !== 'number') throw new Error(`POST /admin/accounts: no id in ${JSON.stringify(account)}`);
  const enc = encodeURIComponent(String(accountId));
  await adminCall(base, adminToken, 'POST', `/admin/accounts/${enc}/credits`, { amount_usd: 1_000_000 });
  // Limits on, set far above the load, so the limiter's work is part of every measured request.
  const key = await adminCall(base, adminToken, 'POST', `/admin/accounts/${enc}/keys`, { rpm: 100_000_000, tpm: 1_000_000_000_000, concurrency: 10_000 });
  const secret = pick(key, 'key');
  if (typeof secret !== 'string' || secret === '') throw new Error(`POST /admin/accounts/:id/keys: no key in the answer`);
  return secret;
}

/** The translated route: `bench-claude` on an `anthropic` channel (base URL without /v1), priced like bench-model. */
async function configureTranslation(base: string, adminToken: string, anthropicBaseUrl: string): Promise<void> {
  await adminCall(base, adminToken, 'POST', '/admin/channels', {
    name: 'bench-anthropic-upstream',
    type: 'anthropic',
    base_url: anthropicBaseUrl,
    api_key: ANTHROPIC_UPSTREAM_KEY,
    models: { [BENCH_CLAUDE_MODEL]: ANTHROPIC_UPSTREAM_MODEL },
  });
  await adminCall(base, adminToken, 'POST', '/admin/models', { id: BENCH_CLAUDE_MODEL, pricing: { input_per_mtok: 1, output_per_mtok: 2 } });
}

// ---------------------------------------------------------------- scenarios

/** One request outside the load, to fail early with a readable message. */
async function preflight(spec: RequestSpec): Promise<string | null> {
  try {
    const res = await fetch(spec.url, { method: 'POST', headers: spec.headers, body: spec.body, signal: AbortSignal.timeout(15_000) });
    const text = await res.text();
    if (res.status !== 200) return `HTTP ${res.status}: ${text.slice(0, 400)}`;
    if (!spec.verify(text)) return `unexpected body: ${text.slice(0, 400)}`;
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/** Preflight with a few bounded attempts (the first routed call may warm caches). */
async function preflightRetrying(spec: RequestSpec, attempts: number): Promise<string | null> {
  let pre: string | null = 'not tried';
  for (let attempt = 0; attempt < attempts && pre !== null; attempt++) {
    pre = await preflight(spec);
    if (pre !== null && attempt < attempts - 1) await sleep(500);
  }
  return pre;
}

const MAX_LATENCY_SAMPLES = 5_000_000;

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: number[], q: number): number | undefined {
  if (sorted.length === 0) return undefined;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

async function measure(spec: RequestSpec, connections: number, seconds: number, warmupSeconds: number): Promise<SideResult> {
  const opts: AutocannonOptions = {
    url: spec.url,
    method: 'POST',
    headers: spec.headers,
    body: spec.body,
    connections,
    duration: seconds,
    timeout: 30,
    verifyBody: spec.verify,
  };
  if (warmupSeconds > 0) await autocannon({ ...opts, duration: warmupSeconds });
  // autocannon's histogram keeps whole milliseconds; keep the exact 2xx latencies for percentiles.
  const latencies: number[] = [];
  const instance = autocannon(opts);
  instance.on('response', (_client, statusCode, _bytes, ms) => {
    if (statusCode >= 200 && statusCode < 300 && latencies.length < MAX_LATENCY_SAMPLES) latencies.push(ms);
  });
  const r = await instance;
  latencies.sort((a, b) => a - b);
  const statusCodes: Record<string, number> = {};
  for (const [code, v] of Object.entries(r.statusCodeStats ?? {})) statusCodes[code] = v.count;
  const responses = r.requests.total;
  const attempts = responses + r.errors;
  const bad = r.non2xx + r.errors + r.mismatches;
  return {
    url: spec.url,
    requestsPerSec: r.duration > 0 ? r['2xx'] / r.duration : 0,
    perSecond: { min: r.requests.min, max: r.requests.max, stddev: r.requests.stddev },
    latencyP50Ms: percentile(latencies, 0.5) ?? r.latency.p50,
    latencyP99Ms: percentile(latencies, 0.99) ?? r.latency.p99,
    latencyAvgMs: latencies.length > 0 ? latencies.reduce((a, b) => a + b, 0) / latencies.length : r.latency.average,
    responses,
    ok2xx: r['2xx'],
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    mismatches: r.mismatches,
    statusCodes,
    errorRate: attempts > 0 ? Math.min(1, bad / attempts) : 1,
  };
}

function checkSide(label: string, s: SideResult): string[] {
  const out: string[] = [];
  if (s.ok2xx === 0) out.push(`${label}: no successful response`);
  if (s.errorRate > MAX_ERROR_RATE) {
    out.push(
      `${label}: ${(s.errorRate * 100).toFixed(2)}% failed (non-2xx ${s.non2xx} ${JSON.stringify(s.statusCodes)}, connection errors ${s.errors}, timeouts ${s.timeouts}, bad bodies ${s.mismatches})`,
    );
  }
  return out;
}

// ---------------------------------------------------------------- output

function fmt(n: number | undefined, digits = 1): string {
  return n === undefined || !Number.isFinite(n) ? '-' : n.toFixed(digits);
}

export function formatTable(scenarios: ScenarioReport[]): string {
  const header = ['scenario', 'direct req/s', 'gateway req/s', 'ratio', 'direct p50/p99 ms', 'gateway p50/p99 ms', 'added p50 ms', 'errors d/g'];
  const rows = scenarios.map((s) => [
    s.name,
    fmt(s.direct?.requestsPerSec, 0),
    fmt(s.gateway?.requestsPerSec, 0),
    fmt(s.ratio, 2),
    s.direct ? `${fmt(s.direct.latencyP50Ms, 3)} / ${fmt(s.direct.latencyP99Ms, 3)}` : '-',
    s.gateway ? `${fmt(s.gateway.latencyP50Ms, 3)} / ${fmt(s.gateway.latencyP99Ms, 3)}` : '-',
    fmt(s.addedP50Ms, 3),
    `${s.direct ? s.direct.non2xx + s.direct.errors + s.direct.mismatches : '-'} / ${s.gateway ? s.gateway.non2xx + s.gateway.errors + s.gateway.mismatches : '-'}`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

// ---------------------------------------------------------------- main entry

export async function runBench(options: BenchOptions = {}): Promise<BenchReport> {
  const log = options.log ?? ((line: string) => console.log(line));
  const seconds = options.seconds ?? envNumber('BENCH_SECONDS', 8);
  const warmupSeconds = options.warmupSeconds ?? envNumber('BENCH_WARMUP_SECONDS', 1);
  const connections = options.connections ?? envNumber('BENCH_CONNECTIONS', 32);
  const chunkDelayMs = options.chunkDelayMs ?? envNumber('BENCH_CHUNK_DELAY_MS', 0);
  const directOnly = options.directOnly ?? process.env.BENCH_DIRECT_ONLY === '1';
  const distDir = options.distDir ?? resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const resultsPath = options.resultsPath ?? join(distDir, 'bench-results.json');
  const gatewayMain = join(distDir, 'src', 'main.js');
  const mockEntry = options.distDir ? join(distDir, 'test', 'mock-upstreams', 'openai-upstream-server.js') : MOCK_UPSTREAM_SERVER_ENTRY;
  const anthropicMockEntry = options.distDir
    ? join(distDir, 'test', 'mock-upstreams', 'anthropic-upstream-server.js')
    : MOCK_ANTHROPIC_UPSTREAM_SERVER_ENTRY;
  if (seconds <= 0) throw new Error('BENCH_SECONDS must be > 0');

  const startedAt = new Date().toISOString();
  const loadAvg1mStart = loadavg()[0] ?? 0;
  const failures: string[] = [];
  const translatedSides = `direct: Anthropic messages at the mock Anthropic upstream; gateway: OpenAI chat completions for ${BENCH_CLAUDE_MODEL} on an anthropic channel (OpenAI → Anthropic → OpenAI)`;
  const scenarios: ScenarioReport[] = [
    { name: 'chat c=1', description: 'non-streaming chat completion, 1 connection (latency)', connections: 1, stream: false, upstream: 'openai', failures: [] },
    { name: `chat c=${connections}`, description: `non-streaming chat completion, ${connections} connections (throughput)`, connections, stream: false, upstream: 'openai', failures: [] },
    { name: `stream c=${connections}`, description: `streaming chat completion with include_usage, ${connections} connections`, connections, stream: true, upstream: 'openai', failures: [] },
    {
      name: 'translated chat c=1',
      description: `non-streaming, 1 connection (added latency of translation); ${translatedSides}`,
      connections: 1,
      stream: false,
      upstream: 'anthropic',
      failures: [],
    },
    {
      name: `translated stream c=${connections}`,
      description: `streaming (gateway side with include_usage), ${connections} connections (cost of translating the stream); ${translatedSides}`,
      connections,
      stream: true,
      upstream: 'anthropic',
      failures: [],
    },
  ];
  const workDir = mkdtempSync(join(tmpdir(), 'gateway-bench-'));
  const children: Child[] = [];
  const killAllNow = (): void => {
    for (const c of children) signalGroup(c, 'SIGKILL');
  };
  const onSignal = (sig: NodeJS.Signals): void => {
    log(`\n[bench] ${sig}: stopping child processes`);
    killAllNow();
    process.exit(sig === 'SIGINT' ? 130 : 143);
  };
  process.on('exit', killAllNow);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  /** Starts a mock upstream process and resolves with the base URL it prints. */
  const startMock = async (name: string, entry: string, env: NodeJS.ProcessEnv): Promise<string> => {
    if (!existsSync(entry)) throw new Error(`${name} entry not found at ${entry} (run npm run build)`);
    const child = startChild(name, [entry, '--port', '0', '--chunk-delay-ms', String(chunkDelayMs), '--exit-on-stdin-close'], {
      env: { ...process.env, ...env },
      cwd: workDir,
      logPath: join(workDir, `${name}.log`),
      stdinPipe: true,
    });
    children.push(child);
    return waitForLine(child, 'LISTENING ', 10_000).catch((err: Error) => {
      throw new Error(`${err.message}\n${logTail(child.logPath)}`);
    });
  };

  try {
    log(`[bench] ${seconds}s per run (+${warmupSeconds}s warm-up), ${connections} connections, node ${process.version}, ${cpus().length} CPUs`);

    const upstreamUrl = await startMock('mock-upstream', mockEntry, { MOCK_UPSTREAM_API_KEY: UPSTREAM_KEY });
    log(`[bench] mock upstream: ${upstreamUrl}`);
    const directUrl = `${upstreamUrl}/chat/completions`;
    const directPre = await preflight(openAIChatRequest(directUrl, UPSTREAM_KEY, BENCH_MODEL, false));
    if (directPre) throw new Error(`mock upstream preflight failed: ${directPre}`);

    // The Anthropic mock only serves the translated scenarios: when it is unavailable, those fail, the rest runs.
    let anthropicUrl: string | undefined;
    try {
      const url = await startMock('mock-anthropic-upstream', anthropicMockEntry, { MOCK_ANTHROPIC_UPSTREAM_API_KEY: ANTHROPIC_UPSTREAM_KEY });
      log(`[bench] mock Anthropic upstream: ${url}`);
      for (const stream of [false, true]) {
        const pre = await preflight(anthropicMessagesRequest(`${url}/v1/messages`, ANTHROPIC_UPSTREAM_KEY, ANTHROPIC_UPSTREAM_MODEL, stream));
        if (pre !== null) throw new Error(`mock Anthropic upstream preflight (${stream ? 'streaming' : 'non-streaming'}) failed: ${pre}`);
      }
      anthropicUrl = url;
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      failures.push(`mock Anthropic upstream: ${msg}`);
      log(`[bench] mock Anthropic upstream unavailable: ${msg}`);
    }

    let gatewayUrl: string | undefined;
    let gatewayKey = '';
    /** the translated route (bench-claude) answered its preflight */
    let translationReady = false;
    if (!directOnly) {
      try {
        if (!existsSync(gatewayMain)) throw new Error(`gateway entry not found at ${gatewayMain} (run npm run build)`);
        const [port, consolePort] = [await freePort(), await freePort()];
        const adminToken = randomBytes(24).toString('hex');
        const env: NodeJS.ProcessEnv = {};
        for (const [k, v] of Object.entries(process.env)) {
          // keep the child away from real providers, shared state and config files of the caller
          if (/(_API_KEY|_BASE_URL|ADMIN_TOKEN|DATABASE_URL|REDIS_URL|GATEWAY_CONFIG|SMTP_URL)$/.test(k) || k === 'WORKERS') continue;
          env[k] = v;
        }
        Object.assign(env, {
          NODE_ENV: process.env.NODE_ENV ?? 'production',
          HOST: '127.0.0.1',
          PORT: String(port),
          CONSOLE_PORT: String(consolePort),
          DATABASE_URL: `sqlite:${join(workDir, 'bench.db')}`,
          ADMIN_TOKEN: adminToken,
          ...(process.env.BENCH_WORKERS ? { WORKERS: process.env.BENCH_WORKERS } : {}),
        });
        const gateway = startChild('gateway', [gatewayMain, 'serve'], { env, cwd: workDir, logPath: join(workDir, 'gateway.log'), stdinPipe: false });
        children.push(gateway);
        const base = `http://127.0.0.1:${port}`;
        await waitForStatus(`${base}/api/status`, gateway, options.gatewayStartTimeoutMs ?? 20_000).catch((err: Error) => {
          throw new Error(`${err.message}\n--- gateway log (tail) ---\n${logTail(gateway.logPath)}`);
        });
        log(`[bench] gateway: ${base} (log: ${gateway.logPath})`);
        const key = await configureGateway(base, adminToken, upstreamUrl);
        const url = `${base}/v1/chat/completions`;
        // The first routed call may warm caches; allow a few bounded attempts.
        const pre = await preflightRetrying(openAIChatRequest(url, key, BENCH_MODEL, false), 10);
        if (pre !== null) throw new Error(`gateway preflight (non-streaming) failed: ${pre}`);
        const preStream = await preflight(openAIChatRequest(url, key, BENCH_MODEL, true));
        if (preStream !== null) throw new Error(`gateway preflight (streaming) failed: ${preStream}`);
        gatewayUrl = url;
        gatewayKey = key;

        if (anthropicUrl !== undefined) {
          try {
            await configureTranslation(base, adminToken, anthropicUrl);
            const preT = await preflightRetrying(openAIChatRequest(url, key, BENCH_CLAUDE_MODEL, false), 5);
            if (preT !== null) throw new Error(`preflight (non-streaming) failed: ${preT}`);
            const preTStream = await preflight(openAIChatRequest(url, key, BENCH_CLAUDE_MODEL, true));
            if (preTStream !== null) throw new Error(`preflight (streaming) failed: ${preTStream}`);
            translationReady = true;
          } catch (err) {
            const msg = err instanceof Error ? err.message : String(err);
            failures.push(`gateway (${BENCH_CLAUDE_MODEL} on the anthropic channel): ${msg}`);
            log(`[bench] gateway translation unavailable: ${msg}`);
          }
        }
      } catch (err) {
        gatewayUrl = undefined;
        failures.push(`gateway: ${err instanceof Error ? err.message : String(err)}`);
        log(`[bench] gateway unavailable: ${err instanceof Error ? err.message : String(err)}`);
      }
    }

    /** What one side of a scenario sends, or why it cannot run (undefined: skipped on purpose, direct-only). */
    const specFor = (sc: ScenarioReport, side: 'direct' | 'gateway'): RequestSpec | string | undefined => {
      if (side === 'direct') {
        if (sc.upstream === 'openai') return openAIChatRequest(directUrl, UPSTREAM_KEY, BENCH_MODEL, sc.stream);
        if (anthropicUrl === undefined) return 'not run (mock Anthropic upstream unavailable)';
        return anthropicMessagesRequest(`${anthropicUrl}/v1/messages`, ANTHROPIC_UPSTREAM_KEY, ANTHROPIC_UPSTREAM_MODEL, sc.stream);
      }
      if (directOnly) return undefined;
      if (gatewayUrl === undefined) return 'not run';
      if (sc.upstream === 'openai') return openAIChatRequest(gatewayUrl, gatewayKey, BENCH_MODEL, sc.stream);
      if (!translationReady) return `not run (${BENCH_CLAUDE_MODEL} route unavailable)`;
      return openAIChatRequest(gatewayUrl, gatewayKey, BENCH_CLAUDE_MODEL, sc.stream);
    };

    for (const sc of scenarios) {
      for (const side of ['direct', 'gateway'] as const) {
        const spec = specFor(sc, side);
        if (spec === undefined) continue;
        if (typeof spec === 'string') {
          sc.failures.push(`${side}: ${spec}`);
          continue;
        }
        log(`[bench] ${sc.name} → ${side} …`);
        try {
          const r = await measure(spec, sc.connections, seconds, warmupSeconds);
          sc[side] = r;
          sc.failures.push(...checkSide(side, r));
        } catch (err) {
          sc.failures.push(`${side}: ${err instanceof Error ? err.message : String(err)}`);
        }
        await sleep(300);
      }
      if (sc.direct && sc.gateway) {
        sc.ratio = sc.direct.requestsPerSec > 0 ? sc.gateway.requestsPerSec / sc.direct.requestsPerSec : undefined;
        sc.addedP50Ms = sc.gateway.latencyP50Ms - sc.direct.latencyP50Ms;
        sc.addedP99Ms = sc.gateway.latencyP99Ms - sc.direct.latencyP99Ms;
      }
      failures.push(...sc.failures.map((f) => `${sc.name}: ${f}`));
    }
  } catch (err) {
    failures.push(err instanceof Error ? err.message : String(err));
  } finally {
    await Promise.all(children.map((c) => stopChild(c)));
    process.off('exit', killAllNow);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }

  const report: BenchReport = {
    ok: failures.length === 0,
    failures,
    startedAt,
    finishedAt: new Date().toISOString(),
    seconds,
    warmupSeconds,
    environment: {
      node: process.version,
      platform: `${process.platform}-${process.arch}`,
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? 'unknown',
      chunkDelayMs,
      gatewayWorkers: process.env.BENCH_WORKERS ?? 'default',
      loadAvg1mStart,
      loadAvg1mEnd: loadavg()[0] ?? 0,
    },
    scenarios,
  };

  log('');
  log(formatTable(scenarios));
  log('');
  if (report.environment.loadAvg1mStart > cpus().length * 0.5) {
    log(`[bench] note: load average was ${report.environment.loadAvg1mStart.toFixed(2)} on ${cpus().length} CPUs at start; figures are skewed by other work`);
  }
  try {
    writeFileSync(resultsPath, `${JSON.stringify(report, null, 2)}\n`);
    log(`[bench] results written to ${resultsPath}`);
  } catch (err) {
    log(`[bench] could not write ${resultsPath}: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (failures.length > 0) {
    log('[bench] FAILED:');
    for (const f of failures) log(`  - ${f}`);
    log(`[bench] child logs kept in ${workDir}`);
  } else {
    rmSync(workDir, { recursive: true, force: true });
  }
  return report;
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href;
if (invokedDirectly) {
  runBench()
    .then((report) => {
      process.exitCode = report.ok ? 0 : 1;
    })
    .catch((err: unknown) => {
      console.error(err instanceof Error ? err.stack : err);
      process.exitCode = 1;
    });
}
