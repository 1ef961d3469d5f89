import { createHook } from 'node:async_hooks';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { existsSync, readFileSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Session } from 'node:inspector';
import { SourceMap } from 'node:module';
import type { AddressInfo } from 'node:net';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ESLint } from 'eslint';
import { addRoutedModel, seedAccount, startTestGateway } from '../test/support/gateway-harness.js';
import { startMockOpenAIUpstream } from '../test/support/mock-openai-upstream.js';
import { ManualClock } from '../src/shared/clock.js';

/**
 * `npm run arch:walk`: the walk of one warm, non-streamed OpenAI chat request (`POST /v1/chat/completions` passed
 * through to an OpenAI upstream) through src/, measured on a real gateway in this process (SQLite, a mock OpenAI
 * upstream on 127.0.0.1, the client on a kept-alive connection, the gateway's clock standing still).
 *
 * - A request's window runs from node:http's `http.server.request.start` (the request arrives) to the response's
 *   'close' event, its listeners and the microtasks they queue included. Work the request leaves to later turns of
 *   the event loop (the ledger's and the usage log's batched writes) is not in it.
 * - step: a distinct function of src/ that runs in the window of more than half of the measured requests (V8's
 *   precise coverage with call counts, counters reset at each window's start and read at its end).
 * - files: the distinct src/ files of the steps.
 * - call edge: a step calling another, directly or through code outside src/ (node:, packages) on the synchronous
 *   stack; traced in a few more windows by a breakpoint at each step's first statement whose condition records the
 *   caller and never pauses. A step entered from node:http, an event, a timer or a resumed `await` has no caller.
 * - climb: a call edge from a file that the lint's layer rules (eslint.config.js, `no-restricted-imports`) forbid to
 *   import the callee's file: control going up to a layer the caller may not know, through a callback or an
 *   interface handed down.
 * - the walk in order: the steps in the order they are entered in a traced window (repeats included); a move is an
 *   entry into a step of another file than the step entered just before (a call, or the next call after a return);
 *   a climb back up is a move from a file to one it may not import (median over the traced requests).
 * - meter visits: per request (median), the meter's construction plus every call of a public method or accessor of
 *   RequestMeter made from outside the class (a member calling another member while it runs is not a visit).
 * - promises (`--promises` only): per request (median), the PROMISE resources async_hooks sees created in the window
 *   (with the hook enabled V8 also makes one for every `await`, so an await counts as a promise); in the traced
 *   windows each is put on the nearest src/ line of its synchronous creation stack, else on the walk's mock upstream
 *   (test/) or on node:/undici/packages. The client then runs in a worker thread, so its own fetch is not counted.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const MODEL = 'walk-model';
const METER_FILE = 'src/relay/request-meter.ts';

/**
 * Counts the calls into RequestMeter's public methods and accessors made from outside it, until `restore` is called.
 * Loaded by path, not imported, so the walk still runs once the meter is gone from src/ (it then counts nothing).
 */
async function countMeterVisits(): Promise<{ take(): number; restore(): void }> {
  const compiled = resolve(ROOT, 'dist', METER_FILE.replace(/\.ts$/, '.js'));
  const loaded = existsSync(resolve(ROOT, METER_FILE)) && existsSync(compiled)
    ? await import(pathToFileURL(compiled).href) as { RequestMeter?: { prototype: object } }
    : {};
  const prototype = (loaded.RequestMeter?.prototype ?? {}) as Record<string, unknown>;
  const originals = new Map<string, PropertyDescriptor>();
  let depth = 0;
  let visits = 0;
  const counted = <A extends unknown[], R>(original: (this: unknown, ...args: A) => R) => function (this: unknown, ...args: A): R {
    if (depth === 0) visits += 1;
    depth += 1;
    try {
      return original.apply(this, args);
    } finally {
      depth -= 1;
    }
  };
  for (const name of Object.getOwnPropertyNames(prototype)) {
    if (name === 'constructor') continue;
    const descriptor = Object.getOwnPropertyDescriptor(prototype, name)!;
    originals.set(name, descriptor);
    if (typeof descriptor.value === 'function') Object.defineProperty(prototype, name, { ...descriptor, value: counted(descriptor.value as (...args: unknown[]) => unknown) });
    else if (descriptor.get !== undefined) Object.defineProperty(prototype, name, { ...descriptor, get: counted(descriptor.get) });
  }
  return {
    take() {
      const taken = visits;
      visits = 0;
      return taken;
    },
    restore() {
      for (const [name, descriptor] of originals) Object.defineProperty(prototype, name, descriptor);
    },
  };
}

