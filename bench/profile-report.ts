/**
 * Reads a V8 CPU profile of the gateway (written by `BENCH_PROFILE_DIR`) and prints where its busy time went while it
 * served requests: self time by file and by function, and the time of each subsystem of the request path (intake,
 * key lookup, admission and limits, routing, relay, answer writing, settlement, usage log, access log, metrics,
 * telemetry), so a piece of bookkeeping spread over many small functions shows as one figure.
 *
 *   node dist/bench/profile-report.js /tmp/prof/CPU.….cpuprofile [rows]
 *
 * Only the stretch between the first and the last sample of a metered request counts (start-up, migrations and the
 * idle tail are left out). A subsystem's `inclusive` share counts every sample with one of its frames on the stack;
 * its `own` share counts each sample once, for the innermost subsystem on its stack, so the own shares add up to the
 * busy time. The time of a system call that writes to a socket or pipe is shown apart, named after the subsystem that
 * wrote. A stack resumed after an `await` holds only the resumed function, so the inclusive share of a caller misses
 * what its callees did after their first `await`.
 */
import { pathToFileURL } from 'node:url';
import { profileFileArguments } from './profile-file-arguments.js';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

export interface CpuProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

export interface CpuProfile {
  nodes: CpuProfileNode[];
  samples: number[];
  /** Microseconds since the previous sample. */
  timeDeltas: number[];
}

/**
 * Subsystems by the script a frame runs in, first match wins. The order matters where
 * patterns overlap: the access log before telemetry, the usage log before the other storage repositories.
 */
