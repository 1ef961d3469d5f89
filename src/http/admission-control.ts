import { performance } from 'node:perf_hooks';

/** The admission controller's bounds (docs/operators.md, "Overload"). */
export interface AdmissionOptions {
  /** Requests this process serves at once, at most (ADMISSION_MAX_IN_FLIGHT); 0 turns admission control off. */
  maxInFlight: number;
  /**
   * Event-loop delay that counts as a standing queue when the median sample of two intervals in a row exceeds it
   * (ADMISSION_QUEUE_TARGET_MS); 0 keeps every arrival admitted up to `maxInFlight`.
   */
  queueTargetMs: number;
  /** How long each median of the delay is taken over; the admitted share changes at most once an interval. */
  intervalMs: number;
  /** The admitted share never goes below this. */
  minShare: number;
}

/**
 * Short enough to act within a second of an overload, long enough to hold a few dozen samples even when each
 * turn of a busy event loop takes 10-20 ms.
 */
export const DEFAULT_ADMISSION_INTERVAL_MS = 250;
/** Even a process that stays overloaded serves a tenth of what arrives: refusing is not free either. */
export const DEFAULT_ADMISSION_MIN_SHARE = 0.1;

/** One admission's credit, less a rounding allowance: ten arrivals at a share of 0.1 add up to 0.9999999999999999. */
const CREDIT_FOR_ONE = 1 - 1e-9;
/** How often the event-loop delay is sampled. */
const SAMPLE_MS = 10;
/** While a request was refused this recently, the process reports itself overloaded (readiness). */
const OVERLOADED_HOLD_MS = 1000;
/**
 * A late interval lowers the share only when the one before it was late too: the first turns of a burst (1,000
 * connections opened at once took single turns of 100-200 ms) make one late interval, a standing queue makes a run.
 */
const LATE_INTERVALS_TO_SHED = 2;
/**
 * An overloaded interval multiplies the admitted share by the target over its median delay, at most by this (a
 * median just over the target) ...
 */
const DECREASE_FACTOR = 0.8;
/** ... and at least by this (a median of twice the target or more): a flood is met within a few intervals. */
const STEEPEST_DECREASE_FACTOR = 0.5;
/** Each interval without overload raises the share by this much (a tenth of all arrivals), up to all. */
const INCREASE_STEP = 0.1;

/**
 * Admission of API requests in one process: requests are admitted up to `maxInFlight` at once, and of those that
 * arrive while the process is overloaded only a share; the rest are refused at once (no queue of our own), so the
 * excess costs a few microseconds instead of waiting behind the work the process cannot finish.
 *
 * Overload is a standing queue of ready work, seen as event-loop delay: a timer due every 10 ms measures how late it
 * runs, which is about how long each turn of the loop takes, and so how long any ready request waits. In an
 * overloaded process most of the queue is in the kernel, out of the process's sight (requests unread on their
 * connections, connections not yet accepted: libuv accepts one connection per turn of the loop), and it grows as long
 * as more arrives than the process serves; what the process sees is turns that stay long. When the median delay of
 * two intervals in a row is above `queueTargetMs`, the admitted share drops (to 80 % of itself, or to the target over
 * the median when that is lower, but never below half; never below `minShare`), and again with each further such
 * interval, so refusals free the time the process needs to read, accept and refuse what it cannot serve; each
 * interval below the target raises it by a tenth of all arrivals, back to all. While the share is below 1 (and above
 * the floor), an arrival in a turn that has outlasted the sampler's 10 ms period is refused whatever the share: every
 * turn a request needs costs it the whole turn, so the admitted requests' time is bounded by refusing the tail of long
 * turns, not only by the share of an interval.
 * Single long pauses (a garbage collection, a large synchronous write) and a burst the loop works off within an
 * interval or two are no standing queue. The admissions are spread evenly: at a share of 0.75, three of every four
 * arrivals are admitted.
 */
export class AdmissionControl {
  readonly #options: AdmissionOptions;
  readonly #onShed: () => void;
  #share = 1;
  /** Admissions owed at the current share: each arrival adds the share, each admission takes one. */
  #credit = 0;
  #inFlight = 0;
  #lastShedAt = Number.NEGATIVE_INFINITY;
  #timer: NodeJS.Timeout | null = null;
  /** When the delay sampler last ran (null: not sampling): it is due again SAMPLE_MS later. */
  #lastSampleAt: number | null = null;
  /** Intervals in a row whose median delay was above the target. */
  #lateIntervals = 0;

