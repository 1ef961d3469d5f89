import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** How often the process's busyness is sampled. */
const CHECK_MS = 1000;
/** A sample with the event loop busy at least this share of the time counts as load. */
const BUSY_UTILIZATION = 0.2;
/** A sample under this share counts as quiet (background timers stay well below it). */
const QUIET_UTILIZATION = 0.05;
/** Wait after `start` before the collection that ends the start-up burst. */
const AFTER_START_MS = 1000;

export interface IdleMemoryReliefOptions {
  /** Quiet time after load before the collection runs (ms); 0 turns the relief off. */
  idleMs: number;
  /** Requests in flight: the collection waits while any is. */
  inFlight: () => number;
  /** Runs one full collection; the default is V8's own. */
  collect?: () => void;
  /** Event-loop utilization since the previous call (0..1); the default reads node:perf_hooks. */
  utilization?: () => number;
  /** Told after each collection: how long it held the event loop, the CPU it took (all threads) and V8's heap size before and after. */
  onCollected?: (result: { durationMs: number; cpuMs: number; heapTotalBefore: number; heapTotalAfter: number }) => void;
}

/**
 * Hands the memory a burst of load left behind back to the OS once the process has gone quiet. Under load V8 grows
 * its young generation to its maximum and spreads survivors over many old-space pages; its own memory reducer gives
 * them back only when it happens to notice the idle, often minutes later. One full collection after `idleMs` of
 * quiet following load lets V8 shrink both at once. It never runs while a request is in flight or the event loop is
 * busy, and at most once per burst of load. Starting is such a burst too (modules compiled, migrations, the catalog
 * read grow the young generation to tens of MiB): one collection follows it, a second after `start`.
 */
export class IdleMemoryRelief {
  readonly #options: Required<IdleMemoryReliefOptions>;
  #timer: NodeJS.Timeout | null = null;
  #afterStart: NodeJS.Timeout | null = null;
  /** Load was seen since the last collection. */
  #pending = false;
  #quietMs = 0;

  constructor(options: IdleMemoryReliefOptions) {
    this.#options = { collect: fullCollection(), utilization: eventLoopUtilization(), onCollected: () => {}, ...options };
  }

  start(): void {
    if (this.#options.idleMs <= 0 || this.#timer !== null) return;
    this.#timer = setInterval(() => this.check(CHECK_MS), CHECK_MS);
    this.#timer.unref();
    this.#afterStart = setTimeout(() => {
      this.#afterStart = null;
      // Requests already in flight: the collection waits for the quiet after them, as after any load.
      if (this.#options.inFlight() === 0) this.#collect();
      else this.#pending = true;
    }, AFTER_START_MS);
    this.#afterStart.unref();
  }

  stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    if (this.#afterStart !== null) clearTimeout(this.#afterStart);
    this.#timer = null;
    this.#afterStart = null;
  }

  /** One sample covering the last `elapsedMs`; returns whether it ran the collection. */
  check(elapsedMs: number): boolean {
    if (this.#options.idleMs <= 0) return false;
    const utilization = this.#options.utilization();
    if (utilization >= BUSY_UTILIZATION) this.#pending = true;
    const quiet = utilization < QUIET_UTILIZATION && this.#options.inFlight() === 0;
    this.#quietMs = quiet ? this.#quietMs + elapsedMs : 0;
    if (!this.#pending || this.#quietMs < this.#options.idleMs) return false;
    this.#pending = false;
    this.#collect();
    return true;
  }

  #collect(): void {
    const heapTotalBefore = process.memoryUsage().heapTotal;
    const startedAt = performance.now();
    const cpuBefore = process.cpuUsage();
    this.#options.collect();
    const cpu = process.cpuUsage(cpuBefore);
    this.#options.onCollected({
      durationMs: performance.now() - startedAt,
      cpuMs: (cpu.user + cpu.system) / 1000,
      heapTotalBefore,
      heapTotalAfter: process.memoryUsage().heapTotal,
    });
  }
}

/** Event-loop utilization between one call and the next. */
function eventLoopUtilization(): () => number {
  let previous = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const delta = performance.eventLoopUtilization(now, previous);
    previous = now;
    return delta.utilization;
  };
}

/** The options V8's `gc` takes (Node 22 and later). */
interface CollectionOptions {
  type: 'major';
  execution: 'sync';
  /** `last-resort`: collects with the memory-reducing flag, the only full collection that also shrinks the young generation. */
  flavor: 'last-resort';
}

/**
 * V8's full collection without starting node with --expose-gc: the flag installs `gc` in contexts created after
 * it is set, so a fresh context hands the function out; the main context's globals stay as they were. The
 * memory-reducing flavour: a plain full collection leaves the young generation at the size load grew it to (tens
 * of MiB of resident pages); this one gives it back too.
 */
function fullCollection(): () => void {
  let collect: ((options: CollectionOptions) => void) | undefined;
  return () => {
    if (collect === undefined) {
      setFlagsFromString('--expose-gc');
      collect = runInNewContext('gc') as (options: CollectionOptions) => void;
    }
    collect({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  };
}