const SUBSYSTEMS: ReadonlyArray<readonly [string, RegExp]> = [
  ['access log', /src\/shared\/logger\.|src\/telemetry\/telemetry\./],
  ['telemetry', /src\/telemetry\//],
  ['metrics', /src\/metrics\//],
  ['usage log', /src\/usage-log\/|repositories\/usage-log-repository\.|repositories\/usage-rollup/],
  ['admission / limits', /src\/relay\/admission\.|src\/limits\/|src\/http\/admission-control\.|src\/billing\/(?:local-leases|reservation-amount)\./],
  ['settlement / money', /src\/billing\/|src\/relay\/(?:request-meter|attempt-log)\.|src\/storage\/repositories\/|src\/shared\/batch-writer\./],
  ['auth / key lookup', /src\/auth\/|src\/http\/authenticate\.|src\/customers\/request-identity\./],
  ['routing', /src\/routing\/|src\/operations\/(?:model-chain|resolve-model|caller-preference)\.|src\/relay\/(?:choose-wire|relay-fallback)\./],
  ['answer writing', /src\/http\/(?:respond|response-sink|client-stream|send-stream)\.|src\/relay\/(?:metered-sink|response-sink)\.|src\/wire\/|src\/codecs\//],
  ['relay / upstream', /src\/relay\/|src\/upstreams\/|node_modules\/undici\/|internal\/deps\/undici\//],
  ['http intake', /src\/http\/|src\/app\.|src\/operations\/|src\/gateway\//],
];

/** Frames that name a subsystem only when nothing more specific is on the stack (Node's own HTTP code, storage drivers). */
const FALLBACKS: ReadonlyArray<readonly [string, RegExp]> = [
  ['answer writing', /^node:_http_outgoing$/],
  ['http intake', /^node:_http_(?:server|incoming|common)$/],
  ['storage (caller not on the stack)', /src\/storage\/|\/vendor\/kysely\./],
];

/** Leaf functions that are system calls writing to a socket or pipe. */
const WRITE_CALLS = new Set(['writev', 'writeBuffer', 'writeUtf8String', 'writeLatin1String', 'writeAsciiString']);

/** The subsystem a frame belongs to, and whether only as a fallback; null for anything else. */
export function subsystemOf(frame: CallFrame): { name: string; fallback: boolean } | null {
  // The metered frame runs the whole request; only its settlement is bookkeeping.
  if (frame.functionName === 'settleMetered') return { name: 'settlement / money', fallback: false };
  for (const [name, pattern] of SUBSYSTEMS) if (pattern.test(frame.url)) return { name, fallback: false };
  for (const [name, pattern] of FALLBACKS) if (pattern.test(frame.url)) return { name, fallback: true };
  return null;
}

export interface SubsystemShare {
  name: string;
  /** Microseconds with one of the subsystem's frames on the stack. */
  inclusive: number;
  /** Microseconds for which it was the innermost subsystem on the stack. */
  own: number;
}

export interface ProfileReport {
  /** Microseconds not idle within the window. */
  busy: number;
  /** The window's length in microseconds. */
  window: number;
  byFile: Array<[string, number]>;
  byFunction: Array<[string, number]>;
  subsystems: SubsystemShare[];
}

/** `src/…` of the gateway's own scripts, `node_modules/…` shortened, Node's own as they are. */
function scriptName(url: string): string {
  const own = url.lastIndexOf('/src/');
  if (own >= 0 && url.startsWith('file:')) return url.slice(own + 1);
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) return url.slice(modules + '/node_modules/'.length);
  return url;
}

const METERED_REQUEST = /src\/operations\/metered-frame\./;

/** Sums a profile as described at the top of this file. */
export function profileReport(profile: CpuProfile): ProfileReport {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const stackOf = (id: number): CpuProfileNode[] => {
    const stack: CpuProfileNode[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) stack.push(nodes.get(at) as CpuProfileNode);
    return stack;
  };
  const times: number[] = [];
  let clock = 0;
  for (const delta of profile.timeDeltas) times.push((clock += delta));
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  profile.samples.forEach((id, index) => {
    if (stackOf(id).some((node) => METERED_REQUEST.test(node.callFrame.url))) {
      first = Math.min(first, times[index] as number);
      last = Math.max(last, times[index] as number);
    }
  });
  if (first === Number.POSITIVE_INFINITY) {
    first = 0;
    last = clock;
  }
  const add = (map: Map<string, number>, key: string, micros: number): void => {
    map.set(key, (map.get(key) ?? 0) + micros);
  };
  const byFile = new Map<string, number>();
  const byFunction = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const own = new Map<string, number>();
  let busy = 0;
  profile.samples.forEach((id, index) => {
    const at = times[index] as number;
    if (at < first || at > last) return;
    const micros = profile.timeDeltas[index] as number;
    const stack = stackOf(id);
    const leaf = stack[0] as CpuProfileNode;
    const { functionName, url, lineNumber } = leaf.callFrame;
    if (functionName === '(idle)') return;
    busy += micros;
    add(byFile, url === '' ? functionName : scriptName(url), micros);
    add(byFunction, `${functionName || '(anonymous)'} ${scriptName(url)}${url === '' ? '' : `:${lineNumber + 1}`}`, micros);
    const seen = new Set<string>();
    let innermost: string | null = null;
    let innermostFallback: string | null = null;
    for (const node of stack) {
      const subsystem = subsystemOf(node.callFrame);
      if (subsystem === null) continue;
      seen.add(subsystem.name);
      if (subsystem.fallback) innermostFallback ??= subsystem.name;
      else innermost ??= subsystem.name;
    }
    for (const name of seen) add(inclusive, name, micros);
    const writer = innermost ?? innermostFallback;
    let share: string;
    if (WRITE_CALLS.has(functionName) && url === '') share = `socket/pipe writes (${writer ?? 'other'})`;
    else if (writer !== null) share = writer;
    else if (functionName === '(garbage collector)') share = 'garbage collection';
    else if (functionName === '(program)') share = 'V8 and native (program)';
    else if (/^node:internal\/(?:process\/task_queues|timers)$/.test(url) || functionName === 'runMicrotasks') share = 'event loop (ticks, microtasks, timers)';
    else share = 'other (Node internals)';
    add(own, share, micros);
  });
  const sorted = (map: Map<string, number>): Array<[string, number]> => [...map].sort((left, right) => right[1] - left[1]);
  const names = new Set([...inclusive.keys(), ...own.keys()]);
  const subsystems = [...names]
    .map((name) => ({ name, inclusive: inclusive.get(name) ?? 0, own: own.get(name) ?? 0 }))
    .sort((left, right) => right.own - left.own || right.inclusive - left.inclusive);
  return { busy, window: last - first, byFile: sorted(byFile), byFunction: sorted(byFunction), subsystems };
}

function main(): void {
  const { profile, rows } = profileFileArguments('node dist/bench/profile-report.js FILE.cpuprofile [rows]');
  const report = profileReport(profile as CpuProfile);
  const share = (micros: number): string => `${((100 * micros) / report.busy).toFixed(1).padStart(5)} %`;
  console.log(`busy ${(report.busy / 1000).toFixed(0)} ms of a ${(report.window / 1000).toFixed(0)} ms window of requests`);
  console.log('\nsubsystem                                      inclusive      own');
  for (const row of report.subsystems) {
    const inclusive = row.inclusive > 0 ? share(row.inclusive) : '–';
    console.log(`${row.name.padEnd(44)} ${inclusive.padStart(9)} ${share(row.own).padStart(9)}`);
  }
  console.log('\nself time by file');
  for (const [name, micros] of report.byFile.slice(0, rows)) console.log(`${share(micros)}  ${name}`);
  console.log('\nself time by function');
  for (const [name, micros] of report.byFunction.slice(0, rows)) console.log(`${share(micros)}  ${name}`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) main();
