import { BatchWriter } from '../shared/batch-writer.js';
import { describeError, type Logger } from '../shared/logger.js';
import type { UsageLogRow } from '../storage/records.js';
import type { Storage } from '../storage/storage.js';
import { writeDeadLetter } from './dead-letter-file.js';

export interface UsageLogWriterOptions {
  maxBatch?: number;
  intervalMs?: number;
  /** Attempts at writing one batch before it goes to the dead-letter folder. */
  maxAttempts?: number;
  /** Wait after the first failed attempt; doubled after each further one. */
  retryDelayMs?: number;
  /** Where batches that could not be written are kept for `unigate usage replay`; null keeps retrying forever. */
  deadLetterDirectory?: string | null;
  now?: () => number;
}

/**
 * Metadata-only usage rows (no prompt, completion or tool-argument text), written in batches off the hot path. A
 * batch the database refuses is retried with a doubling wait, a bounded number of times; then it is written to a dead-letter file in the data directory
 * (logged with its row count and file name, never its content) and the writer moves on.
 */
export class UsageLogWriter {
  readonly #writer: BatchWriter<UsageLogRow>;

  constructor(storage: Pick<Storage, 'usage'>, private readonly logger: Logger, options: UsageLogWriterOptions = {}) {
    const maxAttempts = options.maxAttempts ?? 5;
    const retryDelayMs = options.retryDelayMs ?? 500;
    const directory = options.deadLetterDirectory ?? null;
    const now = options.now ?? Date.now;
    const write = async (rows: UsageLogRow[]): Promise<void> => {
      if (directory === null) return storage.usage.insertBatch(rows);
      for (let attempt = 1; ; attempt += 1) {
        try {
          await storage.usage.insertBatch(rows);
          return;
        } catch (error) {
          if (attempt >= maxAttempts) {
            const file = await writeDeadLetter(directory, rows, now());
            this.logger.error('usage-log: batch could not be written, kept in a dead-letter file (replay with "unigate usage replay")', {
              rows: rows.length,
              attempts: attempt,
              file,
              ...describeError(error),
            });
            return;
          }
          this.logger.warn('usage-log: batch write failed, retrying', { rows: rows.length, attempt, ...describeError(error) });
          await new Promise((resolve) => setTimeout(resolve, retryDelayMs * 2 ** (attempt - 1)).unref());
        }
      }
    };
    this.#writer = new BatchWriter(write, {
      name: 'usage-log',
      maxBatch: options.maxBatch ?? 500,
      intervalMs: options.intervalMs ?? 200,
      retryDelayMs: 1000,
    }, logger);
  }

  record(row: UsageLogRow): void {
    this.#writer.add(row);
  }

  flush(): Promise<void> {
    return this.#writer.flush();
  }

  close(): Promise<void> {
    return this.#writer.close();
  }
}
