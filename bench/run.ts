/**
 * Gateway benchmark: the same load sent straight to a mock upstream and through the gateway,
 * in one run, so the table shows what the gateway adds.
 *
 *   npm run bench                      # builds, then node dist/bench/run.js
 *   BENCH_SECONDS=20 npm run bench     # longer measurement windows (default 8 s, plus 1 s warm-up each)
 *
 * Environment: BENCH_SECONDS, BENCH_WARMUP_SECONDS, BENCH_CONNECTIONS (default 32),
 * BENCH_CHUNK_DELAY_MS (mock pacing of streamed chunks, default 0), BENCH_WORKERS (passed to the
 * gateway as WORKERS), BENCH_DIRECT_ONLY=1 (skip the gateway: only measures the mock), BENCH_ONLY (a regular
 * expression: only the scenarios whose name matches run, e.g. for a CPU profile of one of them), BENCH_GENERATOR
 * (wrk, the default, installed from Debian when missing; or autocannon, the fallback), BENCH_WRK_THREADS (1),
 * BENCH_IDLE_MS (idle before each memory reading, default 2000; BENCH_FINAL_IDLE_MS before the last, 20000),
 * BENCH_FLOOR_FIELDS=scan (the floor proxy finds model and stream with a byte scan instead of JSON.parse of the body),
 * BENCH_HEAP_SNAPSHOT_DIR (a heap snapshot per reading), BENCH_PROFILE_DIR (a CPU profile of the gateway and of each floor proxy),
 * BENCH_ALLOCATION_PROFILE_DIR (what the gateway allocated, collected objects included: bench/allocation-sampler.ts),
 * BENCH_GATEWAY_NODE_ARGS (Node options for the gateway's process, space-separated, e.g. `--trace-gc`),
 * BENCH_PIN=1 (the gateway and the bare proxies on every CPU but the last; the bench, load generator and mocks on
 * the last: bench/cpu-pinning.ts).
 *
 * Scenarios run only when BENCH_ONLY names them (they take longer and load the machine more):
 * `overload 1.25x` and `overload 2x`: open-loop load (requests at a fixed rate, not waiting for answers) at that
 * multiple of the gateway's measured capacity (BENCH_OVERLOAD_CAPACITY req/s when set, so that runs compare; else
 * its `chat c=N` req/s from this run, or a short measurement), sent by
 * BENCH_OPEN_LOOP_PROCESSES (2) generator processes on at most BENCH_OPEN_LOOP_CONNECTIONS (1500) connections
 * together, reporting admitted p99 (also after the first two seconds, a cold process and its connection flood) and
 * the share answered 503 and its latency, second by second too, and whether the generator kept up, and the same run
 * as the gateway's own admission-latency histogram saw it (bench/admission-reading.ts);
 * `slow streams`: BENCH_STREAMS (1000) streams opened at once to one slow mock upstream (BENCH_SLOW_CHUNK_DELAY_MS, 200 ms between chunks), directly, through
 * the bare proxy and through the gateway, reporting how many opened and their time to first byte;
 * `postgres+redis chat c=N` and `postgres+redis stream c=N`: the same load through the SQLite gateway and through a
 * second one on a throw-away PostgreSQL database (made through BENCH_DATABASE_URL) and Redis (BENCH_REDIS_URL, a key
 * prefix of its own), reported as a ratio to the SQLite one, with the PostgreSQL statements and Redis commands the
 * second gateway sent per request, counted on the wire (BENCH_STATEMENT_TEXTS=1 also prints which statements and commands
 * they were); `upstream protocols`: the gateway's upstream client
 * (undici) against a TLS server that speaks HTTP/1.1 and HTTP/2, each protocol in turn (bench/upstream-protocols.ts).
 *
 * After each gateway run the gateway's own /metrics say how long its event loop was held: the delay p99 and max,
 * and on SQLite each batched write transaction's p99 by writer (bench/loop-holds.ts).
 *
 * The gateway's and the bare proxy's memory (RSS, heap used, both again after a GC) is read at start, after each
 * scenario and after the whole run (bench/memory-probe.ts); the PostgreSQL + Redis gateway's after its scenarios, with
 * the same BENCH_FINAL_IDLE_MS of quiet first, so that its after-the-run figure compares with the SQLite one.
 *
 * Scenarios: `chat c=1`, `chat c=N`, `stream c=N` (OpenAI format, mock OpenAI upstream, model bench-model)
 * and `translated chat c=1`, `translated stream c=N`: direct = Anthropic-format requests straight at the mock
 * Anthropic upstream (POST /v1/messages); gateway = OpenAI-format requests for bench-claude, whose channel is
 * that Anthropic upstream, so the ratio shows the cost of translating OpenAI → Anthropic → OpenAI.
 *
 * Agent-sized: `agent pass-through stream c=N`, `agent pass-through chat c=N`, `agent →openai stream c=N` and
 * `agent →gemini stream c=N` send Claude Code's recorded tool-loop request (bench/requests.ts) on every side: direct
 * and bare at the mock Anthropic upstream; the gateway passes it to an anthropic channel or translates it to an
 * openai or gemini channel (a mock Gemini upstream), and the answer back.
 *
 * Every scenario is also sent through a bare Node proxy (bench/bare-proxy.ts: node:http in, undici Pool out,
 * nothing else) in front of the same upstream, so each gateway figure is reported as a ratio to it as well.
 * Where the gateway passes the request on in its own format (`chat c=1`, `chat c=N`, `stream c=N`, `agent pass-through
 * stream c=N`, `agent pass-through chat c=N`), it is also sent through the floor proxy (bench/floor-proxy.ts: the least a
 * metered gateway does per request: key check, JSON.parse of the body, limit window, balance hold, usage found in the
 * answer, a usage row and a ledger entry in SQLite, an access-log line), so the table shows floor ÷ bare (what metering
 * must cost at least) and gateway ÷ floor (what the gateway spends beyond it). The translated scenarios have no floor.
 *
 * It starts child processes (the mock OpenAI and Anthropic upstreams from dist/test/mock-upstreams, a bare proxy
 * in front of each, and the gateway `node bin/unigate.js serve` (the operators' start path) on free 127.0.0.1 ports with a throw-away
 * SQLite database),
 * configures the gateway through the admin API as in the operator contract, runs the load generator, prints
 * a table, writes dist/bench-results.json, and stops the children (also on error and SIGINT).
 * `runBench()` is what the gateway's `bench` command calls; it resolves with `ok: false` rather than
 * throwing when a scenario could not run or more than 1% of its requests failed.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { formatGuardrails, measureGuardrails } from './guardrails.js';
import { MOCK_UPSTREAM_SERVER_ENTRY } from '../test/mock-upstreams/openai-upstream-server.js';
import { MOCK_ANTHROPIC_UPSTREAM_SERVER_ENTRY } from '../test/mock-upstreams/anthropic-upstream-server.js';
import { MOCK_GEMINI_UPSTREAM_SERVER_ENTRY } from '../test/mock-upstreams/gemini-upstream-server.js';
import { admissionBetween, readAdmission } from './admission-reading.js';
import type { BenchOptions, BenchReport, MemoryReport, OverloadReport, ScenarioReport, SideResult, SlowStreamsReport, StorageComparison } from './bench-types.js';
import { bareProxyArgs, envNumber, freePort, gatewayEnvironment, logTail, mockUpstreamArgs, signalGroup, sleep, startChild, stopChild, waitForLine, waitForStatus, type Child } from './child-processes.js';
import { configureGateway, configureGemini, configureSlowStreams, configureTranslation } from './configure-gateway.js';
import { openLoop, slowStreams } from './open-loop.js';
import { formatLoopHolds, formatUpstreamProtocols, formatMemory, formatOverload, formatOverloadGatewaySide, formatOverloadTimeline, formatSlowStreams, formatStorageComparison, formatTable } from './report.js';
import { loopHoldsBetween, readLoopHolds } from './loop-holds.js';
import { measureUpstreamProtocol, selfSignedCertificate, type UpstreamProtocolResult } from './upstream-protocols.js';
import { checkSide, chooseGenerator, measure, preflight, preflightRetrying } from './measure.js';
import { memoryProbeArgs, readMemory } from './memory.js';
import { describeWireTexts, startPostgresRedis, type PostgresRedis } from './postgres-redis.js';
import { groupCpuMs } from './process-cpu.js';
import { ensureDebianPackage } from '../test/support/debian-package.js';
import { JEMALLOC_PATH } from '../test/support/jemalloc.js';
import { pinProcess, planPinning } from './cpu-pinning.js';
import {
  ANTHROPIC_UPSTREAM_KEY,
  ANTHROPIC_UPSTREAM_MODEL,
  GEMINI_UPSTREAM_KEY,
  BENCH_CLAUDE_MODEL,
  BENCH_GEMINI_MODEL,
  BENCH_MODEL,
  BENCH_SLOW_MODEL,
  UPSTREAM_KEY,
  agentAnthropicRequest,
  agentRequestAvailable,
  anthropicMessagesRequest,
  openAIChatRequest,
  type RequestSpec,
} from './requests.js';

/** The one caller key the floor proxies accept (bench/floor-proxy.ts). */
const FLOOR_KEY = 'sk-floor-bench';

