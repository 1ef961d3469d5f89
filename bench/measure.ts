/** One side of a scenario measured with wrk, or with autocannon (exact per-request latencies) where wrk is missing. */
import { createRequire } from 'node:module';
import { type RequestSpec } from './requests.js';
import { type SideResult } from './bench-types.js';
import type { RedisLoad } from './postgres-redis.js';
import { envNumber, sleep } from './child-processes.js';
import { ensureWrk, runWrk, wrkSideResult } from './wrk.js';

/** What sends the closed-loop load: wrk with this many threads (its script written to `scriptDir`), or autocannon. */
export type LoadGenerator = { kind: 'wrk'; threads: number; scriptDir: string } | { kind: 'autocannon' };

/** wrk (`BENCH_WRK_THREADS` threads, installed when missing) unless `BENCH_GENERATOR=autocannon` or wrk cannot be had. */
export function chooseGenerator(scriptDir: string, log: (line: string) => void): LoadGenerator {
  const wanted = process.env.BENCH_GENERATOR ?? 'wrk';
  if (wanted !== 'wrk' && wanted !== 'autocannon') throw new Error(`BENCH_GENERATOR must be wrk or autocannon, got ${wanted}`);
  if (wanted === 'autocannon') return { kind: 'autocannon' };
  if (ensureWrk()) return { kind: 'wrk', threads: Math.max(1, Math.floor(envNumber('BENCH_WRK_THREADS', 1))), scriptDir };
  log('[bench] wrk is missing and could not be installed: autocannon (in-process, slower) sends the load instead');
  return { kind: 'autocannon' };
}

// ---------------------------------------------------------------- autocannon (CommonJS, no types shipped)

