/**
 * Compares the gateway's CPU per request across builds (or settings) on a machine whose speed drifts: every build runs at once
 * (its own process and SQLite file, one mock upstream and one bare proxy for all), and the load visits them in short
 * bursts, in a fresh random order each cycle, so each cycle's bursts meet the same machine. A build's figure is
 * the median over cycles of its burst's CPU per request divided by the first build's (or the bare proxy's) in the
 * same cycle. Each measured burst follows an unmeasured second of the same load: a gateway idle through the
 * others' bursts has had its heap shrunk by V8, and its first second back costs more than the rest.
 *
 *   npm run build && node dist/bench/compare-builds.js before=/tmp/before/dist after=dist
 *   node dist/bench/compare-builds.js logged=dist quiet=dist +ACCESS_LOG=off
 *
 * Each argument is a built tree (`dist` of a checkout, e.g. a `git worktree` of another commit, built with
 * `npx tsc -p tsconfig.build.json`), optionally named `name=path`, and may be followed by `+KEY=VALUE` arguments:
 * environment settings of that build's gateway only. Environment: COMPARE_CYCLES (10),
 * COMPARE_SECONDS (3 per burst), COMPARE_WARMUP_SECONDS (1 before each burst), BENCH_CONNECTIONS (32), BENCH_PIN=1 (bench/cpu-pinning.ts),
 * COMPARE_LOAD (what is sent, `chat` by default: non-streaming chat completions, as the bench's `chat c=N`; or one of
 * the bench's agent-sized scenarios, Claude Code's recorded tool-loop request: `agent-pass-through-stream`,
 * `agent-pass-through-chat`, `agent-openai-stream`, `agent-gemini-stream`, the bare proxy then in front of the mock
 * Anthropic upstream). The load is sent by the bench's generator (wrk; BENCH_GENERATOR, BENCH_WRK_THREADS); results
 * also go to dist/compare-results.json.
 *
 * COMPARE_LOAD=slow-streams compares time to first byte instead: each burst opens BENCH_STREAMS (1,000) streams at
 * once, as the bench's `slow streams` does, to a mock that waits BENCH_SLOW_CHUNK_DELAY_MS (200 ms) between chunks;
 * a side's figure is its burst's TTFB p99 (paired ÷ the bare proxy's and ÷ the first build's, cycle by cycle), with
 * how many opened and the gateway's CPU per stream beside it.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bareProxyArgs, envNumber, freePort, gatewayEnvironment, logTail, mockUpstreamArgs, startChild, stopChild, waitForLine, waitForStatus, type Child } from './child-processes.js';
import { configureGateway, configureGemini, configureTranslation } from './configure-gateway.js';
import { pinProcess, planPinning } from './cpu-pinning.js';
import { checkSide, chooseGenerator, measure, median } from './measure.js';
import { groupCpuMs } from './process-cpu.js';
import { slowStreams } from './open-loop.js';
import {
  agentAnthropicRequest,
  ANTHROPIC_UPSTREAM_KEY,
  ANTHROPIC_UPSTREAM_MODEL,
  BENCH_CLAUDE_MODEL,
  BENCH_GEMINI_MODEL,
  BENCH_MODEL,
  GEMINI_UPSTREAM_KEY,
  openAIChatRequest,
  UPSTREAM_KEY,
  type RequestSpec,
} from './requests.js';

/** The loads COMPARE_LOAD names: the agent-sized ones send the recorded Claude Code request for this model, streamed or not. */
const AGENT_LOADS: Readonly<Record<string, { model: string; stream: boolean }>> = {
  'agent-pass-through-stream': { model: BENCH_CLAUDE_MODEL, stream: true },
  'agent-pass-through-chat': { model: BENCH_CLAUDE_MODEL, stream: false },
  'agent-openai-stream': { model: BENCH_MODEL, stream: true },
  'agent-gemini-stream': { model: BENCH_GEMINI_MODEL, stream: true },
};

export interface Build {
  name: string;
  /** The built tree: its `src/main.js` is the gateway. */
  dist: string;
  /** Environment settings of this build's gateway alone. */
  env: Record<string, string>;
}

/**
 * `name=path` or `path` (named after the directory holding it, e.g. the checkout of `…/checkout/dist`), each
 * followed by any number of `+KEY=VALUE` settings for it.
 */