export interface WalkOptions {
  warmUp: number;
  covered: number;
  traced: number;
  /** Counts the promises made in each window (an async_hooks hook: slower, so off unless asked). */
  promises?: boolean;
}

export interface WalkPromises {
  /** Promises created per request (median over the counted requests). */
  perRequest: number;
  /** Per request (median over the traced requests): with a src/ frame on the creation stack, … */
  src: number;
  /** … with none but one of the walk's mock upstream (test/), … */
  harness: number;
  /** … and with neither: node:, undici, packages. */
  outside: number;
  /**
   * The src/ lines that made them, with their promises per request (median over the traced requests, so background
   * work falling into a window now and then is left out), most first.
   */
  bySource: { where: string; perRequest: number }[];
}

export interface WalkStep {
  /** `src/…ts:line` of the function's start, with its name (`(anonymous)` where it has none). */
  id: string;
  file: string;
  name: string;
  /** Calls per request (median over the covered requests). */
  calls: number;
}

export interface WalkEdge {
  from: string;
  to: string;
  climb: boolean;
}

export interface WalkReport {
  request: string;
  requests: { warmUp: number; covered: number; traced: number };
  steps: number;
  files: number;
  edges: number;
  climbs: number;
  /** Steps entered per request, repeats included (median over the traced requests). */
  entered: number;
  /** Entries into a step of another file than the step entered just before (median). */
  moves: number;
  /** Moves from a file to one it may not import (median): the walk, read in order, climbing back up. */
  climbsBackUp: number;
  meterVisits: number;
  /** Steps with no caller in src/: entered from node:http, an event, a timer or a resumed await. */
  entries: number;
  stepList: WalkStep[];
  /** Functions of src/ that ran in some of the counted windows but not all (a step when in more than half). */
  occasional: { id: string; windows: number }[];
  climbList: WalkEdge[];
  promises: WalkPromises | null;
}

interface Position {
  file: string;
  line: number;
}

/** Maps a compiled dist/ script position back to its TypeScript source, or null outside src/. */
class SourcePositions {
  readonly #maps = new Map<string, { map: SourceMap; lineStarts: number[] } | null>();

  #load(url: string): { map: SourceMap; lineStarts: number[] } | null {
    if (this.#maps.has(url)) return this.#maps.get(url)!;
    let loaded: { map: SourceMap; lineStarts: number[] } | null = null;
    if (url.startsWith('file://') && url.includes('/dist/src/')) {
      const path = fileURLToPath(url);
      try {
        const text = readFileSync(path, 'utf8');
        const lineStarts = [0];
        for (let index = 0; index < text.length; index += 1) if (text.charCodeAt(index) === 10) lineStarts.push(index + 1);
        loaded = { map: new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8'))), lineStarts };
      } catch {
        loaded = null;
      }
    }
    this.#maps.set(url, loaded);
    return loaded;
  }

  /** 0-based line and column of the compiled script → the source file (relative to the repository) and its 1-based line. */
  at(url: string, line: number, column: number): Position | null {
    const loaded = this.#load(url);
    if (loaded === null) return null;
    const entry = loaded.map.findEntry(line, column);
    if (!('originalSource' in entry)) return null;
    const source = resolve(dirname(fileURLToPath(url)), entry.originalSource);
    const file = relative(ROOT, source.startsWith('file:') ? fileURLToPath(source) : source).split('\\').join('/');
    return file.startsWith('src/') ? { file, line: entry.originalLine + 1 } : null;
  }

  /** 0-based line and column of the compiled script → its character offset. */
  offsetOf(url: string, line: number, column: number): number | null {
    const loaded = this.#load(url);
    const start = loaded?.lineStarts[line];
    return start === undefined ? null : start + column;
  }

  /** A character offset of the compiled script → its 0-based line and column. */
  lineColumn(url: string, offset: number): { line: number; column: number } | null {
    const loaded = this.#load(url);
    if (loaded === null) return null;
    let low = 0;
    let high = loaded.lineStarts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (loaded.lineStarts[middle]! <= offset) low = middle;
      else high = middle - 1;
    }
    return { line: low, column: offset - loaded.lineStarts[low]! };
  }
}

