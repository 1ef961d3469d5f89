/** The benchmark's options and report shapes. */
import type { CpuPinning } from './cpu-pinning.js';
import type { GuardrailsBenchResult } from './guardrails.js';
import type { LoopHolds } from './loop-holds.js';
import type { UpstreamProtocolResult } from './upstream-protocols.js';
import type { OpenLoopResult } from './open-loop.js';

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
  /** what sent the load: wrk (C) or autocannon (in-process Node, the fallback) */
  generator: 'wrk' | 'autocannon';
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
  /** CPU time (user + system) the measured process used per response, where the bench could read it (Linux /proc) */
  cpuMicrosPerRequest?: number;
  /** The Redis server's CPU time per response of the measured run (postgres+redis runs; the server's own INFO) */
  redisCpuMicrosPerRequest?: number;
  /** Redis commands per response, those run inside scripts included (INFO commandstats) */
  redisCommandsPerRequest?: number;
  /** PostgreSQL statements per response (postgres+redis runs; counted on the wire: bench/postgres-statement-counter.ts) */
  postgresStatementsPerRequest?: number;
  /** Redis commands the gateway sent per response, a script counting once (counted on the wire: test/support/redis-command-proxy.ts) */
  redisCommandsSentPerRequest?: number;
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
  /**
   * The agent-sized scenarios: Claude Code's recorded ~20 KB tool-loop request on every side (direct and bare: at
   * the mock Anthropic upstream). On the gateway, `pass-through` asks for a model on an anthropic channel (the
   * caller's body goes on as it came), `openai` and `gemini` for a model on such a channel (translated both ways).
   */
  agent?: 'pass-through' | 'openai' | 'gemini';
  direct?: SideResult;
  /** the same requests as `direct`, through the bare Node proxy (bench/bare-proxy.ts) in front of that upstream */
  bare?: SideResult;
  /**
   * the same requests through the floor proxy (bench/floor-proxy.ts: the least a metered gateway does) in front of
   * that upstream, with the floor's key; only where the gateway passes the request on in its own format (the
   * translated scenarios have none)
   */
  floor?: SideResult;
  gateway?: SideResult;
  /** gateway req/s ÷ direct req/s */
  ratio?: number;
  addedP50Ms?: number;
  addedP99Ms?: number;
  /** gateway req/s ÷ bare proxy req/s */
  bareRatio?: number;
  /** gateway latency minus the bare proxy's, p50 and p99 */
  overBareP50Ms?: number;
  overBareP99Ms?: number;
  /** gateway CPU per request ÷ the bare proxy's */
  cpuRatioToBare?: number;
  /** floor req/s ÷ bare proxy req/s, and gateway req/s ÷ floor req/s */
  floorBareRatio?: number;
  gatewayFloorRatio?: number;
  /** floor CPU per request ÷ the bare proxy's: what metering must cost at least */
  floorCpuRatioToBare?: number;
  /** gateway CPU per request ÷ the floor's: what the gateway spends beyond that */
  cpuRatioToFloor?: number;
  /** how long the gateway's event loop was held during its measured run (its own /metrics) */
  gatewayLoop?: LoopHolds;
  failures: string[];
}

/** Open-loop load at a multiple of the gateway's measured capacity. */
export interface OverloadReport extends OpenLoopResult {
  name: string;
  /** The gateway's own reading of the run (its /metrics): admitted and refused answers, count and p99 (bucket bound). */
  gatewaySide?: AdmissionReading;
  /** The gateway's closed-loop req/s this run measured. */
  capacityPerSec: number;
}

/** Many slow streams opened at once to one upstream, on one side. */
export interface SlowStreamsReport {
  side: 'direct' | 'bare' | 'gateway';
  streams: number;
  opened: number;
  completed: number;
  statusCodes: Record<string, number>;
  ttfbP50Ms?: number;
  ttfbP99Ms?: number;
  durationP99Ms?: number;
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
    /** the CPUs the gateway and bare proxies ran on and those of the load side; null when not pinned */
    pinning: CpuPinning | null;
  };
  /** what sent the closed-loop load: `wrk (N threads)` or `autocannon` (each side also names its own) */
  generator: string;
  scenarios: ScenarioReport[];
  overload: OverloadReport[];
  slowStreams: SlowStreamsReport[];
  /** HTTP/1.1 against HTTP/2 from the gateway's upstream client to a TLS upstream (opt-in) */
  upstreamProtocols: UpstreamProtocolResult[];
  storage: StorageComparison[];
  memory: MemoryReport[];
  /** in-process cost of the built-in guardrail detectors (bench/guardrails.ts) */
  guardrails?: GuardrailsBenchResult;
}

/** The same load through the SQLite gateway and through one on PostgreSQL + Redis, one after the other. */
export interface StorageComparison {
  name: string;
  connections: number;
  stream: boolean;
  sqlite?: SideResult;
  postgresRedis?: SideResult;
  /** postgres+redis req/s ÷ sqlite req/s */
  ratio?: number;
  failures: string[];
}


/** Memory of one process group (the gateway with its workers, or a bare proxy), summed over its processes. */
export interface MemoryFigures {
  processes: number;
  rssMiB: number;
  heapUsedMiB: number;
  /** after a full GC (absent where the probe could not run one) */
  rssAfterGcMiB?: number;
  heapUsedAfterGcMiB?: number;
  /** V8's heap as reserved from the OS, and memory outside it owned by JS objects (buffers, native addons) */
  heapTotalAfterGcMiB?: number;
  externalAfterGcMiB?: number;
  /** resident after the GC: anonymous pages (V8 heap, malloc) and file-backed ones (the Node binary, libraries) */
  anonAfterGcMiB?: number;
  fileAfterGcMiB?: number;
  /** V8's heap spaces after the GC: MiB each holds from the OS and uses */
  spacesAfterGcMiB?: Record<string, { committedMiB: number; usedMiB: number }>;
}

/** Memory read after a scenario (or the whole run) and a short idle. */
export interface MemoryReport {
  /** scenario name, or `whole run` */
  after: string;
  /** which gateway: `sqlite`, or `postgres+redis` */
  gateway: string;
  idleMs: number;
  gatewayMemory?: MemoryFigures;
  /** the bare proxy in front of the OpenAI mock (the yardstick) */
  bareMemory?: MemoryFigures;
}

/** Answers of the API listener during one run, read from the gateway's own admission-latency histogram. */
export interface AdmissionReading {
  admitted: number;
  admittedP99Ms: number | null;
  refused: number;
  refusedP99Ms: number | null;
  /** admitted 2xx answers per second of the run, as the gateway counted them */
  goodputPerSec: number | null;
}