export function parseBuilds(args: readonly string[]): Build[] {
  const builds: Build[] = [];
  for (const arg of args) {
    const at = arg.indexOf('=');
    if (arg.startsWith('+')) {
      const build = builds.at(-1);
      if (build === undefined || at < 2) throw new Error(`${arg}: a setting is +KEY=VALUE after the build it applies to`);
      build.env[arg.slice(1, at)] = arg.slice(at + 1);
      continue;
    }
    const dist = resolve(at < 0 ? arg : arg.slice(at + 1));
    builds.push({ name: at < 0 ? basename(dirname(dist)) : arg.slice(0, at), dist, env: {} });
  }
  const names = new Set(builds.map((build) => build.name));
  if (builds.length === 0) throw new Error('name at least one built tree to compare, e.g. before=/tmp/before/dist after=dist');
  if (names.size !== builds.length) throw new Error('two builds have the same name: name them, e.g. a=dist b=/tmp/b/dist');
  if (names.has('bare')) throw new Error('"bare" names the bare proxy: give the build another name');
  return builds;
}

/** One side's bursts, in cycle order: CPU µs per request and requests per second. */
export interface SideBursts {
  name: string;
  cpuMicrosPerRequest: number[];
  requestsPerSec: number[];
}

export interface SideSummary {
  name: string;
  /** The median burst. */
  cpuMicrosPerRequest: number;
  minCpuMicrosPerRequest: number;
  maxCpuMicrosPerRequest: number;
  requestsPerSec: number;
  /** Median over cycles of this side's CPU per request ÷ the bare proxy's in the same cycle. */
  toBare: number | null;
  /** Median over cycles of this side's CPU per request ÷ the first build's in the same cycle. */
  toFirstBuild: number | null;
}

/** Each side against the bare proxy (`bare`, when measured) and against `first`, paired cycle by cycle. */
export function summarize(sides: readonly SideBursts[], first: string): SideSummary[] {
  const bare = sides.find((side) => side.name === 'bare');
  const firstBuild = sides.find((side) => side.name === first);
  const paired = (side: SideBursts, base: SideBursts | undefined): number | null =>
    base === undefined || base === side ? null : median(side.cpuMicrosPerRequest.map((cpu, cycle) => cpu / (base.cpuMicrosPerRequest[cycle] as number)));
  return sides.map((side) => ({
    name: side.name,
    cpuMicrosPerRequest: median(side.cpuMicrosPerRequest),
    minCpuMicrosPerRequest: Math.min(...side.cpuMicrosPerRequest),
    maxCpuMicrosPerRequest: Math.max(...side.cpuMicrosPerRequest),
    requestsPerSec: median(side.requestsPerSec),
    toBare: paired(side, bare),
    toFirstBuild: paired(side, firstBuild),
  }));
}

export function formatSummary(summaries: readonly SideSummary[], first: string): string {
  const header = ['side', 'CPU µs/req (median burst)', 'min–max', 'req/s', '÷ bare (paired)', `÷ ${first} (paired)`];
  const rows = summaries.map((s) => [
    s.name,
    s.cpuMicrosPerRequest.toFixed(1),
    `${s.minCpuMicrosPerRequest.toFixed(0)}–${s.maxCpuMicrosPerRequest.toFixed(0)}`,
    s.requestsPerSec.toFixed(0),
    s.toBare === null ? '–' : s.toBare.toFixed(3),
    s.toFirstBuild === null ? '–' : s.toFirstBuild.toFixed(3),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] as string).length)));
  return [header, widths.map((width) => '-'.repeat(width)), ...rows].map((row) => row.map((cell, column) => cell.padEnd(widths[column] as number)).join('  ')).join('\n');
}

interface Side {
  name: string;
  child: Child;
  spec: RequestSpec;
  bursts: SideBursts;
}

