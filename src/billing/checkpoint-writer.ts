import type { Clock } from '../shared/clock.js';
import { describeError, type Logger } from '../shared/logger.js';
import type { Storage } from '../storage/storage.js';
import type { LedgerOptions } from './ledger-requests.js';
import type { StorageSteps } from './storage-steps.js';
import type { StreamCheckpoints } from './stream-checkpoints.js';

/**
 * Writes the checkpoints of this instance's streams in flight: every `checkpointMs` those whose figure changed, and a
 * stream's first soon after its first byte. Each write is a storage step, in turn with the money transactions.
 */
export class CheckpointWriter {
  #interval: NodeJS.Timeout | null = null;
  /** The write of the first checkpoints due (streams whose first byte went out), or null. */
  #dueTimer: NodeJS.Timeout | null = null;
  #writing = false;

  constructor(
    private readonly checkpoints: StreamCheckpoints,
    private readonly steps: StorageSteps,
    private readonly storage: Storage,
    private readonly options: LedgerOptions,
    private readonly clock: Clock,
    private readonly logger: Logger,
    /** The ledger is closed: nothing more is written. */
    private readonly closed: () => boolean,
  ) {}

  start(): void {
    this.#interval = setInterval(() => {
      this.write().catch((error: unknown) => this.logger.warn('stream checkpoints could not be computed', describeError(error)));
    }, this.options.checkpointMs);
    this.#interval.unref();
  }

  stopTimers(): void {
    if (this.#interval !== null) clearInterval(this.#interval);
    if (this.#dueTimer !== null) clearTimeout(this.#dueTimer);
  }

  /**
   * The stream's first byte reached its caller: the upstream bills its input from now on, so its first checkpoint
   * is written now (with those of the streams that start meanwhile), not at the next interval.
   */
  firstByte(requestId: string): void {
    if (this.closed() || !this.checkpoints.markDue(requestId)) return;
    this.#scheduleDue();
  }

  #scheduleDue(): void {
    if (this.#dueTimer !== null || this.closed()) return;
    this.#dueTimer = setTimeout(() => {
      this.#dueTimer = null;
      this.write(true).catch((error: unknown) => this.logger.warn('stream checkpoints could not be computed', describeError(error)));
    }, this.options.firstCheckpointMs ?? 50);
    this.#dueTimer.unref();
  }

  /**
   * Writes the checkpoints of the streams whose figure changed (`dueOnly`: of the streams whose first checkpoint is
   * due), in one batch, in turn with the money transactions: a stream settled before its checkpoint is written is
   * left out, and one settled after has it deleted by its settlement's transaction.
   */
  async write(dueOnly = false): Promise<void> {
    if (this.closed() || this.checkpoints.size === 0) return;
    if (this.#writing) {
      // A write is under way: the first checkpoints that fell due meanwhile get their own right after it.
      if (dueOnly) this.#scheduleDue();
      return;
    }
    this.#writing = true;
    try {
      const pending = await this.checkpoints.changed(dueOnly);
      if (pending.length === 0) return;
      // Checked and claimed in one turn: no other step may start in between.
      while (this.steps.running !== null) await this.steps.running;
      if (this.closed()) return;
      const rows = this.checkpoints.claimForWrite(pending);
      if (rows.length === 0) return;
      await this.steps.step(() => this.storage.money.writeCheckpoints(this.options.instanceId, rows, this.clock.now()).catch((error: unknown) => {
        this.checkpoints.forget(rows);
        this.logger.warn('stream checkpoints could not be written; retried at the next', { ...describeError(error), streams: rows.length });
      }));
    } finally {
      this.#writing = false;
    }
  }
}
