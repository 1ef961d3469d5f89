import type { Clock } from '../shared/clock.js';
import { describeError, type Logger } from '../shared/logger.js';
import { BackgroundJob } from '../shared/background-job.js';
import type { Storage } from '../storage/storage.js';
import { listDeadLetters, readDeadLetter } from './dead-letter-file.js';
import { replayDeadLetters } from './replay-dead-letters.js';

export interface DeadLetterReplayerOptions {
  /** How often the folder is looked at (a directory listing; files are read only when some are there). */
  intervalMs?: number;
}

const DEFAULT_INTERVAL_MS = 2000;

/**
 * Writes the usage rows kept on disk (batches the database refused) to the usage log once the database answers
 * again, in the background and without an operator: every few seconds, when the folder holds files, the same replay
 * as `unigate usage replay` runs. Its depth (rows waiting) is reported for the metrics. The interval is fixed: a
 * look is a directory listing (no database statement), and rows wait on disk no longer than it once the database
 * answers again.
 */
export class DeadLetterReplayer {
  /** Each pass resolves true when kept files were there. */
  readonly #job = new BackgroundJob(() => this.#replay());
  #stopped = false;
  /** Rows waiting in kept files at the last look. */
  #pendingRows = 0;
  #failingSince: number | null = null;

  constructor(
    private readonly usage: Pick<Storage['usage'], 'insertBatch'>,
    private readonly directory: string,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: DeadLetterReplayerOptions = {},
  ) {}

  /** Usage rows kept on disk, not yet in the database (as of the last pass). */
  get pendingRows(): number {
    return this.#pendingRows;
  }

  /** The first pass runs at once (files left by an earlier run are written as soon as the database answers). */
  start(): void {
    if (this.#stopped) return;
    const intervalMs = this.options.intervalMs ?? DEFAULT_INTERVAL_MS;
    this.#job.start({ name: 'usage-log: kept rows', baseMs: intervalMs, maxMs: intervalMs, found: (found) => found, logger: this.logger });
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#job.stop();
  }

  /** One pass; a call while another runs joins it. Never throws (the next pass retries). */
  async replay(): Promise<void> {
    await this.#job.run();
  }

  async #replay(): Promise<boolean> {
    try {
      const files = await listDeadLetters(this.directory);
      if (files.length === 0) {
        this.#pendingRows = 0;
        return false;
      }
      const result = await replayDeadLetters(this.usage, this.directory);
      const rows = result.replayed.reduce((sum, file) => sum + file.rows, 0);
      if (rows > 0) this.logger.info('usage-log: kept rows written to the database', { files: result.replayed.length, rows });
      let pending = 0;
      for (const file of await listDeadLetters(this.directory)) pending += (await readDeadLetter(file).catch(() => [])).length;
      this.#pendingRows = pending;
      if (result.failed.length === 0) {
        this.#failingSince = null;
        return true;
      }
      const now = this.clock.now();
      // Said once when the database starts refusing, then once a minute while it does.
      if (this.#failingSince === null || now - this.#failingSince >= 60_000) {
        this.#failingSince = now;
        this.logger.warn('usage-log: rows kept on disk wait for the database', { files: result.failed.length, rows: pending, reason: result.failed[0]?.reason });
      }
      return true;
    } catch (error) {
      this.logger.warn('usage-log: kept rows could not be read', describeError(error));
      return false;
    }
  }
}