async function main(): Promise<void> {
  const builds = parseBuilds(process.argv.slice(2));
  const cycles = envNumber('COMPARE_CYCLES', 10);
  const seconds = envNumber('COMPARE_SECONDS', 3);
  const warmupSeconds = envNumber('COMPARE_WARMUP_SECONDS', 1);
  const connections = envNumber('BENCH_CONNECTIONS', 32);
  const ownDist = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  for (const build of builds) if (!existsSync(join(build.dist, 'src', 'main.js'))) throw new Error(`${build.name}: no ${join(build.dist, 'src', 'main.js')} (build it first)`);
  const workDir = mkdtempSync(join(tmpdir(), 'compare-builds-'));
  const generator = chooseGenerator(workDir, (line) => console.log(line));
  let pinning = planPinning(cpus().length, process.env);
  if (pinning !== null && !pinProcess(process.pid, pinning.load)) pinning = null;
  const children: Child[] = [];
  const start = (name: string, args: string[], env: NodeJS.ProcessEnv, stdinPipe: boolean): Child => {
    const child = startChild(name, args, { env, cwd: workDir, logPath: join(workDir, `${name}.log`), stdinPipe });
    children.push(child);
    return child;
  };
  try {
    const load = process.env.COMPARE_LOAD ?? 'chat';
    const agent = AGENT_LOADS[load];
    const slow = load === 'slow-streams';
    if (load !== 'chat' && !slow && agent === undefined) throw new Error(`COMPARE_LOAD=${load}: one of chat, slow-streams, ${Object.keys(AGENT_LOADS).join(', ')}`);
    const streams = envNumber('BENCH_STREAMS', 1000);
    const chunkDelayMs = slow ? envNumber('BENCH_SLOW_CHUNK_DELAY_MS', 200) : 0;
    const mock = start('mock-upstream', mockUpstreamArgs(join(ownDist, 'test', 'mock-upstreams', 'openai-upstream-server.js'), chunkDelayMs), { ...process.env, MOCK_UPSTREAM_API_KEY: UPSTREAM_KEY }, true);
    const upstreamUrl = await waitForLine(mock, 'LISTENING ', 10_000);
    let anthropicUrl = '';
    let geminiUrl = '';
    if (agent !== undefined) {
      const anthropic = start('mock-anthropic-upstream', mockUpstreamArgs(join(ownDist, 'test', 'mock-upstreams', 'anthropic-upstream-server.js'), 0), { ...process.env, MOCK_ANTHROPIC_UPSTREAM_API_KEY: ANTHROPIC_UPSTREAM_KEY }, true);
      anthropicUrl = await waitForLine(anthropic, 'LISTENING ', 10_000);
      const gemini = start('mock-gemini-upstream', mockUpstreamArgs(join(ownDist, 'test', 'mock-upstreams', 'gemini-upstream-server.js'), 0), { ...process.env, MOCK_GEMINI_UPSTREAM_API_KEY: GEMINI_UPSTREAM_KEY }, true);
      geminiUrl = await waitForLine(gemini, 'LISTENING ', 10_000);
    }
    const sides: Side[] = [];
    const bare = start('bare', bareProxyArgs(join(ownDist, 'bench', 'bare-proxy.js'), agent === undefined ? upstreamUrl : anthropicUrl), { ...process.env }, true);
    const bareOrigin = await waitForLine(bare, 'LISTENING ', 10_000);
    const directUrl = new URL(`${upstreamUrl}/chat/completions`);
    const bareSpec = agent === undefined
      ? openAIChatRequest(`${bareOrigin}${directUrl.pathname}`, UPSTREAM_KEY, BENCH_MODEL, slow)
      : agentAnthropicRequest(`${bareOrigin}/v1/messages`, ANTHROPIC_UPSTREAM_KEY, ANTHROPIC_UPSTREAM_MODEL, agent.stream);
    sides.push({ name: 'bare', child: bare, spec: bareSpec, bursts: { name: 'bare', cpuMicrosPerRequest: [], requestsPerSec: [] } });
    const adminToken = randomBytes(24).toString('hex');
    for (const build of builds) {
      const [port, consolePort] = [await freePort(), await freePort()];
      // Every stream comes from 127.0.0.1: the per-address cap must leave room for all of them (as the bench does).
      const perAddress: Record<string, string> = slow ? { MAX_CONNECTIONS_PER_IP: String(streams + 1000) } : {};
      const env = gatewayEnvironment({ ...perAddress, ...build.env, PORT: String(port), CONSOLE_PORT: String(consolePort), ADMIN_TOKEN: adminToken, DATABASE_URL: `sqlite:${join(workDir, `${build.name}.db`)}` });
      const child = start(build.name, [join(build.dist, 'src', 'main.js'), 'serve'], env, false);
      const base = `http://127.0.0.1:${port}`;
      await waitForStatus(`${base}/api/status`, child, 20_000).catch((error: Error) => {
        throw new Error(`${build.name}: ${error.message}\n${logTail(child.logPath)}`);
      });
      const key = await configureGateway(base, adminToken, upstreamUrl);
      if (agent !== undefined) {
        await configureTranslation(base, adminToken, anthropicUrl);
        await configureGemini(base, adminToken, geminiUrl);
      }
      const spec = agent === undefined ? openAIChatRequest(`${base}/v1/chat/completions`, key, BENCH_MODEL, slow) : agentAnthropicRequest(`${base}/v1/messages`, key, agent.model, agent.stream);
      sides.push({ name: build.name, child, spec, bursts: { name: build.name, cpuMicrosPerRequest: [], requestsPerSec: [] } });
    }
    if (pinning !== null) for (const side of sides) if (side.child.proc.pid !== undefined) pinProcess(side.child.proc.pid, pinning.proxies);
    if (slow) {
      await compareSlowStreams(sides, builds, { cycles, streams, ownDist, pinning });
      return;
    }
    const burst = async (side: Side, burstSeconds: number, warmup: number): Promise<{ cpuMicrosPerRequest: number; requestsPerSec: number }> => {
      const pid = side.child.proc.pid as number;
      const result = await measure(generator, side.spec, connections, burstSeconds, warmup, () => groupCpuMs(pid));
      const failures = checkSide(side.name, result);
      if (failures.length > 0) throw new Error(`${failures.join('; ')}\n${logTail(side.child.logPath)}`);
      if (result.cpuMicrosPerRequest === undefined) throw new Error(`${side.name}: no CPU reading (Linux /proc only)`);
      return { cpuMicrosPerRequest: result.cpuMicrosPerRequest, requestsPerSec: result.requestsPerSec };
    };
    console.log(`[compare] ${load}: ${sides.map((side) => side.name).join(', ')}: ${cycles} cycles of ${seconds} s bursts at ${connections} connections${pinning === null ? '' : `, proxies on CPU ${pinning.proxies}`}`);
    // Warm-up: JIT, caches and connection pools, as long as a few bursts.
    for (const side of sides) await burst(side, Math.max(5, seconds), 0);
    for (let cycle = 0; cycle < cycles; cycle++) {
      const order = sides.map((side) => ({ side, at: Math.random() })).sort((a, b) => a.at - b.at);
      for (const { side } of order) {
        const result = await burst(side, seconds, warmupSeconds);
        side.bursts.cpuMicrosPerRequest.push(result.cpuMicrosPerRequest);
        side.bursts.requestsPerSec.push(result.requestsPerSec);
      }
      console.log(`[compare] cycle ${cycle + 1}/${cycles}: ${sides.map((side) => `${side.name} ${(side.bursts.cpuMicrosPerRequest.at(-1) as number).toFixed(0)}`).join(', ')} µs/req`);
    }
    const first = (builds[0] as Build).name;
    const summaries = summarize(sides.map((side) => side.bursts), first);
    console.log(`\n${formatSummary(summaries, first)}`);
    const resultsPath = join(ownDist, 'compare-results.json');
    writeFileSync(resultsPath, JSON.stringify({ at: new Date().toISOString(), load, builds, cycles, seconds, connections, pinning, sides: sides.map((side) => side.bursts), summaries }, null, 2));
    console.log(`[compare] results written to ${resultsPath}`);
  } finally {
    await Promise.all(children.map((child) => stopChild(child)));
    rmSync(workDir, { recursive: true, force: true });
  }
}