export interface Histogram {
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
export interface AutocannonResult {
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
export interface AutocannonOptions {
  url: string;
  method: 'POST' | 'GET';
  headers: Record<string, string>;
  body?: string;
  connections: number;
  duration: number;
  timeout: number;
  verifyBody?: (body: string) => boolean;
}
export interface AutocannonInstance extends PromiseLike<AutocannonResult> {
  stop(): void;
  /** per response: status code, bytes, latency in ms with sub-millisecond precision */
  on(event: 'response', listener: (client: unknown, statusCode: number, bytes: number, ms: number) => void): this;
}
export type Autocannon = (opts: AutocannonOptions) => AutocannonInstance;
export const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;



/** One request outside the load, to fail early with a readable message. */
export async function preflight(spec: RequestSpec): Promise<string | null> {
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
export async function preflightRetrying(spec: RequestSpec, attempts: number): Promise<string | null> {
  let pre: string | null = 'not tried';
  for (let attempt = 0; attempt < attempts && pre !== null; attempt++) {
    pre = await preflight(spec);
    if (pre !== null && attempt < attempts - 1) await sleep(500);
  }
  return pre;
}

/** A side whose non-2xx, error and mismatch share is above this fails the bench. */
export const MAX_ERROR_RATE = 0.01;

export const MAX_LATENCY_SAMPLES = 5_000_000;

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: number[], q: number): number | undefined {
  if (sorted.length === 0) return undefined;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/** The middle value, or the mean of the two middle ones; NaN for none. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/**
 * One measured run after a warm-up. `cpuMs`, when given, reads the CPU time of the process under test; the
 * result then carries its CPU time per response of the measured run. `redisLoad` does the same for the Redis
 * server behind it: its CPU time and commands per response; `wireCounts` reads the PostgreSQL statements and Redis commands the gateway sent.
 */
export async function measure(
  generator: LoadGenerator,
  spec: RequestSpec,
  connections: number,
  seconds: number,
  warmupSeconds: number,
  cpuMs?: () => number | undefined,
  redisLoad?: () => Promise<RedisLoad | null>,
  wireCounts?: () => WireCounts,
): Promise<SideResult> {
  if (generator.kind === 'autocannon') return measureWithAutocannon(spec, connections, seconds, warmupSeconds, cpuMs, redisLoad, wireCounts);
  const options = { connections, threads: generator.threads, scriptDir: generator.scriptDir };
  if (warmupSeconds > 0) await runWrk(spec, { ...options, seconds: warmupSeconds });
  const redisBefore = await redisLoad?.();
  const wireBefore = wireCounts?.();
  const cpuBefore = cpuMs?.();
  const summary = await runWrk(spec, { ...options, seconds });
  const cpuAfter = cpuMs?.();
  const wireAfter = wireCounts?.();
  const redisAfter = await redisLoad?.();
  return {
    ...wrkSideResult(spec.url, summary),
    ...cpuPerResponse(cpuBefore, cpuAfter, summary.requests),
    ...redisPerResponse(redisBefore, redisAfter, summary.requests),
    ...wirePerResponse(wireBefore, wireAfter, summary.requests),
  };
}

/** The Redis server's CPU and commands between two readings, per response (nothing when either reading is missing). */
export function redisPerResponse(before: RedisLoad | null | undefined, after: RedisLoad | null | undefined, responses: number): Pick<SideResult, 'redisCpuMicrosPerRequest' | 'redisCommandsPerRequest'> {
  if (before == null || after == null || responses <= 0) return {};
  return {
    redisCpuMicrosPerRequest: ((after.cpuSeconds - before.cpuSeconds) * 1e6) / responses,
    // The first reading's own INFO counts between the two readings; it is not the gateway's.
    redisCommandsPerRequest: Math.max(0, after.commands - before.commands - 1) / responses,
  };
}

/** What the gateway sent its PostgreSQL and its Redis so far, counted on the wire by relays in front of them. */
export interface WireCounts {
  postgresStatements: number;
  /** commands as the client sent them: a script (EVALSHA) is one, whatever it runs inside */
  redisCommandsSent: number;
}

/** Statements and commands between two counts, per response (nothing without the counting relays). */
function wirePerResponse(before: WireCounts | undefined, after: WireCounts | undefined, responses: number): Pick<SideResult, 'postgresStatementsPerRequest' | 'redisCommandsSentPerRequest'> {
  if (before === undefined || after === undefined || responses <= 0) return {};
  return {
    postgresStatementsPerRequest: (after.postgresStatements - before.postgresStatements) / responses,
    redisCommandsSentPerRequest: (after.redisCommandsSent - before.redisCommandsSent) / responses,
  };
}

function cpuPerResponse(before: number | undefined, after: number | undefined, responses: number): { cpuMicrosPerRequest?: number } {
  return before !== undefined && after !== undefined && responses > 0 ? { cpuMicrosPerRequest: ((after - before) * 1000) / responses } : {};
}

async function measureWithAutocannon(
  spec: RequestSpec,
  connections: number,
  seconds: number,
  warmupSeconds: number,
  cpuMs?: () => number | undefined,
  redisLoad?: () => Promise<RedisLoad | null>,
  wireCounts?: () => WireCounts,
): Promise<SideResult> {
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
  const redisBefore = await redisLoad?.();
  const wireBefore = wireCounts?.();
  const cpuBefore = cpuMs?.();
  const instance = autocannon(opts);
  instance.on('response', (_client, statusCode, _bytes, ms) => {
    if (statusCode >= 200 && statusCode < 300 && latencies.length < MAX_LATENCY_SAMPLES) latencies.push(ms);
  });
  const r = await instance;
  const cpuAfter = cpuMs?.();
  const wireAfter = wireCounts?.();
  const redisAfter = await redisLoad?.();
  latencies.sort((a, b) => a - b);
  const statusCodes: Record<string, number> = {};
  for (const [code, v] of Object.entries(r.statusCodeStats ?? {})) statusCodes[code] = v.count;
  const responses = r.requests.total;
  const attempts = responses + r.errors;
  const bad = r.non2xx + r.errors + r.mismatches;
  return {
    url: spec.url,
    generator: 'autocannon',
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
    ...cpuPerResponse(cpuBefore, cpuAfter, responses),
    ...redisPerResponse(redisBefore, redisAfter, responses),
    ...wirePerResponse(wireBefore, wireAfter, responses),
  };
}

export function checkSide(label: string, s: SideResult): string[] {
  const out: string[] = [];
  if (s.ok2xx === 0) out.push(`${label}: no successful response`);
  if (s.errorRate > MAX_ERROR_RATE) {
    out.push(
      `${label}: ${(s.errorRate * 100).toFixed(2)}% failed (non-2xx ${s.non2xx} ${JSON.stringify(s.statusCodes)}, connection errors ${s.errors}, timeouts ${s.timeouts}, bad bodies ${s.mismatches})`,
    );
  }
  return out;
}

