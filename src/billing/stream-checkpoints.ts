import type { NanoUsd } from '../domain/records.js';
import type { UsageLogRow } from '../domain/usage-records.js';
import type { StoredCheckpoint } from '../storage/storage.js';
import { decodeUsageRow, encodeUsageRow } from '../usage-log/usage-row-json.js';
import type { Reservation } from './money-pools.js';

/** What a stream in flight would be billed if it stopped now: its charge and the usage row it would leave. */
export interface StreamFigure {
  costNano: NanoUsd;
  row: UsageLogRow;
}

interface TrackedStream {
  reservation: Reservation;
  figure: () => Promise<StreamFigure>;
  /** A cheaper figure for the checkpoint written at the first byte (null: `figure`). */
  opening: (() => Promise<StreamFigure>) | null;
  /** The charge of the checkpoint last written, or null (none yet, or its write failed). */
  written: NanoUsd | null;
  /** A checkpoint of it may be in storage. */
  stored: boolean;
  /** Its first byte reached the caller and no checkpoint of it was written since: it is due now, not at the next interval. */
  due: boolean;
}

/** A checkpoint whose figure changed since the last one written, ready for storage. */
export interface PendingCheckpoint {
  stored: StoredCheckpoint;
  costNano: NanoUsd;
}

/**
 * The streams in flight of this instance and what each would be billed if the instance died now. The request path
 * only adds and removes a stream (one map operation each); the ledger's timer asks for the figures every few
 * seconds and writes those that changed. A stream's settlement deletes its checkpoint in the transaction that
 * charges it, so `finish` reports whether one may have been written.
 */
export class StreamCheckpoints {
  readonly #streams = new Map<string, TrackedStream>();

  get size(): number {
    return this.#streams.size;
  }

  /**
   * Tracks a stream (again, for the next attempt of a retried request: a checkpoint already stored stays known).
   * `opening`: the figure of its first checkpoint, at its first byte, when that can be had cheaper than `figure`.
   */
  track(requestId: string, reservation: Reservation, figure: () => Promise<StreamFigure>, opening: (() => Promise<StreamFigure>) | null = null): void {
    const stored = this.#streams.get(requestId)?.stored ?? false;
    this.#streams.set(requestId, { reservation, figure, opening, written: null, stored, due: false });
  }

  /**
   * The stream's first byte reached the caller: the upstream has accepted the request and bills its input from now
   * on, so its first checkpoint is due at once. False when the stream is not tracked (or already due).
   */
  markDue(requestId: string): boolean {
    const stream = this.#streams.get(requestId);
    if (stream === undefined || stream.due || stream.written !== null) return false;
    stream.due = true;
    return true;
  }

  /** Streams whose first checkpoint is due (see `markDue`). */
  get dueCount(): number {
    let count = 0;
    for (const stream of this.#streams.values()) if (stream.due) count += 1;
    return count;
  }

  /** The stream ended: true when a checkpoint of it was handed to storage (its settlement must delete it). */
  finish(requestId: string): boolean {
    const stream = this.#streams.get(requestId);
    if (stream === undefined) return false;
    this.#streams.delete(requestId);
    return stream.stored;
  }

  /**
   * The figures that changed since their last checkpoint (a figure that cannot be computed now waits for the next);
   * `dueOnly`: only the streams whose first checkpoint is due.
   */
  async changed(dueOnly = false): Promise<PendingCheckpoint[]> {
    const pending: PendingCheckpoint[] = [];
    for (const [requestId, stream] of [...this.#streams]) {
      if (dueOnly && !stream.due) continue;
      let figure: StreamFigure;
      try {
        figure = await (dueOnly && stream.opening !== null ? stream.opening() : stream.figure());
      } catch {
        continue;
      }
      // The charge of a recovered stream never exceeds what its reservation holds.
      const costNano = figure.costNano > stream.reservation.amountNano ? stream.reservation.amountNano : figure.costNano;
      if (costNano === stream.written) continue;
      pending.push({
        costNano,
        stored: {
          requestId,
          accountId: stream.reservation.accountId,
          costNano,
          reservation: encodeReservation(stream.reservation),
          usageRow: encodeUsageRow({ ...figure.row, costNano }),
        },
      });
    }
    return pending;
  }

  /**
   * Of `pending`, those whose stream is still in flight, marked as written. Called right before the write, in the
   * ledger's one-at-a-time order, so a stream settled meanwhile is never checkpointed after its settlement.
   */
  claimForWrite(pending: readonly PendingCheckpoint[]): StoredCheckpoint[] {
    const rows: StoredCheckpoint[] = [];
    for (const { stored, costNano } of pending) {
      const stream = this.#streams.get(stored.requestId);
      if (stream === undefined) continue;
      stream.written = costNano;
      stream.stored = true;
      stream.due = false;
      rows.push(stored);
    }
    return rows;
  }

  /** A write failed: the streams are written again at the next checkpoint. */
  forget(rows: readonly StoredCheckpoint[]): void {
    for (const row of rows) {
      const stream = this.#streams.get(row.requestId);
      if (stream !== undefined && stream.written === row.costNano) stream.written = null;
    }
  }
}

export function encodeReservation(reservation: Reservation): string {
  return JSON.stringify(reservation, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value));
}

export function decodeReservation(text: string): Reservation {
  const raw = JSON.parse(text) as Omit<Reservation, 'amountNano' | 'parts'> & { amountNano: string; parts: Partial<Record<keyof Reservation['parts'], string>> & Record<'wallet' | 'subscription' | 'overage' | 'key' | 'budget', string> };
  return {
    ...raw,
    amountNano: BigInt(raw.amountNano),
    parts: {
      wallet: BigInt(raw.parts.wallet),
      subscription: BigInt(raw.parts.subscription),
      overage: BigInt(raw.parts.overage),
      key: BigInt(raw.parts.key),
      budget: BigInt(raw.parts.budget),
      // Reservations written before projects have no project parts.
      ...(raw.parts.project === undefined ? {} : { project: BigInt(raw.parts.project) }),
      ...(raw.parts.projectBudget === undefined ? {} : { projectBudget: BigInt(raw.parts.projectBudget) }),
      ...(raw.parts.customer === undefined ? {} : { customer: BigInt(raw.parts.customer) }),
    },
  };
}

export { decodeUsageRow, encodeUsageRow };
