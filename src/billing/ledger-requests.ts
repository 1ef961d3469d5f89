import type { NanoUsd } from '../domain/records.js';
import type { UsageLogRow } from '../domain/usage-records.js';
import type { LeasePolicy } from './money-batch.js';
import type { PoolsTakingPart, ProjectFunds } from './money-pools.js';
import type { SettlementOutbox } from './settlement-outbox.js';

// What the ledger is set up with and asked: its options, a reservation, a settlement, a key's or project's holds.

export interface LedgerOptions {
  /** Stable id of this gateway instance: its holds in storage are keyed by it (see docs/operators.md, Money). */
  instanceId: string;
  /** Most settlements per transaction. */
  maxBatch: number;
  /** Settlements wait at most this long for a transaction (reservations that need storage never wait for it). */
  flushIntervalMs: number;
  lease: LeasePolicy;
  /** How often this instance records its heartbeat and releases the holds of instances gone for good. */
  heartbeatMs: number;
  /** An instance silent this long is gone: any other instance charges its streams' checkpoints and releases its holds. */
  staleAfterMs: number;
  /** How often the checkpoints of this instance's streams in flight are written (only those whose figure changed). */
  checkpointMs: number;
  /**
   * The first checkpoint of a stream is written this long after its first byte reached the caller (the streams
   * starting meanwhile share the write; one that ends sooner is never written). Default 50 ms.
   */
  firstCheckpointMs?: number;
  /** How long local knowledge that a subscription's quota is used up is trusted before storage is asked again. */
  factsTtlMs: number;
  /**
   * Where settlements the database cannot take are kept on disk until it can; the next start of the same instance
   * id applies what a previous run left there. Null (or absent): they wait in memory only.
   */
  outbox?: SettlementOutbox | null;
}

export interface ReserveRequest extends PoolsTakingPart {
  /** Active subscriptions of the account, oldest first: their quota pays before the wallet. */
  subscriptions: readonly string[];
  /** Upper bound of the request's cost. */
  amountNano: NanoUsd;
  entryId: string;
  /** The key's project (absent or null: the account's default project): its cap and budget take part like the key's. */
  project?: ProjectFunds | null;
  /**
   * Hold the amount for this holder (a batch, `batchHolder`) until it is released (Ledger.releaseHolder), whatever
   * becomes of this instance; its lines' settlements are charged against it (Ledger.chargedAgainst).
   */
  holder?: string;
}

/** Amounts held from a key's pools that new requests cannot use. */
export interface KeyHolds {
  capHeldNano: NanoUsd;
  budgetHeldNano: NanoUsd;
}

export interface SettleRequest {
  costNano: NanoUsd;
  requestId: string;
  createdAt: number;
  /** A checkpoint of the request's stream may be stored: the settlement deletes it in the same transaction. */
  checkpointed?: boolean;
  /** The request's usage row, kept with the settlement when it has to wait on disk for the database. */
  usageRow?: UsageLogRow | null;
}