/** One side's slow-stream bursts, in cycle order. */
export interface StreamBursts {
  name: string;
  ttfbP99Ms: number[];
  ttfbP50Ms: number[];
  opened: number[];
  /** The side's CPU (the gateway's process group, or the bare proxy's) per stream over the burst. */
  cpuMicrosPerStream: number[];
}

/** Each side's median burst, and its TTFB p99 paired cycle by cycle with the bare proxy's and the first build's. */
export function summarizeStreams(sides: readonly StreamBursts[], first: string): string {
  const bare = sides.find((side) => side.name === 'bare');
  const firstBuild = sides.find((side) => side.name === first);
  const paired = (side: StreamBursts, base: StreamBursts | undefined): string =>
    base === undefined || base === side ? '–' : median(side.ttfbP99Ms.map((p99, cycle) => p99 / (base.ttfbP99Ms[cycle] as number))).toFixed(3);
  const header = ['side', 'TTFB p99 ms (median burst)', 'min–max', 'TTFB p50 ms', 'opened (min)', 'CPU µs/stream', '÷ bare (paired)', `÷ ${first} (paired)`];
  const rows = sides.map((side) => [
    side.name,
    median(side.ttfbP99Ms).toFixed(0),
    `${Math.min(...side.ttfbP99Ms).toFixed(0)}–${Math.max(...side.ttfbP99Ms).toFixed(0)}`,
    median(side.ttfbP50Ms).toFixed(0),
    String(Math.min(...side.opened)),
    median(side.cpuMicrosPerStream).toFixed(0),
    paired(side, bare),
    paired(side, firstBuild),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] as string).length)));
  return [header, widths.map((width) => '-'.repeat(width)), ...rows].map((row) => row.map((cell, column) => cell.padEnd(widths[column] as number)).join('  ')).join('\n');
}