/** The in-process inspector, answering synchronously (an in-process session dispatches on the calling thread). */
interface InspectorSession {
  post<T>(method: string, params?: object): T;
  on(event: string, listener: (message: { params: Record<string, unknown> }) => void): void;
  close(): void;
}

function inspector(): InspectorSession {
  const session = new Session();
  session.connect();
  return {
    post<T>(method: string, params?: object): T {
      let outcome: { error: Error | null; result: T } | null = null;
      session.post(method, params ?? {}, (error, result) => {
        outcome = { error, result: result as T };
      });
      if (outcome === null) throw new Error(`${method} did not answer synchronously`);
      const { error, result } = outcome as { error: Error | null; result: T };
      if (error !== null) throw error;
      return result;
    },
    on: (event, listener) => {
      session.on(event, listener as (message: unknown) => void);
    },
    close: () => session.disconnect(),
  };
}

interface CoverageFunction {
  functionName: string;
  ranges: { startOffset: number; endOffset: number; count: number }[];
}
interface ScriptCoverage {
  url: string;
  functions: CoverageFunction[];
}
interface ScriptFunction {
  /** Character offsets of the function in the compiled script. */
  start: number;
  end: number;
  /** The step id it would have, or null outside src/. */
  id: string | null;
}
/** The functions of each compiled src/ script, by their start offset. */
type ScriptFunctions = Map<number, ScriptFunction>;


/**
 * Records, for every call of a step made inside a request window, the step that called it: the nearest frame below
 * it on the synchronous stack that lies in a step (frames outside src/ — node:, packages — are passed through; frames
 * V8 adds for the functions awaiting an async one are not callers and end the search).
 */
