import { describeError, type Logger } from './logger.js';

/** An idle loop waits at most this many times its base interval between passes. */
export const IDLE_BACKOFF_FACTOR = 60;

export interface PeriodicPassOptions {
  /** Names the loop in the log line of a failed pass. */
  name: string;
  /** The wait after a pass that found work (and the first wait after a nudge's pass). */
  baseMs: number;
  /** The longest wait, reached by doubling after each empty or failed pass; `baseMs × IDLE_BACKOFF_FACTOR` unless given. */
  maxMs?: number;
  /** The wait before the first pass; at once unless given (a loop whose first pass would only add load to a starting instance). */
  firstPassAfterMs?: number;
  /** One pass; resolves true when it found work (so more may be waiting). */
  pass: () => Promise<boolean>;
  logger: Logger;
}

/**
 * Runs a background pass over shared state again and again, never two at once. A pass that finds work keeps the
 * wait at the base interval; each empty (or failing, logged) pass doubles it up to the maximum, so an idle
 * instance costs the database little. `nudge` (work was created here, or another instance signalled some) runs a
 * pass at once and resets the wait; a nudge during a pass runs another right after it, so nothing created meanwhile
 * waits for the backed-off timer; the pass after a nudge waits the base interval even when it found nothing (the
 * nudged work may not have been committed yet). Work nobody nudged about is still found within the maximum wait.
 * A loop whose empty pass does not mean nothing is coming (work that falls due with time, a check that must notice
 * a failure within its interval) gives `maxMs` = `baseMs`: a fixed interval between passes.
 */
export class PeriodicPass {
  readonly #baseMs: number;
  readonly #maxMs: number;
  #waitMs: number;
  #timer: NodeJS.Timeout | null = null;
  #dueAt = 0;
  #running: Promise<void> | null = null;
  #again = false;
  #nudged = false;
  #keepBase = false;
  #started = false;
  #stopped = false;

  constructor(private readonly options: PeriodicPassOptions) {
    this.#baseMs = Math.max(1, options.baseMs);
    this.#maxMs = Math.max(this.#baseMs, options.maxMs ?? this.#baseMs * IDLE_BACKOFF_FACTOR);
    this.#waitMs = this.#baseMs;
  }

  /** The wait before the next timed pass. */
  get waitMs(): number {
    return this.#waitMs;
  }

  /** True while a pass runs. */
  get running(): boolean {
    return this.#running !== null;
  }

  /** Runs the first pass at once (or after `firstPassAfterMs`); later ones follow the waits. */
  start(): void {
    if (this.#started || this.#stopped) return;
    this.#started = true;
    const firstAfterMs = this.options.firstPassAfterMs ?? 0;
    if (firstAfterMs > 0) this.#schedule(firstAfterMs);
    else this.#run();
  }

  /** Work may be waiting: the wait goes back to the base interval and a pass runs now (or right after the running one). */
  nudge(): void {
    if (!this.#started || this.#stopped) return;
    this.#waitMs = this.#baseMs;
    this.#nudged = true;
    if (this.#running !== null) {
      this.#again = true;
      return;
    }
    this.#run();
  }

  /**
   * Work may have come about (cheap to call often, e.g. on every money movement): the wait goes back to the base
   * interval, so the next pass runs within it, but not at once.
   */
  soon(): void {
    if (!this.#started || this.#stopped) return;
    this.#waitMs = this.#baseMs;
    // During a pass: the wait after it stays the base, whatever the pass finds.
    if (this.#running !== null) this.#keepBase = true;
    if (this.#timer !== null && this.#dueAt > Date.now() + this.#baseMs) {
      this.#clearTimer();
      this.#schedule();
    }
  }

  /** No pass starts after this; resolves once a running pass has ended. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#clearTimer();
    await this.#running;
  }

  #run(): void {
    this.#clearTimer();
    this.#again = false;
    const nudged = this.#nudged;
    this.#nudged = false;
    this.#running = this.#pass(nudged).finally(() => {
      this.#running = null;
      if (this.#stopped) return;
      if (this.#again) this.#run();
      else this.#schedule();
    });
  }

  /** After a nudge, an empty pass keeps the base wait: the nudged work may not have been committed yet. */
  async #pass(nudged: boolean): Promise<void> {
    this.#keepBase = false;
    try {
      const found = await this.options.pass();
      this.#waitMs = found || nudged || this.#keepBase ? this.#baseMs : this.#grown();
    } catch (error) {
      this.#waitMs = this.#grown();
      this.options.logger.warn(`${this.options.name}: a pass failed; the next one retries`, describeError(error));
    }
  }

  #grown(): number {
    return Math.min(this.#waitMs * 2, this.#maxMs);
  }

  #schedule(delayMs = this.#waitMs): void {
    this.#dueAt = Date.now() + delayMs;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#run();
    }, delayMs);
    this.#timer.unref();
  }

  #clearTimer(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }
}
