import { rm } from 'node:fs/promises';
import { BatchWriter } from '../shared/batch-writer.js';
import { describeError, type Logger } from '../shared/logger.js';
import type { UsageLogRow } from '../domain/usage-records.js';
import type { Storage } from '../storage/storage.js';
import { writeDeadLetter } from './dead-letter-file.js';

export interface UsageLogWriterOptions {
  maxBatch?: number;
  intervalMs?: number;
  /** Attempts at writing one batch before the writer leaves it to its kept file and moves on. */
  maxAttempts?: number;
  /** Wait after the first failed attempt; doubled after each further one. */
  retryDelayMs?: number;
  /**
   * Where a batch the database refuses is kept (on disk, after the first failed attempt) until it is written: by a
   * later attempt, the gateway's background replay (dead-letter-replayer.ts) or `unigate usage replay`. Null keeps
   * retrying in memory forever.
   */
  deadLetterDirectory?: string | null;
  now?: () => number;
}

/**
 * Metadata-only usage rows (no prompt, completion or tool-argument text), written in batches off the hot path. A
 * batch the database refuses is first kept in a file of the data directory (fsync'd, so a crash loses none of it),
 * then retried with a doubling wait a bounded number of times: written, its file is removed; still refused, the
 * writer moves on and leaves the file to the background replay (logged with its row count and file name, never its
 * content).
 */
export class UsageLogWriter {
  readonly #writer: BatchWriter<UsageLogRow>;
  /** Stopping: a batch already kept on disk is not retried further (the next start writes it). */
  #closing = false;
  /** Writes the usage rows that travel with something else (settlements that carry their row), before `flush` returns. */
  #carriers: Array<() => Promise<void>> = [];

  constructor(storage: Pick<Storage, 'usage'>, private readonly logger: Logger, options: UsageLogWriterOptions = {}) {
    const maxAttempts = options.maxAttempts ?? 5;
    const retryDelayMs = options.retryDelayMs ?? 500;
    const directory = options.deadLetterDirectory ?? null;
    const now = options.now ?? Date.now;
    const write = async (rows: UsageLogRow[]): Promise<void> => {
      if (directory === null) return storage.usage.insertBatch(rows);
      let kept: string | null = null;
      for (let attempt = 1; ; attempt += 1) {
        try {
          await storage.usage.insertBatch(rows);
          // Written after all: the kept copy goes (the background replay may have applied and removed it already).
          if (kept !== null) await rm(kept, { force: true });
          return;
        } catch (error) {
          kept ??= await writeDeadLetter(directory, rows, now());
          if (attempt >= maxAttempts || this.#closing) {
            this.logger.error('usage-log: batch could not be written, kept in a file; the gateway writes it once the database answers', {
              rows: rows.length,
              attempts: attempt,
              file: kept,
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
      intervalMs: options.intervalMs ?? 500,
      retryDelayMs: 1000,
    }, logger);
  }

  record(row: UsageLogRow): void {
    this.#writer.add(row);
  }

  /**
   * Some rows are written by another writer's batch (on PostgreSQL a settled request's row goes with its settlement):
   * `flush` then writes that one's queue too, so that after it every row recorded so far is stored.
   */
  carriedBy(flush: () => Promise<void>): void {
    this.#carriers.push(flush);
  }

  /** Writes every row recorded so far, those carried by another writer included. */
  async flush(): Promise<void> {
    await Promise.all([this.#writer.flush(), ...this.#carriers.map((carrier) => carrier())]);
  }

  close(): Promise<void> {
    this.#closing = true;
    return this.#writer.close();
  }
}