function traceCallers(session: InspectorSession, positions: SourcePositions, scripts: Map<string, ScriptFunctions>, steps: Map<string, WalkStep>) {
  const scriptIds = new Map<string, string>();
  session.on('Debugger.scriptParsed', (message) => {
    const { url, scriptId } = message.params as { url: string; scriptId: string };
    if (scripts.has(url)) scriptIds.set(url, scriptId);
  });
  session.post('Debugger.enable');
  const ids = [...steps.keys()];
  const stepAt = (url: string, line: number, column: number): string | null => {
    const functions = scripts.get(url);
    const offset = positions.offsetOf(url, line - 1, column - 1);
    if (functions === undefined || offset === null) return null;
    let innermost: ScriptFunction | null = null;
    for (const fn of functions.values()) {
      if (fn.start <= offset && offset < fn.end && (innermost === null || fn.end - fn.start < innermost.end - innermost.start)) innermost = fn;
    }
    return innermost?.id !== null && innermost?.id !== undefined && steps.has(innermost.id) ? innermost.id : null;
  };
  const edges = new Set<string>();
  let open = false;
  let windows = 0;
  /** Per traced window, the steps in the order they were entered. */
  const sequences: string[][] = [];
  const global = globalThis as { __unigateWalkStep?: (index: number) => void };
  // An exception inside a breakpoint's condition is swallowed by V8: keep the first one and report it at the end.
  let failure: unknown = null;
  global.__unigateWalkStep = (index: number): void => {
    if (!open) return;
    try {
      recordCaller(index);
    } catch (error) {
      failure ??= error;
    }
  };
  const recordCaller = (index: number): void => {
    const limit = Error.stackTraceLimit;
    const prepare = Error.prepareStackTrace;
    Error.stackTraceLimit = 200;
    Error.prepareStackTrace = (_error, callSites) => callSites;
    const stack = new Error().stack as unknown as NodeJS.CallSite[];
    Error.prepareStackTrace = prepare;
    Error.stackTraceLimit = limit;
    const callee = ids[index]!;
    sequences[sequences.length - 1]?.push(callee);
    let inCallee = false;
    for (const site of stack) {
      if (site.isAsync()) break;
      // Frames of evaluated code (the breakpoint's condition) have no script name.
      const url = site.getScriptNameOrSourceURL() as string | null | undefined;
      if (typeof url !== 'string' || !url.includes('/dist/src/')) continue;
      const step = stepAt(url, site.getLineNumber() ?? 0, site.getColumnNumber() ?? 0);
      if (!inCallee) {
        // The first src/ frame is the step itself, stopped at its first statement.
        inCallee = true;
        continue;
      }
      if (step === null) continue;
      edges.add(`${step}\n${callee}`);
      break;
    }
  };
  const breakpoints: string[] = [];
  for (const [url, functions] of scripts) {
    const scriptId = scriptIds.get(url);
    if (scriptId === undefined) continue;
    for (const fn of functions.values()) {
      if (fn.id === null || !steps.has(fn.id)) continue;
      const start = positions.lineColumn(url, fn.start)!;
      const end = positions.lineColumn(url, fn.end)!;
      const { locations } = session.post<{ locations: { scriptId: string; lineNumber: number; columnNumber: number }[] }>('Debugger.getPossibleBreakpoints', {
        start: { scriptId, lineNumber: start.line, columnNumber: start.column },
        end: { scriptId, lineNumber: end.line, columnNumber: end.column },
        restrictToFunction: true,
      });
      const location = locations[0];
      if (location === undefined) continue;
      const condition = `(globalThis.__unigateWalkStep !== undefined && globalThis.__unigateWalkStep(${ids.indexOf(fn.id)}), false)`;
      breakpoints.push(session.post<{ breakpointId: string }>('Debugger.setBreakpoint', { location, condition }).breakpointId);
    }
  }
  return {
    open: () => {
      open = true;
      windows += 1;
      sequences.push([]);
    },
    close: () => {
      open = false;
    },
    stop: () => {
      for (const breakpointId of breakpoints) session.post('Debugger.removeBreakpoint', { breakpointId });
      session.post('Debugger.disable');
      delete global.__unigateWalkStep;
    },
    edges: () => {
      if (failure !== null) throw failure;
      return edges;
    },
    windows: () => windows,
    sequences: () => sequences,
    breakpoints: breakpoints.length,
  };
}

/** Distinct src/ lines kept for the promise attribution; any further line is counted, not named. */
const MAX_PROMISE_SOURCES = 500;
/** Frames read from a promise's creation stack looking for src/. */
const PROMISE_STACK_FRAMES = 64;

/**
 * Counts the PROMISE resources created while a window is open (async_hooks' `init`, enabled from `start` to `stop`);
 * in a traced window also the nearest src/ line of each one's synchronous creation stack.
 */