/** Bursts of streams opened at once, visiting the sides in a fresh random order each cycle. */
async function compareSlowStreams(sides: readonly Side[], builds: readonly Build[], options: { cycles: number; streams: number; ownDist: string; pinning: unknown }): Promise<void> {
  const { cycles, streams, ownDist } = options;
  const bursts = new Map(sides.map((side) => [side.name, { name: side.name, ttfbP99Ms: [], ttfbP50Ms: [], opened: [], cpuMicrosPerStream: [] } as StreamBursts]));
  const burst = async (side: Side): Promise<void> => {
    const pid = side.child.proc.pid as number;
    const cpuBefore = groupCpuMs(pid);
    const result = await slowStreams(side.spec, streams);
    const cpuAfter = groupCpuMs(pid);
    const record = bursts.get(side.name) as StreamBursts;
    record.ttfbP99Ms.push(result.ttfbP99Ms ?? Number.NaN);
    record.ttfbP50Ms.push(result.ttfbP50Ms ?? Number.NaN);
    record.opened.push(result.opened);
    record.cpuMicrosPerStream.push(cpuBefore === undefined || cpuAfter === undefined ? Number.NaN : ((cpuAfter - cpuBefore) * 1000) / streams);
    // The next side's burst starts on a quiet machine: the streams' sockets closed, TIME_WAIT aside.
    await new Promise((done) => setTimeout(done, 1000));
  };
  console.log(`[compare] slow-streams: ${sides.map((side) => side.name).join(', ')}: ${cycles} cycles of ${streams} streams at once`);
  // Warm-up: JIT, caches and connection pools.
  for (const side of sides) {
    await burst(side);
    const record = bursts.get(side.name) as StreamBursts;
    for (const values of [record.ttfbP99Ms, record.ttfbP50Ms, record.opened, record.cpuMicrosPerStream]) values.length = 0;
  }
  for (let cycle = 0; cycle < cycles; cycle++) {
    const order = sides.map((side) => ({ side, at: Math.random() })).sort((a, b) => a.at - b.at);
    for (const { side } of order) await burst(side);
    console.log(`[compare] cycle ${cycle + 1}/${cycles}: ${sides.map((side) => {
      const record = bursts.get(side.name) as StreamBursts;
      return `${side.name} p99 ${(record.ttfbP99Ms.at(-1) as number).toFixed(0)} ms (${record.opened.at(-1) as number} opened)`;
    }).join(', ')}`);
  }
  const all = [...bursts.values()];
  console.log(`\n${summarizeStreams(all, (builds[0] as Build).name)}`);
  const resultsPath = join(ownDist, 'compare-results.json');
  writeFileSync(resultsPath, JSON.stringify({ at: new Date().toISOString(), load: 'slow-streams', builds, cycles, streams, pinning: options.pinning, sides: all }, null, 2));
  console.log(`[compare] results written to ${resultsPath}`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(`[compare] ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
}
