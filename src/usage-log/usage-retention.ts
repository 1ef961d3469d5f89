import type { Clock } from '../shared/clock.js';
import { describeError, type Logger } from '../shared/logger.js';
import { BackgroundJob } from '../shared/background-job.js';
import type { UsageLogRepository } from '../storage/storage.js';

const DAY_MS = 86_400_000;

export interface UsageRetentionOptions {
  /** Rows older than this many days are deleted (USAGE_RETENTION_DAYS). */
  retentionDays: number;
  /** Time between two passes. */
  intervalMs?: number;
  /** Delay of the first pass after start, so a starting fleet does not prune while it warms up. */
  firstPassDelayMs?: number;
  /** Rows deleted per statement. */
  batchSize?: number;
  /** Pause between two batches, leaving the database and the event loop to requests. */
  pauseMs?: number;
}

export interface UsageRetentionPass {
  deleted: number;
  batches: number;
  /** True when another instance was pruning, so this one left the work to it. */
  yielded: boolean;
}

const DEFAULT_INTERVAL_MS = 3_600_000;
const DEFAULT_FIRST_PASS_DELAY_MS = 60_000;
const DEFAULT_BATCH_SIZE = 5000;
const DEFAULT_PAUSE_MS = 250;

/**
 * Deletes usage-log rows past their retention age in the background: each pass deletes in bounded batches with a
 * pause between them until no old row is left, and stops early when the gateway stops or another instance holds
 * the pruning lock. Only usage-log rows go: ledger entries keep their request ids, so the books still balance.
 * Rows age past retention with time, so the interval is fixed (an empty pass says nothing about the next hour).
 */
export class UsageRetention {
  readonly #job = new BackgroundJob(() => this.#prune());
  #stopped = false;
  #wakeUp: (() => void) | null = null;
  readonly #intervalMs: number;
  readonly #batchSize: number;
  readonly #pauseMs: number;

  constructor(
    private readonly usage: UsageLogRepository,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: UsageRetentionOptions,
  ) {
    this.#intervalMs = options.intervalMs ?? DEFAULT_INTERVAL_MS;
    this.#batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
    this.#pauseMs = options.pauseMs ?? DEFAULT_PAUSE_MS;
  }

  start(): void {
    if (this.#stopped) return;
    this.#job.start({
      name: 'usage-log retention',
      baseMs: this.#intervalMs,
      maxMs: this.#intervalMs,
      firstPassAfterMs: this.options.firstPassDelayMs ?? DEFAULT_FIRST_PASS_DELAY_MS,
      found: (pass) => pass.deleted > 0,
      logger: this.logger,
    });
  }

  /** Stops the schedule; a pass in progress ends after its current batch. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#wakeUp?.();
    await this.#job.stop();
  }

  /** One pass; a call while another runs joins it. Never throws (failures are logged, the next pass retries). */
  prune(): Promise<UsageRetentionPass> {
    return this.#job.run();
  }

  async #prune(): Promise<UsageRetentionPass> {
    const pass: UsageRetentionPass = { deleted: 0, batches: 0, yielded: false };
    const before = this.clock.now() - this.options.retentionDays * DAY_MS;
    try {
      while (!this.#stopped) {
        const deleted = await this.usage.pruneBatch(before, this.#batchSize);
        if (deleted === null) {
          pass.yielded = true;
          break;
        }
        pass.batches += 1;
        pass.deleted += deleted;
        if (deleted < this.#batchSize) break;
        await this.#pause();
      }
    } catch (error) {
      this.logger.warn('usage-log retention pass failed; the next pass retries', describeError(error));
    }
    if (pass.deleted > 0) this.logger.info('usage-log rows past retention deleted', { deleted: pass.deleted, before: new Date(before).toISOString() });
    return pass;
  }

  #pause(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, this.#pauseMs);
      timer.unref();
      this.#wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