function countPromises(positions: SourcePositions) {
  let open = false;
  let traced = false;
  let window = { all: 0, src: 0, harness: 0 };
  const counted: number[] = [];
  const tracedWindows: { src: number; harness: number; outside: number }[] = [];
  /** Per traced window, its promises by src/ line (at most MAX_PROMISE_SOURCES distinct lines over all windows). */
  const bySourcePerWindow: Map<string, number>[] = [];
  const named = new Set<string>();
  let bySource = new Map<string, number>();
  const creator = (): { where: string | null; harness: boolean } => {
    const limit = Error.stackTraceLimit;
    const prepare = Error.prepareStackTrace;
    Error.stackTraceLimit = PROMISE_STACK_FRAMES;
    Error.prepareStackTrace = (_error, callSites) => callSites;
    const stack = new Error().stack as unknown as NodeJS.CallSite[];
    Error.prepareStackTrace = prepare;
    Error.stackTraceLimit = limit;
    let harness = false;
    for (const site of stack) {
      if (site.isAsync()) break;
      const url = site.getScriptNameOrSourceURL() as string | null | undefined;
      if (typeof url !== 'string') continue;
      if (url.includes('/dist/test/')) harness = true;
      if (!url.includes('/dist/src/')) continue;
      const position = positions.at(url, (site.getLineNumber() ?? 1) - 1, (site.getColumnNumber() ?? 1) - 1);
      return { where: position === null ? url : `${position.file}:${position.line}`, harness: false };
    }
    return { where: null, harness };
  };
  const hook = createHook({
    init(_asyncId, type) {
      if (!open || type !== 'PROMISE') return;
      window.all += 1;
      if (!traced) return;
      const { where, harness } = creator();
      if (where === null) {
        if (harness) window.harness += 1;
        return;
      }
      window.src += 1;
      if (!named.has(where) && named.size >= MAX_PROMISE_SOURCES) return;
      named.add(where);
      bySource.set(where, (bySource.get(where) ?? 0) + 1);
    },
  });
  return {
    start: () => hook.enable(),
    stop: () => hook.disable(),
    open: (tracing: boolean) => {
      window = { all: 0, src: 0, harness: 0 };
      bySource = new Map();
      traced = tracing;
      open = true;
    },
    close: () => {
      if (!open) return;
      open = false;
      if (!traced) counted.push(window.all);
      else {
        tracedWindows.push({ src: window.src, harness: window.harness, outside: window.all - window.src - window.harness });
        bySourcePerWindow.push(bySource);
      }
    },
    report: (): WalkPromises => {
      const lines = [...named].map((where) => ({ where, perRequest: median(bySourcePerWindow.map((counts) => counts.get(where) ?? 0)) }));
      return {
        perRequest: median(counted),
        src: median(tracedWindows.map((entry) => entry.src)),
        harness: median(tracedWindows.map((entry) => entry.harness)),
        outside: median(tracedWindows.map((entry) => entry.outside)),
        bySource: lines.filter((line) => line.perRequest > 0).sort((x, y) => y.perRequest - x.perRequest || (x.where < y.where ? -1 : 1)),
      };
    },
  };
}

/**
 * The walk's client in a worker thread (for `--promises`: its fetch then makes no promise on the gateway's thread),
 * sending the same request as the in-process client.
 */
function clientInWorker(url: string, init: { method: string; headers: Record<string, string>; body: string }) {
  const worker = new Worker(`
    const { parentPort, workerData } = require('node:worker_threads');
    parentPort.on('message', () => {
      fetch(workerData.url, workerData.init)
        .then(async (response) => parentPort.postMessage({ status: response.status, text: await response.text() }))
        .catch((error) => parentPort.postMessage({ status: 0, text: String(error) }));
    });
  `, { eval: true, workerData: { url, init } });
  worker.unref();
  return {
    send: (): Promise<{ status: number; text: string }> => new Promise((done, fail) => {
      const onError = (error: Error): void => fail(error);
      worker.once('error', onError);
      worker.once('message', (answer: { status: number; text: string }) => {
        worker.off('error', onError);
        done(answer);
      });
      worker.postMessage(null);
    }),
    close: () => worker.terminate(),
  };
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};

