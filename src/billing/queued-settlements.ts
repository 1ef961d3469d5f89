import type { Clock } from '../shared/clock.js';
import { describeError, type Logger } from '../shared/logger.js';
import type { KeptSettlement, SettlementOutbox } from './settlement-outbox.js';

/** A settlement waiting for its transaction, and the outbox file that keeps it (null: in memory only). */
export interface QueuedSettlement extends KeptSettlement {
  keptIn: string | null;
}

/**
 * The outbox files that keep queued settlements while the database is away, and how many of each file's settlements
 * are not committed yet: a file goes once none is left.
 */
export class KeptSettlementFiles {
  readonly #remaining = new Map<string, number>();

  constructor(
    private readonly outbox: SettlementOutbox,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** Settlements kept on disk and not committed yet (the outbox's depth). */
  get count(): number {
    let count = 0;
    for (const remaining of this.#remaining.values()) count += remaining;
    return count;
  }

  /** Writes the queued settlements not kept yet to one outbox file; on failure they wait in memory. */
  async keep(queued: readonly QueuedSettlement[]): Promise<void> {
    const unkept = queued.filter((settlement) => settlement.keptIn === null);
    if (unkept.length === 0) return;
    try {
      const file = await this.outbox.keep(unkept, this.clock.now());
      for (const settlement of unkept) settlement.keptIn = file;
      this.#remaining.set(file, unkept.length);
      this.logger.warn('money: settlements kept on disk until the database answers', { settlements: unkept.length, kept: this.count });
    } catch (error) {
      this.logger.error('money: settlements could not be kept on disk; they wait in memory', { ...describeError(error), settlements: unkept.length });
    }
  }

  /** Committed: their files lose them, and a file none is left in is removed. */
  committed(settlements: readonly QueuedSettlement[]): void {
    const done: string[] = [];
    for (const settlement of settlements) {
      const file = settlement.keptIn;
      if (file === null) continue;
      const remaining = (this.#remaining.get(file) ?? 1) - 1;
      if (remaining > 0) {
        this.#remaining.set(file, remaining);
      } else {
        this.#remaining.delete(file);
        done.push(file);
      }
    }
    if (done.length === 0) return;
    this.logger.info('money: settlements kept on disk are committed', { files: done.length, kept: this.count });
    // Applying a file again (a crash before it is gone) moves no money: its entries are in storage.
    this.outbox.remove(done).catch((error: unknown) => this.logger.warn('money: committed outbox files could not be removed; the next start skips their settlements', describeError(error)));
  }
}

/** Settlements charged against a holder's hold, by request id, until their transaction commits. */
export class HolderSettlements {
  readonly #waiting = new Map<string, { promise: Promise<void>; resolve: () => void }>();

  /** The settlement of `requestId` is queued. */
  queued(requestId: string): void {
    if (this.#waiting.has(requestId)) return;
    let resolve = (): void => {};
    const promise = new Promise<void>((done) => {
      resolve = done;
    });
    this.#waiting.set(requestId, { promise, resolve });
  }

  committed(settlements: readonly QueuedSettlement[]): void {
    for (const settlement of settlements) {
      const waiting = this.#waiting.get(settlement.requestId);
      if (waiting === undefined) continue;
      this.#waiting.delete(settlement.requestId);
      waiting.resolve();
    }
  }

  /** Resolves true once the settlement of `requestId` is committed (at once when none is queued), false after `timeoutMs`. */
  async settled(requestId: string, timeoutMs: number): Promise<boolean> {
    const waiting = this.#waiting.get(requestId);
    if (waiting === undefined) return true;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
      timer.unref();
    });
    try {
      return await Promise.race([waiting.promise.then(() => true), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
