import { describeError, type Logger } from './logger.js';

export interface BatchWriterOptions {
  name: string;
  /** Flush as soon as this many items wait. */
  maxBatch: number;
  /** Otherwise flush this long after the first item arrived. */
  intervalMs: number;
  /** Pause after a failed write before trying the same batch again. */
  retryDelayMs: number;
}

/**
 * Collects items off the hot path and writes them in batches, one write at a time. A failed batch is kept and
 * retried, never dropped: these items are money and usage records.
 */
export class BatchWriter<T> {
  #queue: T[] = [];
  #timer: NodeJS.Timeout | null = null;
  #writing: Promise<void> | null = null;
  #closed = false;

  constructor(
    private readonly write: (items: T[]) => Promise<void>,
    private readonly options: BatchWriterOptions,
    private readonly logger: Logger,
  ) {}

  get pending(): number {
    return this.#queue.length;
  }

  add(item: T): void {
    this.#queue.push(item);
    if (this.#queue.length >= this.options.maxBatch) this.#kick(0);
    else if (this.#timer === null) this.#kick(this.options.intervalMs);
  }

  /** Writes everything queued so far (and anything added while writing). */
  async flush(): Promise<void> {
    this.#clearTimer();
    while (this.#writing !== null || this.#queue.length > 0) {
      if (this.#writing !== null) await this.#writing;
      else await this.#startWrite(false);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.flush();
  }

  #kick(delayMs: number): void {
    if (this.#closed) return;
    if (this.#timer !== null) {
      if (delayMs > 0) return;
      this.#clearTimer();
    }
    this.#timer = setTimeout(() => {
      this.#timer = null;
      if (this.#writing === null && this.#queue.length > 0) void this.#startWrite(true);
    }, delayMs);
    this.#timer.unref();
  }

  #clearTimer(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }

  #startWrite(scheduleFollowUp: boolean): Promise<void> {
    const batch = this.#queue.splice(0, this.options.maxBatch);
    const writing = this.write(batch)
      .catch(async (error: unknown) => {
        this.logger.error(`${this.options.name}: batch write failed, will retry`, { items: batch.length, ...describeError(error) });
        this.#queue.unshift(...batch);
        await new Promise((resolve) => setTimeout(resolve, this.options.retryDelayMs).unref());
      })
      .finally(() => {
        this.#writing = null;
        if (scheduleFollowUp && this.#queue.length > 0) this.#kick(this.#queue.length >= this.options.maxBatch ? 0 : this.options.intervalMs);
      });
    this.#writing = writing;
    return writing;
  }
}