/** Watches the gateway's API listener: calls `opened` when a chat request arrives and `closed` once its response closed. */
function watchRequests(port: number, opened: () => void, closed: () => void): () => void {
  const onStart = (message: unknown): void => {
    const { request, response, server } = message as { request: IncomingMessage; response: ServerResponse; server: Server };
    if ((server.address() as AddressInfo | null)?.port !== port || request.url !== '/v1/chat/completions') return;
    opened();
    // Added once the response finished, so it runs after the gateway's own 'close' listeners.
    response.once('finish', () => response.once('close', () => queueMicrotask(closed)));
  };
  subscribe('http.server.request.start', onStart);
  return () => unsubscribe('http.server.request.start', onStart);
}

/** Whether the lint's layer rules refuse an import of `to` written in `from`: a call from `from` to `to` climbs. */
async function climbsBetween(pairs: [string, string][]): Promise<Set<string>> {
  const eslint = new ESLint({ cwd: ROOT });
  const refused = new Set<string>();
  for (const [from, to] of pairs) {
    let specifier = relative(dirname(from), to).split('\\').join('/').replace(/\.ts$/, '.js');
    if (!specifier.startsWith('.')) specifier = `./${specifier}`;
    const [result] = await eslint.lintText(`import '${specifier}';\n`, { filePath: resolve(ROOT, from) });
    if (result?.messages.some((message) => message.ruleId === 'no-restricted-imports')) refused.add(`${from}\n${to}`);
  }
  return refused;
}

