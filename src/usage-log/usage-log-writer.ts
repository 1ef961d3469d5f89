import { BatchWriter } from '../shared/batch-writer.js';
import type { Logger } from '../shared/logger.js';
import type { UsageLogRow } from '../storage/records.js';
import type { Storage } from '../storage/storage.js';

/** Metadata-only usage rows (no prompt, completion or tool-argument text), written in batches off the hot path. */
export class UsageLogWriter {
  readonly #writer: BatchWriter<UsageLogRow>;

  constructor(storage: Storage, logger: Logger, options: { maxBatch?: number; intervalMs?: number } = {}) {
    this.#writer = new BatchWriter((rows) => storage.usage.insertBatch(rows), {
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
