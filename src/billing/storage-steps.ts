/**
 * The ledger's storage steps (a money transaction, a checkpoint write, an outbox write), one at a time, and when the
 * next money transaction runs: now (on the next turn of the event loop), after a delay, or right after the running
 * step. `ended` is told when each step ends.
 */
export class StorageSteps {
  #running: Promise<void> | null = null;
  /** A money transaction fell due while a step ran: it runs right after. */
  #again = false;
  #timer: NodeJS.Timeout | null = null;
  /** A transaction due now, started on the next turn of the event loop (see `kick`). */
  #soon: NodeJS.Immediate | null = null;
  #closed = false;

  constructor(
    private readonly transaction: () => Promise<void>,
    private readonly ended: () => void,
  ) {}

  /** The step under way, or null. */
  get running(): Promise<void> | null {
    return this.#running;
  }

  /** Whether a transaction fell due during the step that ended (asked once: the answer is reset). */
  takeAgain(): boolean {
    const again = this.#again;
    this.#again = false;
    return again;
  }

  /** No transaction is scheduled from now on. */
  close(): void {
    this.#closed = true;
    this.clearTimer();
  }

  clearTimer(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    if (this.#soon !== null) clearImmediate(this.#soon);
    this.#timer = null;
    this.#soon = null;
  }

  /** A money transaction is due in `delayMs` (0: now). */
  kick(delayMs: number): void {
    if (this.#closed) return;
    if (this.#running !== null) {
      // Only what is due now runs right after the running step; settlements that can wait (a delay) are picked up by
      // the step's end, which schedules them `flushIntervalMs` later. Marking those "again" too ran a second
      // transaction straight after nearly every one under load (each carried the few settlements that came meanwhile).
      if (delayMs <= 0) this.#again = true;
      return;
    }
    if (delayMs <= 0) {
      // On the next turn, not in this one: on SQLite a transaction holds the event loop, and back-to-back
      // transactions (a backlog, or settlements that filled a batch) let requests' I/O run between them.
      if (this.#soon !== null) return;
      this.clearTimer();
      this.#soon = setImmediate(() => {
        this.#soon = null;
        if (this.#running === null) void this.run();
        else this.#again = true;
      });
      return;
    }
    this.#timer ??= setTimeout(() => {
      this.#timer = null;
      if (this.#running === null) void this.run();
      else this.#again = true;
    }, delayMs);
    this.#timer.unref();
  }

  /** Runs a money transaction now. */
  run(): Promise<void> {
    this.clearTimer();
    return this.step(this.transaction);
  }

  /** Runs one storage step: the caller makes sure none runs (see `running`). */
  step(work: () => Promise<void>): Promise<void> {
    const running = work().finally(() => {
      this.#running = null;
      this.ended();
    });
    this.#running = running;
    return running;
  }
}
