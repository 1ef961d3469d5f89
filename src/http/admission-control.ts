/** The admission controller's bounds (docs/operators.md, "Overload"). */
export interface AdmissionOptions {
  /** Requests this process serves at once, at most (ADMISSION_MAX_IN_FLIGHT); 0 turns admission control off. */
  maxInFlight: number;
  /**
   * Event-loop delay that counts as a standing queue once every sample for `intervalMs` exceeds it
   * (ADMISSION_QUEUE_TARGET_MS); 0 keeps the bound fixed at `maxInFlight`.
   */
  queueTargetMs: number;
  /** How long the delay must stay above the target before the bound is lowered, and between two changes. */
  intervalMs: number;
  /** The adaptive bound never goes below this (or `maxInFlight` when that is smaller). */
  minInFlight: number;
}

/** Long enough that a burst worked off in half a second (1,000 streams opened at once) is no standing queue. */
export const DEFAULT_ADMISSION_INTERVAL_MS = 500;
export const DEFAULT_ADMISSION_MIN_IN_FLIGHT = 64;

/** How often the event-loop delay is sampled. */
const SAMPLE_MS = 10;
/** While a request was refused this recently, the process reports itself overloaded (readiness). */
const OVERLOADED_HOLD_MS = 1000;
/** A lowered bound is this share of the requests in flight when the standing queue was seen. */
const DECREASE_FACTOR = 0.8;
/** Each interval without a standing queue raises the bound by this share (at least one request). */
const INCREASE_SHARE = 0.1;

/**
 * Admission of API requests in one process: a request is admitted while fewer than `limit` requests are in
 * flight, else refused at once (no queue of our own), so the excess costs a few microseconds instead of waiting
 * behind the work the process cannot finish.
 *
 * The bound adapts to the queue the process does have: work that is ready but waits for the event loop. A timer
 * due every 10 ms measures how late it runs (the delay any ready request meets). Like CoDel, only a standing queue
 * counts: when every sample for a whole interval is above the target, the bound drops to 80 % of the requests in
 * flight (never below the floor), and again after each further interval the delay stays high. Once the delay is
 * back under the target, the bound rises by 10 % (at least 1) an interval after the last change, up to
 * `maxInFlight`. One long pause (a garbage collection, a large synchronous write) is a single late sample and
 * lowers nothing.
 */
export class AdmissionControl {
  readonly #options: AdmissionOptions;
  readonly #floor: number;
  readonly #onShed: () => void;
  #limit: number;
  #inFlight = 0;
  #lastShedAt = Number.NEGATIVE_INFINITY;
  /** When the current run of samples above the target began; null while the delay is under it. */
  #aboveSince: number | null = null;
  #lastChangeAt = 0;
  #timer: NodeJS.Timeout | null = null;

  constructor(options: AdmissionOptions, onShed: () => void = () => {}) {
    this.#options = options;
    this.#floor = Math.min(options.minInFlight, options.maxInFlight);
    this.#limit = options.maxInFlight;
    this.#onShed = onShed;
  }

  get enabled(): boolean {
    return this.#options.maxInFlight > 0;
  }

  /** The current bound of requests in flight. */
  get limit(): number {
    return this.#limit;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** True while requests are being refused (one was within the last second): a load balancer should steer away. */
  get overloaded(): boolean {
    return this.enabled && performance.now() - this.#lastShedAt < OVERLOADED_HOLD_MS;
  }

  /** Admits a request (the caller must `release()` it when its response closes) or refuses it. */
  tryAdmit(): boolean {
    if (!this.enabled) return true;
    if (this.#inFlight >= this.#limit) {
      this.#lastShedAt = performance.now();
      this.#onShed();
      return false;
    }
    this.#inFlight += 1;
    return true;
  }

  release(): void {
    if (this.#inFlight > 0) this.#inFlight -= 1;
  }

  /** Starts sampling the event-loop delay (only when a queue target is set). */
  start(): void {
    if (!this.enabled || this.#options.queueTargetMs <= 0 || this.#timer !== null) return;
    let last = performance.now();
    this.#lastChangeAt = last;
    this.#timer = setInterval(() => {
      const now = performance.now();
      this.observeDelay(Math.max(0, now - last - SAMPLE_MS), now);
      last = now;
    }, SAMPLE_MS);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
  }

  /** One sample: the event loop ran a timer `delayMs` late at `nowMs` (performance.now() time). */
  observeDelay(delayMs: number, nowMs: number): void {
    const { queueTargetMs, intervalMs, maxInFlight } = this.#options;
    if (delayMs > queueTargetMs) {
      // Counted from the first late sample, not from when it was due: one long pause alone is no standing queue.
      this.#aboveSince ??= nowMs;
      if (nowMs - this.#aboveSince >= intervalMs && nowMs - this.#lastChangeAt >= intervalMs) {
        this.#limit = Math.max(this.#floor, Math.floor(Math.min(this.#limit, this.#inFlight) * DECREASE_FACTOR));
        this.#lastChangeAt = nowMs;
      }
      return;
    }
    this.#aboveSince = null;
    if (this.#limit < maxInFlight && nowMs - this.#lastChangeAt >= intervalMs) {
      this.#limit = Math.min(maxInFlight, this.#limit + Math.max(1, Math.ceil(this.#limit * INCREASE_SHARE)));
      this.#lastChangeAt = nowMs;
    }
  }
}