export type { BenchOptions, BenchReport, ScenarioReport, SideResult } from './bench-types.js';
export { formatTable } from './report.js';

/** The C allocator a running process is on, as its memory map shows it (Linux). */
function allocatorOf(pid: number | undefined): string {
  try {
    return pid !== undefined && readFileSync(`/proc/${pid}/maps`, 'utf8').includes('libjemalloc') ? 'jemalloc' : 'system malloc';
  } catch {
    return 'unknown';
  }
}

export async function runBench(options: BenchOptions = {}): Promise<BenchReport> {
  const log = options.log ?? ((line: string) => console.log(line));
  const seconds = options.seconds ?? envNumber('BENCH_SECONDS', 8);
  const warmupSeconds = options.warmupSeconds ?? envNumber('BENCH_WARMUP_SECONDS', 1);
  const connections = options.connections ?? envNumber('BENCH_CONNECTIONS', 32);
  const chunkDelayMs = options.chunkDelayMs ?? envNumber('BENCH_CHUNK_DELAY_MS', 0);
  const directOnly = options.directOnly ?? process.env.BENCH_DIRECT_ONLY === '1';
  const distDir = options.distDir ?? resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const resultsPath = options.resultsPath ?? join(distDir, 'bench-results.json');
  // The operators' start path (bin/unigate.js: the allocator it preloads included) when it runs this dist;
  // the bare entry for another build's tree.
  const startPath = resolve(distDir, '..', 'bin', 'unigate.js');
  const gatewayMain = existsSync(startPath) && resolve(dirname(startPath), '..', 'dist') === resolve(distDir) ? startPath : join(distDir, 'src', 'main.js');
  const mockEntry = options.distDir ? join(distDir, 'test', 'mock-upstreams', 'openai-upstream-server.js') : MOCK_UPSTREAM_SERVER_ENTRY;
  const anthropicMockEntry = options.distDir
    ? join(distDir, 'test', 'mock-upstreams', 'anthropic-upstream-server.js')
    : MOCK_ANTHROPIC_UPSTREAM_SERVER_ENTRY;
  const geminiMockEntry = options.distDir ? join(distDir, 'test', 'mock-upstreams', 'gemini-upstream-server.js') : MOCK_GEMINI_UPSTREAM_SERVER_ENTRY;
  const bareProxyEntry = join(distDir, 'bench', 'bare-proxy.js');
  const floorProxyEntry = join(distDir, 'bench', 'floor-proxy.js');
  const tlsServerEntry = join(distDir, 'bench', 'tls-answer-server.js');
  const probeArgs = memoryProbeArgs(join(distDir, 'bench', 'memory-probe.js'));
  const idleMs = envNumber('BENCH_IDLE_MS', 2000);
  // V8 hands its young generation back to the OS only once its memory reducer sees the process idle (10-20 s).
  const finalIdleMs = envNumber('BENCH_FINAL_IDLE_MS', 20_000);
  if (seconds <= 0) throw new Error('BENCH_SECONDS must be > 0');
  // The allocator `unigate serve` preloads where it is installed: the bench measures what operators run.
  if (process.platform === 'linux') ensureDebianPackage(JEMALLOC_PATH, 'libjemalloc2', 'bench');

  const startedAt = new Date().toISOString();
  const loadAvg1mStart = loadavg()[0] ?? 0;
  const failures: string[] = [];
  const overload: OverloadReport[] = [];
  const slowStreamReports: SlowStreamsReport[] = [];
  const memory: MemoryReport[] = [];
  const storage: StorageComparison[] = [];
  const upstreamProtocols: UpstreamProtocolResult[] = [];
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
    // Agent-sized: Claude Code's recorded tool-loop request (bench/requests.ts) on every side; direct and bare at the
    // mock Anthropic upstream, the gateway passing it through or translating it (and the answer) both ways.
    ...([
      ['agent pass-through stream', 'pass-through', true, 'the gateway passes it to an anthropic channel (Anthropic → Anthropic)'],
      ['agent pass-through chat', 'pass-through', false, 'the gateway passes it to an anthropic channel (Anthropic → Anthropic)'],
      ['agent →openai stream', 'openai', true, 'the gateway translates it to an openai channel and the answer back (Anthropic → OpenAI → Anthropic)'],
      ['agent →gemini stream', 'gemini', true, 'the gateway translates it to a gemini channel and the answer back (Anthropic → Gemini → Anthropic)'],
    ] as const).map(([name, agent, stream, how]): ScenarioReport => ({
      name: `${name} c=${connections}`,
      description: `Claude Code's recorded tool-loop request (~20 KB, 12 tools), ${stream ? 'streamed' : 'not streamed'}, ${connections} connections; direct and bare: at the mock Anthropic upstream; ${how}`,
      connections,
      stream,
      upstream: 'anthropic',
      agent,
      failures: [],
    })),
  ];
  const workDir = mkdtempSync(join(tmpdir(), 'gateway-bench-'));
  // The bench itself goes to the load side first: the load generator and the mocks it starts inherit its CPUs.
  let pinning = planPinning(cpus().length, process.env);
  if (pinning !== null && !pinProcess(process.pid, pinning.load)) pinning = null;
  const generator = chooseGenerator(workDir, log);
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
  const startMock = async (name: string, entry: string, env: NodeJS.ProcessEnv, chunkDelay = chunkDelayMs): Promise<string> => {
    if (!existsSync(entry)) throw new Error(`${name} entry not found at ${entry} (run npm run build)`);
    const child = startChild(name, mockUpstreamArgs(entry, chunkDelay), {
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

  /** CPU time readers of the bare proxies, by origin. */
  const bareCpuMs = new Map<string, () => number | undefined>();
  /** The bare proxies' processes, by origin (for their memory). */
  const bareChildren = new Map<string, Child>();
  /** Starts a yardstick proxy (`args` after the memory probe's) and resolves with its origin and its CPU time reader. */
  const startYardstick = async (name: string, args: string[]): Promise<{ origin: string; child: Child; cpuMs: (() => number | undefined) | undefined }> => {
    const child = startChild(name, [...probeArgs, ...args], {
      env: { ...process.env },
      cwd: workDir,
      logPath: join(workDir, `${name}.log`),
      stdinPipe: true,
    });
    children.push(child);
    const origin = await waitForLine(child, 'LISTENING ', 10_000).catch((err: Error) => {
      throw new Error(`${err.message}\n${logTail(child.logPath)}`);
    });
    const pid = child.proc.pid;
    if (pid !== undefined && pinning !== null) pinProcess(pid, pinning.proxies);
    return { origin, child, cpuMs: pid === undefined ? undefined : () => groupCpuMs(pid) };
  };
  /** Starts a bare proxy in front of `upstream` and resolves with its origin. */
  const startBare = async (name: string, upstream: string): Promise<string> => {
    if (!existsSync(bareProxyEntry)) throw new Error(`bare proxy entry not found at ${bareProxyEntry} (run npm run build)`);
    const { origin, child, cpuMs } = await startYardstick(name, bareProxyArgs(bareProxyEntry, upstream));
    if (cpuMs !== undefined) bareCpuMs.set(origin, cpuMs);
    bareChildren.set(origin, child);
    return origin;
  };
  /** CPU time readers of the floor proxies, by origin. */
  const floorCpuMs = new Map<string, () => number | undefined>();
  /**
   * Starts a floor proxy in front of `upstream` (which expects `upstreamKey`) and resolves with its origin; undefined
   * where this build has none (another build's tree compared by bench:compare).
   */
  const startFloor = async (name: string, upstream: string, upstreamKey: string): Promise<string | undefined> => {
    if (!existsSync(floorProxyEntry)) return undefined;
    const profile = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`, `--cpu-prof-name=${name}.${Date.now()}.cpuprofile`] : [];
    const { origin, cpuMs } = await startYardstick(name, [
      ...profile, floorProxyEntry, '--upstream', new URL(upstream).origin, '--upstream-key', upstreamKey, '--key', FLOOR_KEY, '--db', join(workDir, `${name}.db`),
      '--find-fields', process.env.BENCH_FLOOR_FIELDS === 'scan' ? 'scan' : 'parse', '--exit-on-stdin-close',
    ]);
    if (cpuMs !== undefined) floorCpuMs.set(origin, cpuMs);
    return origin;
  };
  /** The direct request sent to the floor proxy in front of the same upstream instead, with the floor's key. */
  const throughFloor = (spec: RequestSpec, floorOrigin: string): RequestSpec => {
    const headers = { ...spec.headers };
    if (headers.authorization !== undefined) headers.authorization = `Bearer ${FLOOR_KEY}`;
    if (headers['x-api-key'] !== undefined) headers['x-api-key'] = FLOOR_KEY;
    return { ...throughBare(spec, floorOrigin), headers };
  };
  /** The direct request sent to the bare proxy in front of the same upstream instead. */
  const throughBare = (spec: RequestSpec, bareOrigin: string): RequestSpec => {
    const url = new URL(spec.url);
    return { ...spec, url: `${bareOrigin}${url.pathname}${url.search}` };
  };

  /**
   * Starts a gateway on `storageEnv` (DATABASE_URL, and REDIS_* for the shared-state one), configures it through
   * the admin API for the OpenAI mock at `upstreamUrl`, and checks one plain and one streamed answer.
   */
  const startGateway = async (name: string, storageEnv: Record<string, string>, upstreamUrl: string): Promise<StartedGateway> => {
    if (!existsSync(gatewayMain)) throw new Error(`gateway entry not found at ${gatewayMain} (run npm run build)`);
    const [port, consolePort] = [await freePort(), await freePort()];
    const adminToken = randomBytes(24).toString('hex');
    const env = gatewayEnvironment({
      PORT: String(port),
      CONSOLE_PORT: String(consolePort),
      ADMIN_TOKEN: adminToken,
      // Every connection of the bench comes from 127.0.0.1: the per-address cap (1,000 by default) would refuse the
      // slow-streams scenario's last streams (its streams plus the bench's own connections) with 429.
      MAX_CONNECTIONS_PER_IP: String(envNumber('BENCH_STREAMS', 1000) + 1000),
      ...storageEnv,
      ...(process.env.BENCH_WORKERS ? { WORKERS: process.env.BENCH_WORKERS } : {}),
    });
    // BENCH_PROFILE_DIR: the gateway writes a V8 CPU profile there when it stops (for finding hot-path costs);
    // BENCH_ALLOCATION_PROFILE_DIR: a sampling heap profile of everything it allocated (bench/allocation-sampler.ts).
    const profile = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [];
    const allocationDir = process.env.BENCH_ALLOCATION_PROFILE_DIR;
    if (allocationDir) {
      mkdirSync(allocationDir, { recursive: true });
      profile.push('--import', new URL('./allocation-sampler.js', import.meta.url).href);
      env.UNIGATE_ALLOCATION_PROFILE_DIR = allocationDir;
    }
    const nodeArgs = (process.env.BENCH_GATEWAY_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');
    const child = startChild(name, [...profile, ...nodeArgs, ...probeArgs, gatewayMain, 'serve'], { env, cwd: workDir, logPath: join(workDir, `${name}.log`), stdinPipe: false });
    children.push(child);
    const base = `http://127.0.0.1:${port}`;
    await waitForStatus(`${base}/api/status`, child, options.gatewayStartTimeoutMs ?? 20_000).catch((err: Error) => {
      throw new Error(`${err.message}\n--- ${name} log (tail) ---\n${logTail(child.logPath)}`);
    });
    // Pinned once it is up: every thread it has is moved, and those it starts later inherit the CPUs.
    if (pinning !== null && child.proc.pid !== undefined) pinProcess(child.proc.pid, pinning.proxies);
    log(`[bench] ${name}: ${base} (log: ${child.logPath}; allocator: ${allocatorOf(child.proc.pid)})`);
    const key = await configureGateway(base, adminToken, upstreamUrl);
    const chatUrl = `${base}/v1/chat/completions`;
    // The first routed call may warm caches; allow a few bounded attempts.
    const pre = await preflightRetrying(openAIChatRequest(chatUrl, key, BENCH_MODEL, false), 10);
    if (pre !== null) throw new Error(`${name} preflight (non-streaming) failed: ${pre}`);
    // Retried too: on a loaded machine the gateway's admission control may refuse a request right after its start.
    const preStream = await preflightRetrying(openAIChatRequest(chatUrl, key, BENCH_MODEL, true), 10);
    if (preStream !== null) throw new Error(`${name} preflight (streaming) failed: ${preStream}`);
    const group = child.proc.pid;
    return { child, base, chatUrl, key, adminToken, cpuMs: group === undefined ? undefined : () => groupCpuMs(group) };
  };

  try {
    log(`[bench] ${seconds}s per run (+${warmupSeconds}s warm-up), ${connections} connections, node ${process.version}, ${cpus().length} CPUs`);
    if (pinning !== null) log(`[bench] gateway and bare proxies on CPU ${pinning.proxies}; the bench, load generator and mocks on CPU ${pinning.load}`);
    else if (process.env.BENCH_PIN === '1') log('[bench] BENCH_PIN=1 but not pinned (one CPU, several gateway workers, or taskset refused)');

    const upstreamUrl = await startMock('mock-upstream', mockEntry, { MOCK_UPSTREAM_API_KEY: UPSTREAM_KEY });
    log(`[bench] mock upstream: ${upstreamUrl}`);
    const directUrl = `${upstreamUrl}/chat/completions`;
    const directPre = await preflight(openAIChatRequest(directUrl, UPSTREAM_KEY, BENCH_MODEL, false));
    if (directPre) throw new Error(`mock upstream preflight failed: ${directPre}`);
    const bareOpenAI = await startBare('bare-proxy', upstreamUrl).catch((err: Error) => {
      failures.push(`bare proxy: ${err.message}`);
      return undefined;
    });
    let bareAnthropic: string | undefined;
    const floorFailed = (err: Error): undefined => {
      failures.push(`floor proxy: ${err.message}`);
      return undefined;
    };
    const floorOpenAI = directOnly ? undefined : await startFloor('floor-proxy', upstreamUrl, UPSTREAM_KEY).catch(floorFailed);
    let floorAnthropic: string | undefined;

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
      bareAnthropic = await startBare('bare-proxy-anthropic', url);
      if (!directOnly) floorAnthropic = await startFloor('floor-proxy-anthropic', url, ANTHROPIC_UPSTREAM_KEY).catch(floorFailed);
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      failures.push(`mock Anthropic upstream: ${msg}`);
      log(`[bench] mock Anthropic upstream unavailable: ${msg}`);
    }

    // The Gemini mock only serves the agent-sized scenario translated to Gemini.
    let geminiUrl: string | undefined;
    try {
      geminiUrl = await startMock('mock-gemini-upstream', geminiMockEntry, { MOCK_GEMINI_UPSTREAM_API_KEY: GEMINI_UPSTREAM_KEY });
      log(`[bench] mock Gemini upstream: ${geminiUrl}`);
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      failures.push(`mock Gemini upstream: ${msg}`);
      log(`[bench] mock Gemini upstream unavailable: ${msg}`);
    }

    let gateway: StartedGateway | undefined;
    /** the translated route (bench-claude) answered its preflight */
    let translationReady = false;
    /** the gemini route (bench-gemini) is configured */
    let geminiReady = false;
    if (!directOnly) {
      try {
        gateway = await startGateway('gateway', { DATABASE_URL: `sqlite:${join(workDir, 'bench.db')}` }, upstreamUrl);
        if (anthropicUrl !== undefined) {
          try {
            await configureTranslation(gateway.base, gateway.adminToken, anthropicUrl);
            const preT = await preflightRetrying(openAIChatRequest(gateway.chatUrl, gateway.key, BENCH_CLAUDE_MODEL, false), 5);
            if (preT !== null) throw new Error(`preflight (non-streaming) failed: ${preT}`);
            const preTStream = await preflightRetrying(openAIChatRequest(gateway.chatUrl, gateway.key, BENCH_CLAUDE_MODEL, true), 5);
            if (preTStream !== null) throw new Error(`preflight (streaming) failed: ${preTStream}`);
            translationReady = true;
            if (geminiUrl !== undefined) {
              await configureGemini(gateway.base, gateway.adminToken, geminiUrl);
              geminiReady = true;
            }
          } catch (err) {
            const msg = err instanceof Error ? err.message : String(err);
            failures.push(`gateway (${BENCH_CLAUDE_MODEL} on the anthropic channel): ${msg}`);
            log(`[bench] gateway translation unavailable: ${msg}`);
          }
        }
      } catch (err) {
        gateway = undefined;
        failures.push(`gateway: ${err instanceof Error ? err.message : String(err)}`);
        log(`[bench] gateway unavailable: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    const gatewayUrl = gateway?.chatUrl;
    const gatewayBase = gateway?.base;
    const gatewayKey = gateway?.key ?? '';
    const gatewayCpuMs = gateway?.cpuMs;

    /** After a short idle (and a GC in each process), the memory of `gateways` beside the bare proxy's. */
    const recordMemory = async (
      after: string,
      gateways: Array<{ label: string; started: StartedGateway | undefined }>,
      bareOrigin: string | undefined,
      idle = idleMs,
    ): Promise<void> => {
      await sleep(idle);
      const bare = bareOrigin === undefined ? undefined : bareChildren.get(bareOrigin);
      const bareMemory = bare === undefined ? undefined : await readMemory(bare);
      for (const { label, started } of gateways) {
        if (started === undefined) continue;
        const gatewayMemory = await readMemory(started.child);
        memory.push({ after, gateway: label, idleMs: idle, ...(gatewayMemory ? { gatewayMemory } : {}), ...(bareMemory ? { bareMemory } : {}) });
      }
    };

    /** What one side of a scenario sends, or why it cannot run (undefined: skipped on purpose, direct-only). */
    const specFor = (sc: ScenarioReport, side: 'direct' | 'bare' | 'floor' | 'gateway'): RequestSpec | string | undefined => {
      if (side === 'floor') {
        // Only where the gateway passes the request on in its own format: a translation has no floor to compare with.
        if (sc.upstream !== 'openai' && sc.agent !== 'pass-through') return undefined;
        const direct = specFor(sc, 'direct');
        const floorOrigin = sc.upstream === 'openai' ? floorOpenAI : floorAnthropic;
        if (typeof direct !== 'object' || floorOrigin === undefined) return undefined;
        return throughFloor(direct, floorOrigin);
      }
      if (side === 'bare') {
        const direct = specFor(sc, 'direct');
        const bareOrigin = sc.upstream === 'openai' ? bareOpenAI : bareAnthropic;
        if (typeof direct !== 'object') return direct;
        return bareOrigin === undefined ? 'not run (bare proxy unavailable)' : throughBare(direct, bareOrigin);
      }
      if (sc.agent !== undefined) {
        if (anthropicUrl === undefined) return 'not run (mock Anthropic upstream unavailable)';
        if (!agentRequestAvailable()) return 'not run (the recorded Claude Code request is not in this tree: test/e2e/agents/__fixtures__)';
        if (side === 'direct') return agentAnthropicRequest(`${anthropicUrl}/v1/messages`, ANTHROPIC_UPSTREAM_KEY, ANTHROPIC_UPSTREAM_MODEL, sc.stream);
        if (directOnly) return undefined;
        if (gatewayBase === undefined) return 'not run';
        if (sc.agent === 'pass-through' && !translationReady) return `not run (${BENCH_CLAUDE_MODEL} route unavailable)`;
        if (sc.agent === 'gemini' && !geminiReady) return `not run (${BENCH_GEMINI_MODEL} route unavailable)`;
        const model = sc.agent === 'pass-through' ? BENCH_CLAUDE_MODEL : sc.agent === 'gemini' ? BENCH_GEMINI_MODEL : BENCH_MODEL;
        return agentAnthropicRequest(`${gatewayBase}/v1/messages`, gatewayKey, model, sc.stream);
      }
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

    if (gateway !== undefined) await recordMemory('start (no load yet)', [{ label: 'sqlite', started: gateway }], bareOpenAI);
    const only = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY) : null;
    for (const sc of scenarios) {
      if (only !== null && !only.test(sc.name)) continue;
      for (const side of ['direct', 'bare', 'floor', 'gateway'] as const) {
        const spec = specFor(sc, side);
        if (spec === undefined) continue;
        if (typeof spec === 'string') {
          sc.failures.push(`${side}: ${spec}`);
          continue;
        }
        log(`[bench] ${sc.name} → ${side} …`);
        try {
          const cpuMs = side === 'gateway' ? gatewayCpuMs : side === 'bare' ? bareCpuMs.get(new URL(spec.url).origin) : side === 'floor' ? floorCpuMs.get(new URL(spec.url).origin) : undefined;
          const holdsBefore = side === 'gateway' && gateway !== undefined ? await readLoopHolds(gateway.base, gateway.adminToken) : null;
          const r = await measure(generator, spec, sc.connections, seconds, warmupSeconds, cpuMs);
          sc[side] = r;
          const holdsAfter = holdsBefore === null || gateway === undefined ? null : await readLoopHolds(gateway.base, gateway.adminToken);
          if (holdsBefore !== null && holdsAfter !== null) sc.gatewayLoop = loopHoldsBetween(holdsBefore, holdsAfter);
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
      if (sc.bare && sc.gateway) {
        sc.bareRatio = sc.bare.requestsPerSec > 0 ? sc.gateway.requestsPerSec / sc.bare.requestsPerSec : undefined;
        sc.overBareP50Ms = sc.gateway.latencyP50Ms - sc.bare.latencyP50Ms;
        sc.overBareP99Ms = sc.gateway.latencyP99Ms - sc.bare.latencyP99Ms;
        sc.cpuRatioToBare = sc.gateway.cpuMicrosPerRequest !== undefined && sc.bare.cpuMicrosPerRequest !== undefined && sc.bare.cpuMicrosPerRequest > 0
          ? sc.gateway.cpuMicrosPerRequest / sc.bare.cpuMicrosPerRequest
          : undefined;
      }
      const cpuRatio = (over: SideResult | undefined, under: SideResult | undefined): number | undefined =>
        over?.cpuMicrosPerRequest !== undefined && under?.cpuMicrosPerRequest !== undefined && under.cpuMicrosPerRequest > 0 ? over.cpuMicrosPerRequest / under.cpuMicrosPerRequest : undefined;
      const rateRatio = (over: SideResult | undefined, under: SideResult | undefined): number | undefined =>
        over !== undefined && under !== undefined && under.requestsPerSec > 0 ? over.requestsPerSec / under.requestsPerSec : undefined;
      sc.floorBareRatio = rateRatio(sc.floor, sc.bare);
      sc.gatewayFloorRatio = rateRatio(sc.gateway, sc.floor);
      sc.floorCpuRatioToBare = cpuRatio(sc.floor, sc.bare);
      sc.cpuRatioToFloor = cpuRatio(sc.gateway, sc.floor);
      failures.push(...sc.failures.map((f) => `${sc.name}: ${f}`));
      if (sc.gateway !== undefined) await recordMemory(sc.name, [{ label: 'sqlite', started: gateway }], bareOpenAI);
    }

    const gatewayChat = gatewayUrl === undefined ? undefined : openAIChatRequest(gatewayUrl, gatewayKey, BENCH_MODEL, false);
    const overloadRuns = [{ name: 'overload 1.25x', factor: 1.25 }, { name: 'overload 2x', factor: 2 }].filter((run) => only !== null && only.test(run.name));
    if (overloadRuns.length > 0 && gatewayChat !== undefined) {
      let capacity = process.env.BENCH_OVERLOAD_CAPACITY ? envNumber('BENCH_OVERLOAD_CAPACITY', 0) : scenarios.find((sc) => sc.name === `chat c=${connections}`)?.gateway?.requestsPerSec;
      if (capacity === undefined || capacity <= 0) {
        log(`[bench] capacity: chat c=${connections} → gateway for ${Math.max(2, seconds / 2)} s …`);
        capacity = (await measure(generator, gatewayChat, connections, Math.max(2, seconds / 2), warmupSeconds)).requestsPerSec;
      }
      for (const run of overloadRuns) {
        const rate = Math.max(1, Math.round(capacity * run.factor));
        log(`[bench] ${run.name}: ${rate} req/s open loop → gateway …`);
        const admissionBefore = gateway === undefined ? null : await readAdmission(gateway.base, gateway.adminToken);
        const result = await openLoop(gatewayChat, rate, seconds, {
          processes: envNumber('BENCH_OPEN_LOOP_PROCESSES', 2),
          maxConnections: envNumber('BENCH_OPEN_LOOP_CONNECTIONS', 1500),
          timeoutMs: 10_000,
          workDir,
          generatorEntry: join(distDir, 'bench', 'open-loop-generator.js'),
        });
        const admissionAfter = gateway === undefined ? null : await readAdmission(gateway.base, gateway.adminToken);
        const gatewaySide = admissionBefore !== null && admissionAfter !== null ? admissionBetween(admissionBefore, admissionAfter, seconds) : undefined;
        overload.push({ name: run.name, capacityPerSec: capacity, ...result, ...(gatewaySide ? { gatewaySide } : {}) });
        if (result.admitted === 0) failures.push(`${run.name}: no request admitted`);
        await sleep(1500);
        await recordMemory(run.name, [{ label: 'sqlite', started: gateway }], bareOpenAI);
      }
    }

    if (only !== null && only.test('slow streams')) {
      const streams = envNumber('BENCH_STREAMS', 1000);
      const slowUrl = await startMock('mock-slow-upstream', mockEntry, { MOCK_UPSTREAM_API_KEY: UPSTREAM_KEY }, envNumber('BENCH_SLOW_CHUNK_DELAY_MS', 200));
      const slowBare = await startBare('bare-proxy-slow', slowUrl);
      const sides: Array<{ side: SlowStreamsReport['side']; spec: RequestSpec }> = [
        { side: 'direct', spec: openAIChatRequest(`${slowUrl}/chat/completions`, UPSTREAM_KEY, BENCH_MODEL, true) },
        { side: 'bare', spec: throughBare(openAIChatRequest(`${slowUrl}/chat/completions`, UPSTREAM_KEY, BENCH_MODEL, true), slowBare) },
      ];
      if (gateway !== undefined && gatewayUrl !== undefined) {
        await configureSlowStreams(gateway.base, gateway.adminToken, slowUrl);
        const spec = openAIChatRequest(gatewayUrl, gatewayKey, BENCH_SLOW_MODEL, true);
        const pre = await preflightRetrying(spec, 10);
        if (pre === null) sides.push({ side: 'gateway', spec });
        else failures.push(`slow streams (gateway): preflight failed: ${pre}`);
      }
      for (const { side, spec } of sides) {
        log(`[bench] slow streams: ${streams} at once → ${side} …`);
        const result = await slowStreams(spec, streams);
        slowStreamReports.push({ side, ...result });
        if (result.opened < streams) failures.push(`slow streams (${side}): ${result.opened} of ${streams} opened`);
        await sleep(1000);
      }
      await recordMemory('slow streams', [{ label: 'sqlite', started: gateway }], slowBare);
    }

    if (only !== null && only.test('upstream protocols')) {
      const certificate = selfSignedCertificate(workDir);
      if (certificate === null) failures.push('upstream protocols: openssl is needed for the TLS upstream\'s certificate');
      else {
        const server = startChild('tls-answer-server', [tlsServerEntry, '--key', certificate.key, '--cert', certificate.cert, '--exit-on-stdin-close'], {
          env: { ...process.env }, cwd: workDir, logPath: join(workDir, 'tls-answer-server.log'), stdinPipe: true,
        });
        children.push(server);
        const origin = await waitForLine(server, 'LISTENING ', 10_000);
        // Interleaved, twice each: the machine's noise hits both protocols alike.
        for (const protocol of ['http/1.1', 'h2', 'http/1.1', 'h2'] as const) {
          log(`[bench] upstream protocols: ${protocol} …`);
          upstreamProtocols.push(await measureUpstreamProtocol(protocol, origin, certificate.cert, { seconds: Math.max(2, seconds / 2), concurrency: connections }));
        }
      }
    }

    const storageRuns = [false, true]
      .map((stream) => ({ name: `postgres+redis ${stream ? 'stream' : 'chat'} c=${connections}`, stream }))
      .filter((run) => only !== null && only.test(run.name));
    if (storageRuns.length > 0 && gateway !== undefined) {
      const showTexts = process.env.BENCH_STATEMENT_TEXTS === '1';
      let shared: PostgresRedis | undefined;
      let sharedGateway: StartedGateway | undefined;
      try {
        shared = await startPostgresRedis();
        sharedGateway = await startGateway('gateway-postgres-redis', shared.env, upstreamUrl);
        for (const run of storageRuns) {
          const comparison: StorageComparison = { name: run.name, connections, stream: run.stream, failures: [] };
          for (const [side, started] of [['sqlite', gateway], ['postgresRedis', sharedGateway]] as const) {
            log(`[bench] ${run.name} → ${side} gateway …`);
            try {
              const redisLoad = side === 'postgresRedis' ? shared.redisLoad : undefined;
              const wireCounts = side === 'postgresRedis' ? shared.wireCounts : undefined;
              const textsBefore = side === 'postgresRedis' && showTexts ? shared.wireTexts() : undefined;
              const result = await measure(generator, openAIChatRequest(started.chatUrl, started.key, BENCH_MODEL, run.stream), connections, seconds, warmupSeconds, started.cpuMs, redisLoad, wireCounts);
              if (textsBefore !== undefined) {
                // Warm-up included: the texts show what requests cause, the per-request figures above are the measured ones.
                const textsAfter = shared.wireTexts();
                const requests = Math.round(result.requestsPerSec * (seconds + warmupSeconds));
                log(`[bench] ${run.name}: PostgreSQL statements by text (warm-up included, ~${requests} requests)`);
                for (const line of describeWireTexts(textsBefore.statements, textsAfter.statements, requests)) log(line);
                log(`[bench] ${run.name}: Redis commands by name`);
                for (const line of describeWireTexts(textsBefore.redisCommands, textsAfter.redisCommands, requests)) log(line);
              }
              comparison[side] = result;
              comparison.failures.push(...checkSide(side, result));
            } catch (err) {
              comparison.failures.push(`${side}: ${err instanceof Error ? err.message : String(err)}`);
            }
            await sleep(300);
          }
          if (comparison.sqlite && comparison.postgresRedis && comparison.sqlite.requestsPerSec > 0) {
            comparison.ratio = comparison.postgresRedis.requestsPerSec / comparison.sqlite.requestsPerSec;
          }
          storage.push(comparison);
          failures.push(...comparison.failures.map((f) => `${run.name}: ${f}`));
          await recordMemory(run.name, [{ label: 'sqlite', started: gateway }, { label: 'postgres+redis', started: sharedGateway }], bareOpenAI);
        }
        // Its after-the-run figure is read after the same quiet as the SQLite gateway's, before it is stopped: the
        // readings after each scenario come after BENCH_IDLE_MS only, while the young generation load grew is still
        // held (the gateway gives it back after MEMORY_RELIEF_IDLE_SECONDS of quiet).
        await recordMemory('postgres+redis run', [{ label: 'postgres+redis', started: sharedGateway }], bareOpenAI, finalIdleMs);
      } catch (err) {
        failures.push(`postgres+redis: ${err instanceof Error ? err.message : String(err)}`);
        log(`[bench] postgres+redis gateway unavailable: ${err instanceof Error ? err.message : String(err)}`);
      } finally {
        if (sharedGateway !== undefined) await stopChild(sharedGateway.child);
        await shared?.remove().catch((err: Error) => failures.push(`postgres+redis clean-up: ${err.message}`));
      }
    }

    if (gateway !== undefined) await recordMemory('whole run', [{ label: 'sqlite', started: gateway }], bareOpenAI, finalIdleMs);
  } catch (err) {
    failures.push(err instanceof Error ? err.message : String(err));
  } finally {
    await Promise.all(children.map((c) => stopChild(c)));
    process.off('exit', killAllNow);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }

  // in-process, after the load scenarios: the bench process is idle by now
  const guardrails = measureGuardrails();
  if (!guardrails.withinBudget) failures.push('guardrails: a built-in detector case is over its p50 budget (bench/guardrails.ts)');
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
      pinning,
    },
    generator: generator.kind === 'wrk' ? `wrk (${generator.threads} thread${generator.threads === 1 ? '' : 's'})` : 'autocannon',
    scenarios,
    overload,
    slowStreams: slowStreamReports,
    upstreamProtocols,
    storage,
    memory,
    guardrails,
  };

  log('');
  log(formatTable(scenarios));
  log('');
  const sections = [
    overload.length > 0 ? formatOverload(overload) : '',
    overload.some((run) => run.gatewaySide !== undefined) ? formatOverloadGatewaySide(overload) : '',
    overload.length > 0 ? formatOverloadTimeline(overload) : '',
    slowStreamReports.length > 0 ? formatSlowStreams(slowStreamReports) : '',
    upstreamProtocols.length > 0 ? formatUpstreamProtocols(upstreamProtocols) : '',
    storage.length > 0 ? formatStorageComparison(storage) : '',
    scenarios.some((sc) => sc.gatewayLoop !== undefined) ? formatLoopHolds(scenarios) : '',
    memory.length > 0 ? formatMemory(memory) : '',
    formatGuardrails(guardrails),
  ];
  for (const section of sections.filter((text) => text !== '')) {
    log(section);
    log('');
  }
  log(`[bench] closed-loop load generator: ${report.generator}`);
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

/** A gateway the bench started and configured. */
interface StartedGateway {
  child: Child;
  base: string;
  chatUrl: string;
  key: string;
  adminToken: string;
  cpuMs?: () => number | undefined;
}

/**
 * wrk unless BENCH_GENERATOR=autocannon, or wrk is missing and cannot be installed (then autocannon, said so).
 * BENCH_WRK_THREADS: wrk's threads (default 1: one C thread outruns a Node server, and leaves the second CPU to it).
 */
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