  constructor(options: AdmissionOptions, onShed: () => void = () => {}) {
    this.#options = options;
    this.#onShed = onShed;
  }

  get enabled(): boolean {
    return this.#options.maxInFlight > 0;
  }

  /** The bound of requests in flight. */
  get limit(): number {
    return this.#options.maxInFlight;
  }

  /** The share of arriving requests admitted now (1 unless overloaded). */
  get share(): number {
    return this.#share;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** True while requests are being refused (one was within the last second): a load balancer should steer away. */
  get overloaded(): boolean {
    return this.enabled && performance.now() - this.#lastShedAt < OVERLOADED_HOLD_MS;
  }

  /**
   * Admits a request arriving at `now` (performance.now(); the caller must `release()` it when its response closes)
   * or refuses it.
   */
  tryAdmit(now = performance.now()): boolean {
    if (!this.enabled) return true;
    if (this.#inFlight >= this.#options.maxInFlight) return this.#refuse(now);
    if (this.#share < 1) {
      // A turn that has outlasted the sampler's period is long already, and a request admitted into it waits for it
      // and for each further turn it needs (the body, the upstream's answer, the response): while the process sheds,
      // such a turn admits nothing more, whatever the credit, so the admitted work is bounded per turn. Not at the
      // floor: there the turns are long whatever is admitted (refusals and other processes fill them), and the floor
      // is what the process serves anyway.
      if (this.#share > this.#options.minShare && this.#lateBy(now) > 0) return this.#refuse(now);
      this.#credit += this.#share;
      if (this.#credit < CREDIT_FOR_ONE) return this.#refuse(now);
      this.#credit -= 1;
    }
    this.#inFlight += 1;
    return true;
  }

  release(): void {
    if (this.#inFlight > 0) this.#inFlight -= 1;
  }

  /** Starts sampling the event-loop delay (only when a queue target is set). */
  start(): void {
    const { queueTargetMs, intervalMs } = this.#options;
    if (!this.enabled || queueTargetMs <= 0 || this.#timer !== null) return;
    let last = performance.now();
    this.#lastSampleAt = last;
    let intervalStart = last;
    const delays: number[] = [];
    this.#timer = setInterval(() => {
      const now = performance.now();
      delays.push(Math.max(0, now - last - SAMPLE_MS));
      last = now;
      this.#lastSampleAt = now;
      if (now - intervalStart < intervalMs) return;
      this.observeInterval(delays);
      delays.length = 0;
      intervalStart = now;
    }, SAMPLE_MS);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    this.#lastSampleAt = null;
  }

  /**
   * How late the delay sampler is at `now` (not above 0 while it is not due, or not sampling): above 0, the turn under
   * way has lasted past the sampler's due time.
   */
  #lateBy(now: number): number {
    return this.#lastSampleAt === null ? Number.NEGATIVE_INFINITY : now - this.#lastSampleAt - SAMPLE_MS;
  }

  /**
   * The end of one interval with its delay samples (ms, in any order; reordered here): when their median is above the
   * target for the second interval in a row or more, lowers the admitted share; when it is not, raises it.
   */
  observeInterval(delaysMs: number[]): void {
    if (delaysMs.length === 0) return;
    delaysMs.sort((left, right) => left - right);
    const median = delaysMs[Math.floor((delaysMs.length - 1) / 2)]!;
    if (median > this.#options.queueTargetMs) {
      this.#lateIntervals += 1;
      if (this.#lateIntervals >= LATE_INTERVALS_TO_SHED) {
        const factor = Math.min(DECREASE_FACTOR, Math.max(STEEPEST_DECREASE_FACTOR, this.#options.queueTargetMs / median));
        this.#share = Math.max(this.#options.minShare, this.#share * factor);
      }
    } else {
      this.#lateIntervals = 0;
      if (this.#share < 1) this.#share = Math.min(1, this.#share + INCREASE_STEP);
    }
    if (this.#share === 1) this.#credit = 0;
  }

  #refuse(now: number): false {
    this.#lastShedAt = now;
    this.#onShed();
    return false;
  }
}