export async function measureRequestWalk(options: WalkOptions): Promise<WalkReport> {
  const upstream = await startMockOpenAIUpstream({ recordRequests: false });
  // The gateway's clock stands still: no cache entry expires and no rate window rolls between requests, so every
  // request walks the same way whatever the machine's speed (timers of background work still run on real time).
  const gateway = await startTestGateway({ database: 'sqlite', clock: new ManualClock(Date.now()) });
  const positions = new SourcePositions();
  const session = inspector();
  const promises = options.promises === true ? countPromises(positions) : null;
  let worker: ReturnType<typeof clientInWorker> | null = null;
  try {
    await addRoutedModel(gateway, {
      model: MODEL,
      channel: { name: 'walk-openai', type: 'openai', base_url: upstream.url, api_key: 'sk-upstream-test', models: { [MODEL]: 'gpt-4o-mini' } },
    });
    const account = await seedAccount(gateway, { balanceUsd: 1000 });
    const port = Number(new URL(gateway.url).port);
    const body = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Say hello to the walk.' }] });
    const init = { method: 'POST', headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' }, body };
    worker = options.promises === true ? clientInWorker(`${gateway.baseURL}/chat/completions`, init) : null;
    const client = worker;
    const chat = async (): Promise<void> => {
      let answer: { status: number; text: string };
      if (client !== null) answer = await client.send();
      else {
        const response = await fetch(`${gateway.baseURL}/chat/completions`, init);
        answer = { status: response.status, text: await response.text() };
      }
      if (answer.status !== 200) throw new Error(`chat answered ${answer.status}: ${answer.text}`);
    };
    /** One request, then the gateway's batched writes, so the next window starts on a quiet process. */
    const settled = async (): Promise<void> => {
      await chat();
      await gateway.gateway.services.ledger.flush();
      await gateway.gateway.services.usageLog.flush();
    };
    for (let index = 0; index < options.warmUp; index += 1) await settled();
    promises?.start();

    // Steps: precise call counts per request window.
    session.post('Profiler.enable');
    session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
    const windows: Map<string, number>[] = [];
    const visitsPerWindow: number[] = [];
    const meterVisits = await countMeterVisits();
    const names = new Map<string, { file: string; name: string }>();
    const scripts = new Map<string, ScriptFunctions>();
    const countWindow = (): Map<string, number> => {
      const counts = new Map<string, number>();
      for (const script of session.post<{ result: ScriptCoverage[] }>('Profiler.takePreciseCoverage').result) {
        if (!script.url.includes('/dist/src/')) continue;
        const known = scripts.get(script.url) ?? new Map<number, ScriptFunction>();
        scripts.set(script.url, known);
        for (const fn of script.functions) {
          const range = fn.ranges[0];
          if (range === undefined) continue;
          let entry = known.get(range.startOffset);
          if (entry === undefined) {
            const start = positions.lineColumn(script.url, range.startOffset);
            const position = start === null ? null : positions.at(script.url, start.line, start.column);
            const name = fn.functionName === '' ? '(anonymous)' : fn.functionName;
            entry = { start: range.startOffset, end: range.endOffset, id: position === null ? null : `${position.file}:${position.line} ${name}` };
            known.set(range.startOffset, entry);
            if (position !== null) names.set(entry.id!, { file: position.file, name });
          }
          if (range.count === 0 || entry.id === null) continue;
          counts.set(entry.id, (counts.get(entry.id) ?? 0) + range.count);
        }
      }
      return counts;
    };
    let open = false;
    const stopCovering = watchRequests(port, () => {
      countWindow();
      meterVisits.take();
      open = true;
      promises?.open(false);
    }, () => {
      promises?.close();
      if (open) {
        windows.push(countWindow());
        visitsPerWindow.push(meterVisits.take());
      }
      open = false;
    });
    try {
      for (let index = 0; index < options.covered; index += 1) await settled();
    } finally {
      stopCovering();
      meterVisits.restore();
    }
    session.post('Profiler.stopPreciseCoverage');

    const seen = new Map<string, number[]>();
    for (const window of windows) for (const [id, count] of window) seen.set(id, [...(seen.get(id) ?? []), count]);
    const steps = new Map<string, WalkStep>();
    const occasional: { id: string; windows: number }[] = [];
    for (const [id, counts] of seen) {
      if (counts.length * 2 <= windows.length || counts.length < windows.length) occasional.push({ id, windows: counts.length });
      if (counts.length * 2 <= windows.length) continue;
      const padded = [...counts, ...Array<number>(windows.length - counts.length).fill(0)];
      steps.set(id, { id, ...names.get(id)!, calls: median(padded) });
    }

    // Edges: a breakpoint at the start of every step, whose condition records the step's caller and never pauses.
    const callers = traceCallers(session, positions, scripts, steps);
    const stopTracing = watchRequests(port, () => {
      callers.open();
      promises?.open(true);
    }, () => {
      promises?.close();
      callers.close();
    });
    try {
      for (let index = 0; index < options.traced; index += 1) await settled();
    } finally {
      stopTracing();
      callers.stop();
      promises?.stop();
    }
    const edges = callers.edges();
    const fileOf = (id: string): string => steps.get(id)!.file;
    const filePairs = new Map<string, [string, string]>();
    for (const edge of edges) {
      const [from, to] = edge.split('\n') as [string, string];
      if (fileOf(from) !== fileOf(to)) filePairs.set(`${fileOf(from)}\n${fileOf(to)}`, [fileOf(from), fileOf(to)]);
    }
    // The walk in the order its steps are entered: each step entered right after one in another file is a move.
    const sequences = callers.sequences();
    for (const sequence of sequences) {
      for (let index = 1; index < sequence.length; index += 1) {
        const [from, to] = [fileOf(sequence[index - 1]!), fileOf(sequence[index]!)];
        if (from !== to) filePairs.set(`${from}\n${to}`, [from, to]);
      }
    }
    const refused = await climbsBetween([...filePairs.values()]);
    const climbsBackUp = median(sequences.map((sequence) => {
      let climbs = 0;
      for (let index = 1; index < sequence.length; index += 1) if (refused.has(`${fileOf(sequence[index - 1]!)}\n${fileOf(sequence[index]!)}`)) climbs += 1;
      return climbs;
    }));
    const moves = median(sequences.map((sequence) => sequence.filter((id, index) => index > 0 && fileOf(id) !== fileOf(sequence[index - 1]!)).length));
    const edgeList: WalkEdge[] = [...edges].sort().map((edge) => {
      const [from, to] = edge.split('\n') as [string, string];
      return { from, to, climb: refused.has(`${fileOf(from)}\n${fileOf(to)}`) };
    });
    const stepList = [...steps.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
    const constructions = stepList.filter((step) => step.file === METER_FILE && step.name === 'RequestMeter').reduce((sum, step) => sum + step.calls, 0);
    const called = new Set(edgeList.map((edge) => edge.to));
    return {
      request: 'POST /v1/chat/completions, non-streamed, OpenAI client → OpenAI upstream (pass-through), warm',
      requests: { warmUp: options.warmUp, covered: windows.length, traced: callers.windows() },
      steps: stepList.length,
      files: new Set(stepList.map((step) => step.file)).size,
      edges: edgeList.length,
      climbs: edgeList.filter((edge) => edge.climb).length,
      entered: median(sequences.map((sequence) => sequence.length)),
      moves,
      climbsBackUp,
      meterVisits: constructions + median(visitsPerWindow),
      entries: stepList.filter((step) => !called.has(step.id)).length,
      stepList,
      occasional: occasional.sort((x, y) => y.windows - x.windows || (x.id < y.id ? -1 : 1)),
      climbList: edgeList.filter((edge) => edge.climb),
      promises: promises?.report() ?? null,
    };
  } finally {
    promises?.stop();
    await worker?.close();
    session.close();
    await gateway.close();
    await upstream.close();
  }
}

function numberOption(name: string, fallback: number): number {
  const argument = process.argv.find((value) => value.startsWith(`--${name}=`));
  const value = argument === undefined ? fallback : Number(argument.slice(name.length + 3));
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} takes a whole number of requests`);
  return value;
}

export function walkOptionsFromArguments(): WalkOptions {
  return {
    warmUp: numberOption('warm-up', 200),
    covered: numberOption('covered', 40),
    traced: numberOption('traced', 5),
    promises: process.argv.includes('--promises'),
  };
}

export function printWalk(report: WalkReport, list: boolean): void {
  console.log(`chat walk: ${report.request}`);
  console.log(`  requests: ${report.requests.warmUp} warm-up, ${report.requests.covered} counted, ${report.requests.traced} traced`);
  console.log(`  steps ${report.steps} · files ${report.files} · call edges ${report.edges} · climbs ${report.climbs} · RequestMeter visits ${report.meterVisits}`);
  console.log(`  in the order entered: ${report.entered} entries, ${report.moves} moves between files, ${report.climbsBackUp} climbs back up`);
  console.log(`  steps entered from outside src/ (node:http, events, timers, resumed awaits): ${report.entries}`);
  const { promises } = report;
  if (promises !== null) {
    console.log(`  promises per request: ${promises.perRequest} (traced: src/ ${promises.src} · node/undici ${promises.outside} · mock upstream ${promises.harness}; an await counts one)`);
  }
  if (!list) return;
  console.log('\nsteps (calls per request):');
  for (const step of report.stepList) console.log(`  ${step.calls}× ${step.id}`);
  console.log('\nfunctions in some windows only (windows of the counted requests):');
  for (const entry of report.occasional) console.log(`  ${entry.windows}/${report.requests.covered} ${entry.id}`);
  console.log('\nclimbs:');
  for (const edge of report.climbList) console.log(`  ${edge.from} → ${edge.to}`);
  if (promises === null) return;
  console.log('\npromises by the src/ line that made them (per request, traced requests):');
  for (const entry of promises.bySource) console.log(`  ${entry.perRequest}× ${entry.where}`);
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const report = await measureRequestWalk(walkOptionsFromArguments());
  if (process.argv.includes('--json')) console.log(JSON.stringify(report, null, 2));
  else printWalk(report, process.argv.includes('--list'));
  // The gateway's pools and timers are closed; anything left (the client's kept-alive socket) must not hold the process.
  process.exit(0);
}
