import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logger.js';
import { HolderSettlements, KeptSettlementFiles, type QueuedSettlement } from './queued-settlements.js';
import type { SettlementOutbox } from './settlement-outbox.js';
import type { StorageSteps } from './storage-steps.js';

/**
 * The ledger's settlements waiting for their money transaction, and their keeping on disk while the database is away:
 * once a transaction fails, every settlement is written to the outbox within a turn of the event loop (an outbox
 * write is a storage step of its own, never beside a transaction) until one commits. Holders' waits for their
 * charges end when those commit.
 */
export class SettlementQueue {
  #queued: QueuedSettlement[] = [];
  /** The outbox's files (null: no outbox, settlements wait in memory). */
  readonly #kept: KeptSettlementFiles | null;
  readonly #holders = new HolderSettlements();
  /** The last money transaction failed: settlements are kept on disk as they come, until one commits. */
  #databaseDown = false;
  /** Settlements arrived while a storage step ran and the database was down: kept once the step ends. */
  #keepWanted = false;
  #keepSoonImmediate: NodeJS.Immediate | null = null;

  constructor(
    outbox: SettlementOutbox | null,
    clock: Clock,
    private readonly logger: Logger,
    private readonly steps: StorageSteps,
    private readonly closed: () => boolean,
  ) {
    this.#kept = outbox === null ? null : new KeptSettlementFiles(outbox, clock, logger);
  }

  get length(): number {
    return this.#queued.length;
  }

  /** Settlements kept on disk and not committed yet (the outbox's depth). */
  get keptCount(): number {
    return this.#kept?.count ?? 0;
  }

  /** Queues a settlement; while the database is down it is kept on disk within a turn of the event loop. */
  push(settlement: QueuedSettlement): void {
    if (settlement.reservation.holder !== undefined) this.#holders.queued(settlement.requestId);
    this.#queued.push(settlement);
    if (this.#databaseDown) this.#keepSoon();
  }

  /** The first `max` settlements, for a transaction (handed back by `failed` when it fails). */
  take(max: number): QueuedSettlement[] {
    return this.#queued.splice(0, max);
  }

  /** Committed: holders' waits end, and the outbox files lose them. */
  committed(settlements: readonly QueuedSettlement[]): void {
    this.#databaseDown = false;
    this.#holders.committed(settlements);
    this.#kept?.committed(settlements);
  }

  /** Their transaction failed: they go back to the head of the queue and are kept on disk, as every one after them. */
  async failed(settlements: readonly QueuedSettlement[]): Promise<void> {
    this.#queued.unshift(...settlements);
    // Kept on disk until a transaction commits them, so a crash or a stop meanwhile loses none.
    this.#databaseDown = true;
    await this.#keepQueued();
  }

  /**
   * Resolves once the settlement of `requestId`, charged against a holder's hold, is committed (at once when none is
   * queued), or after `timeoutMs` at the latest.
   */
  settledAgainstHolder(requestId: string, timeoutMs: number): Promise<boolean> {
    return this.#holders.settled(requestId, timeoutMs);
  }

  /** A storage step ended: keeps what arrived meanwhile if the database is down. True when that started a step. */
  keepWhatArrived(): boolean {
    if (!this.#keepWanted) return false;
    this.#keepWanted = false;
    if (!this.#databaseDown || this.closed() || !this.#queued.some((settlement) => settlement.keptIn === null)) return false;
    void this.steps.step(() => this.#keepQueued());
    return true;
  }

  /**
   * At shutdown, after a transaction failed: keeps everything queued on disk (the next start of this instance id
   * applies it) and empties the queue. False when some settlement could not be kept (the caller goes on trying).
   */
  async leaveOnDisk(): Promise<boolean> {
    while (this.steps.running !== null) await this.steps.running;
    if (this.#queued.some((settlement) => settlement.keptIn === null)) await this.steps.step(() => this.#keepQueued());
    if (!this.#queued.every((settlement) => settlement.keptIn !== null)) return false;
    if (this.#queued.length > 0) this.logger.warn('money: the database refuses at shutdown; queued settlements stay on disk for the next start', { settlements: this.#queued.length });
    this.#queued = [];
    return true;
  }

  /** No keeping is scheduled from now on. */
  stop(): void {
    if (this.#keepSoonImmediate !== null) clearImmediate(this.#keepSoonImmediate);
  }

  #keepSoon(): void {
    if (this.#kept === null || this.closed()) return;
    if (this.steps.running !== null) {
      this.#keepWanted = true;
      return;
    }
    this.#keepSoonImmediate ??= setImmediate(() => {
      this.#keepSoonImmediate = null;
      if (this.steps.running !== null) this.#keepWanted = true;
      else this.steps.step(() => this.#keepQueued());
    });
  }

  /** Writes the queued settlements not kept yet to one outbox file (a storage step: no transaction runs meanwhile). */
  async #keepQueued(): Promise<void> {
    await this.#kept?.keep(this.#queued);
  }
}
