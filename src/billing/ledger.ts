import { GatewayError, serviceUnavailable } from '../errors/gateway-error.js';
import { isDependencyUnavailable } from '../errors/dependency-unavailable.js';
import type { Clock } from '../shared/clock.js';
import { describeError, type Logger } from '../shared/logger.js';
import type { NanoUsd, UsageLogRow } from '../domain/records.js';
import type { LedgerCredit, MoneyTransaction, Storage, StoredCheckpoint } from '../storage/storage.js';
import { planBatch, type GrowRequest, type KeyPoolRefusal, type LeasePolicy, type Settlement } from './money-batch.js';
import { decodeReservation, decodeUsageRow, StreamCheckpoints } from './stream-checkpoints.js';
import { nanoToUsd } from './money.js';
import type { KeptSettlement, SettlementOutbox } from './settlement-outbox.js';
import {
  NO_PARTS, budgetPool, keyPool, overagePool, poolsOf, projectBudgetPool, projectPool, subscriptionPool, walletPool, type PoolState, type ProjectFunds, type Reservation,
  type ReservationParts, type SubscriptionFacts,
} from './money-pools.js';

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

export interface ReserveRequest {
  accountId: string;
  keyId: string;
  /** The key has a quota cap: its pool takes part. */
  keyCapped: boolean;
  /** The key has a period budget: its pool takes part. */
  keyBudgeted: boolean;
  /** Active subscriptions of the account, oldest first: their quota pays before the wallet. */
  subscriptions: readonly string[];
  /** Upper bound of the request's cost. */
  amountNano: NanoUsd;
  entryId: string;
  /** The key's project (absent or null: the account's default project): its cap and budget take part like the key's. */
  project?: ProjectFunds | null;
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

/** A settlement waiting for its transaction, and the outbox file that keeps it (null: in memory only). */
interface QueuedSettlement extends KeptSettlement {
  keptIn: string | null;
}

interface Waiter {
  grow: GrowRequest;
  resolve: (reservation: Reservation) => void;
  reject: (error: unknown) => void;
}

/** What `assertCanPay` asks the pools for: any cost at all. */
const SMALLEST_AMOUNT_NANO = 1n;
const PROBE_ENTRY_ID = 'probe';

const SUBSCRIPTION_QUOTA_MESSAGE = 'The subscription\'s quota for this period is used up (its plan allows no overage, or its overage limit is reached). It resets at the start of the next period.';

function insufficientBalance(): GatewayError {
  return new GatewayError('insufficient_balance', 'The account balance is too low for this request. Top up and retry.');
}

/** A subscription's quota is used up (policy `deny`, or its overage limit): Retry-After is the wait until its period resets. */
function subscriptionQuotaRefusal(resetsInMs: number): GatewayError {
  return new GatewayError('quota_exhausted', SUBSCRIPTION_QUOTA_MESSAGE, { retryAfterSeconds: Math.max(1, Math.ceil(resetsInMs / 1000)) });
}

/**
 * The refusal of a key's own cap or budget. Nothing left: the key is paused (its view says so). Something left but
 * less than this request's upper bound: the key stays enabled, and the message says how to fit.
 */
const POOL_NAMES: Record<KeyPoolRefusal['pool'], string> = {
  key: 'this API key\'s quota cap',
  budget: 'this API key\'s budget for the current period',
  project: 'its project\'s quota cap',
  projectBudget: 'its project\'s budget for the current period',
};

function keyPoolRefusal(refusal: KeyPoolRefusal, amountNano: NanoUsd): GatewayError {
  const what = POOL_NAMES[refusal.pool];
  const retryAfterSeconds = refusal.retryAfterMs === undefined ? 3600 : Math.max(1, Math.ceil(refusal.retryAfterMs / 1000));
  const resets = refusal.pool === 'budget' || refusal.pool === 'projectBudget' ? ' It resets at the start of the next period.' : '';
  if (refusal.remainingNano <= 0n) {
    const paused = refusal.pool === 'key' || refusal.pool === 'budget' ? 'the key is paused' : 'the project\'s keys are paused';
    return new GatewayError('quota_exhausted', `Nothing is left of ${what}: ${paused}.${resets}`, { retryAfterSeconds });
  }
  return new GatewayError(
    'quota_exhausted',
    `This request could cost up to ${nanoToUsd(amountNano)} USD, more than the ${nanoToUsd(refusal.remainingNano)} USD left of ${what}. `
    + `Send a lower max_tokens (or a shorter prompt).${resets}`,
    { retryAfterSeconds },
  );
}

/**
 * The money side of the hot path: reserve an upper bound before forwarding, settle the real cost afterwards.
 *
 * Storage is the arbiter across instances: each instance holds amounts from pools of funds (money_holds rows keyed
 * by instance and pool) and the holds of all instances never exceed a pool's funds. A reservation that fits in
 * what this instance already holds (its lease) touches no database; otherwise it waits for the next group commit,
 * one transaction for every reservation and settlement queued meanwhile. Settlements never make a request wait.
 */
export class Ledger {
  /** This instance's streams in flight, checkpointed every `checkpointMs`. */
  readonly checkpoints = new StreamCheckpoints();
  readonly #pools = new Map<string, PoolState>();
  readonly #facts = new Map<string, SubscriptionFacts & { knownAt: number }>();
  /** Pools the running transaction recomputes: no local reservation from them until it commits. */
  readonly #busy = new Set<string>();
  /** Pools whose funds changed outside this ledger: storage decides their next reservation. */
  readonly #stale = new Set<string>();
  #waiters: Waiter[] = [];
  #settlements: QueuedSettlement[] = [];
  /** Outbox files and how many of their settlements are not committed yet; a file goes when none is left. */
  readonly #keptFiles = new Map<string, number>();
  /** The last money transaction failed: settlements are kept on disk as they come, until one commits. */
  #databaseDown = false;
  /** Settlements arrived while a storage step ran and the database was down: kept once the step ends. */
  #keepWanted = false;
  #keepSoonImmediate: NodeJS.Immediate | null = null;
  /** Money transactions failed so far (close tells a failed attempt by it). */
  #failures = 0;
  #running: Promise<void> | null = null;
  #again = false;
  #timer: NodeJS.Timeout | null = null;
  /** A transaction due now, started on the next turn of the event loop (see `#kick`). */
  #soon: NodeJS.Immediate | null = null;
  #heartbeat: NodeJS.Timeout | null = null;
  #checkpointTimer: NodeJS.Timeout | null = null;
  /** The write of the first checkpoints due (streams whose first byte went out), or null. */
  #dueTimer: NodeJS.Timeout | null = null;
  #checkpointing = false;
  #closed = false;
  #failedAt = 0;

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: LedgerOptions,
  ) {}

  get instanceId(): string {
    return this.options.instanceId;
  }

  /**
   * Settles what a previous run of this instance id left (a crash): its streams are charged at their last
   * checkpoint, its other holds released. Then starts the heartbeat and the checkpoint timer.
   */
  async start(): Promise<void> {
    const outbox = this.options.outbox ?? null;
    const { files: kept, unreadable } = outbox === null ? { files: [], unreadable: [] } : await outbox.list();
    if (unreadable.length > 0) this.logger.error('money: outbox files that cannot be read were set aside; their settlements are not applied', { directory: outbox?.directory, files: unreadable });
    const settlements = kept.flatMap((file) => file.settlements);
    const charged = await this.#recover(this.options.instanceId, null, settlements);
    if (charged !== null && charged > 0) this.logger.warn('charged the streams a previous run of this instance left at their checkpoints', { instance: this.options.instanceId, streams: charged });
    if (outbox !== null && kept.length > 0) {
      await outbox.remove(kept.map((file) => file.file));
      this.logger.warn('applied the settlements a previous run of this instance kept on disk while the database was away', { instance: this.options.instanceId, settlements: settlements.length });
    }
    const released = await this.storage.money.registerInstance(this.options.instanceId, this.clock.now());
    if (released > 0) this.logger.warn('released holds left by a previous run of this instance', { instance: this.options.instanceId, holds: released });
    await this.#sweep();
    this.#heartbeat = setInterval(() => {
      this.#beat().catch((error: unknown) => this.logger.warn('ledger heartbeat failed', describeError(error)));
    }, this.options.heartbeatMs);
    this.#heartbeat.unref();
    this.#checkpointTimer = setInterval(() => {
      this.writeCheckpoints().catch((error: unknown) => this.logger.warn('stream checkpoints could not be computed', describeError(error)));
    }, this.options.checkpointMs);
    this.#checkpointTimer.unref();
  }

  async #beat(): Promise<void> {
    await this.storage.money.heartbeat(this.options.instanceId, this.clock.now());
    await this.#sweep();
    // Idle leases go back to the pools (a transaction recomputes them without the lease).
    const now = this.clock.now();
    for (const state of this.#pools.values()) {
      if (state.held > state.inFlight && now - state.lastUsedAt >= this.options.lease.idleMs) {
        this.#kick(0);
        break;
      }
    }
  }

  async #sweep(): Promise<void> {
    const before = this.clock.now() - this.options.staleAfterMs;
    const stale = (await this.storage.money.staleInstances(before)).filter((id) => id !== this.options.instanceId);
    const released: string[] = [];
    let streams = 0;
    for (const instanceId of stale) {
      const charged = await this.#recover(instanceId, before);
      if (charged === null) continue;
      released.push(instanceId);
      streams += charged;
    }
    if (released.length > 0) this.logger.warn('released the holds of instances without a heartbeat, their streams charged at their checkpoints', { instances: released, streams });
  }

  /**
   * Recovers an instance gone (`staleBefore`: silent since then; null: this instance's previous run): in one
   * transaction under the accounts' locks, each of its streams' checkpoints is claimed (deleted: a second recoverer
   * finds none), charged through the pools as the instance would have settled it (never more than its hold), and
   * given its usage row; then every hold of the instance is released. `kept`: settlements the previous run kept on
   * disk, charged in the same transaction (a stream's kept settlement has its final figure: its checkpoint is only
   * deleted). Returns the streams charged at their checkpoints, or null when the instance turned out alive.
   */
  async #recover(instanceId: string, staleBefore: number | null, kept: readonly KeptSettlement[] = []): Promise<number | null> {
    const accountIds = [...new Set([...(await this.storage.money.checkpointAccounts(instanceId)), ...kept.map((settlement) => settlement.reservation.accountId)])];
    const now = this.clock.now();
    return this.storage.money.transact(accountIds, async (transaction) => {
      if (!(await transaction.instanceGone(instanceId, staleBefore))) return null;
      const claimed = accountIds.length === 0 ? [] : await transaction.claimCheckpoints(instanceId, accountIds);
      const settledIds = new Set(kept.map((settlement) => settlement.requestId));
      const streams = claimed.filter((checkpoint) => !settledIds.has(checkpoint.requestId));
      if (streams.length > 0 || kept.length > 0) await this.#chargeGone(transaction, instanceId, kept, streams, now);
      await transaction.dropInstance(instanceId);
      return streams.length;
    });
  }

  /**
   * Charges what a gone instance left: settlements it kept on disk (applied as it would have, once: a ledger entry
   * id already in storage moves no money) and its streams at their checkpoints, with their usage rows.
   */
  async #chargeGone(transaction: MoneyTransaction, instanceId: string, everyKept: readonly KeptSettlement[], claimed: readonly StoredCheckpoint[], now: number): Promise<void> {
    // A kept settlement already committed (its file outlived the commit) is not planned again: planned anew it might
    // split differently (a subscription's quota now used up) and write an entry its first commit did not.
    const settled = everyKept.length === 0 ? new Set<string>() : await transaction.settledEntryIds(everyKept.map((settlement) => settlement.reservation.entryId));
    const kept = everyKept.filter((settlement) => !settled.has(settlement.reservation.entryId));
    const streams = claimed.map((checkpoint) => {
      const reservation = decodeReservation(checkpoint.reservation);
      const costNano = checkpoint.costNano > reservation.amountNano ? reservation.amountNano : checkpoint.costNano;
      return { reservation, costNano, row: { ...decodeUsageRow(checkpoint.usageRow), costNano } };
    });
    const settlements: Settlement[] = [
      ...kept.map(({ reservation, costNano, requestId, createdAt }) => ({ reservation, costNano, requestId, createdAt })),
      ...streams.map(({ reservation, costNano, row }) => ({ reservation, costNano, requestId: row.requestId, createdAt: now })),
    ];
    // Every kept usage row (one whose settlement committed may still be missing: rows are written apart); a row
    // already logged is skipped.
    const rows = [...everyKept.flatMap((settlement) => (settlement.usageRow === null ? [] : [settlement.usageRow])), ...streams.map((stream) => stream.row)];
    if (kept.length === 0 && streams.length === 0) {
      if (rows.length > 0) await transaction.insertUsageRows(rows);
      return;
    }
    // The dead instance's pools: what it holds in storage, of which its checkpointed streams are in flight (its other
    // requests are not charged: their part of the holds is released with the rest).
    const held = await transaction.instanceHolds(instanceId);
    const pools = new Map<string, PoolState>();
    for (const { reservation } of settlements) {
      for (const [pool, part] of poolsOf(reservation)) {
        const state = pools.get(pool) ?? { accountId: reservation.accountId, held: held.get(pool) ?? 0n, inFlight: 0n, lastUsedAt: 0, unit: 0n };
        state.inFlight += part;
        pools.set(pool, state);
      }
    }
    const scope = moneyScope([], settlements);
    const snapshot = await transaction.read({ accountIds: [...scope.accounts], keyIds: [...scope.keys], subscriptionIds: [...scope.subscriptions], projectIds: [...scope.projects], pools: [...scope.pools.keys()] });
    const planned = planBatch({ now, snapshot, pools, grows: [], settlements, lease: this.options.lease });
    await transaction.write(instanceId, {
      rollovers: planned.rollovers, budgetRollovers: planned.budgetRollovers, projectBudgetRollovers: planned.projectBudgetRollovers, usages: planned.usages, holds: [], now,
    });
    if (rows.length > 0) await transaction.insertUsageRows(rows);
  }

  /**
   * The stream's first byte reached its caller: the upstream bills its input from now on, so its first checkpoint
   * is written now (with those of the streams that start meanwhile), not at the next interval. A crash right after
   * the first byte then charges at least the input instead of releasing the hold.
   */
  checkpointFirstByte(requestId: string): void {
    if (this.#closed || !this.checkpoints.markDue(requestId)) return;
    this.#scheduleDue();
  }

  #scheduleDue(): void {
    if (this.#dueTimer !== null || this.#closed) return;
    this.#dueTimer = setTimeout(() => {
      this.#dueTimer = null;
      this.writeCheckpoints(true).catch((error: unknown) => this.logger.warn('stream checkpoints could not be computed', describeError(error)));
    }, this.options.firstCheckpointMs ?? 50);
    this.#dueTimer.unref();
  }

  /**
   * Writes the checkpoints of the streams whose figure changed (`dueOnly`: of the streams whose first checkpoint is
   * due), in one batch, in turn with the money transactions: a stream settled before its checkpoint is written is
   * left out, and one settled after has it deleted by its settlement's transaction.
   */
  async writeCheckpoints(dueOnly = false): Promise<void> {
    if (this.#closed || this.checkpoints.size === 0) return;
    if (this.#checkpointing) {
      // A write is under way: the first checkpoints that fell due meanwhile get their own right after it.
      if (dueOnly) this.#scheduleDue();
      return;
    }
    this.#checkpointing = true;
    try {
      const pending = await this.checkpoints.changed(dueOnly);
      if (pending.length === 0) return;
      while (this.#running !== null) await this.#running;
      if (this.#closed) return;
      const rows = this.checkpoints.claimForWrite(pending);
      if (rows.length === 0) return;
      const write = this.storage.money.writeCheckpoints(this.options.instanceId, rows, this.clock.now()).catch((error: unknown) => {
        this.checkpoints.forget(rows);
        this.logger.warn('stream checkpoints could not be written; retried at the next', { ...describeError(error), streams: rows.length });
      });
      const running = write.finally(() => this.#afterStep());
      this.#running = running;
      await running;
    } finally {
      this.#checkpointing = false;
    }
  }

  /**
   * Holds `amountNano` for a request, or throws the spec's refusal: 402 `insufficient_balance` (the wallet) or
   * 429 `quota_exhausted` (a key's quota cap, a subscription's quota under policy `deny`, or its overage limit).
   */
  async reserve(request: ReserveRequest): Promise<Reservation> {
    const local = this.#planLocally(request);
    if (local instanceof GatewayError) throw local;
    if (local !== null) {
      const now = this.clock.now();
      for (const [pool, part] of poolsOf(local)) {
        const state = this.#pools.get(pool) as PoolState;
        state.inFlight += part;
        state.lastUsedAt = now;
      }
      return local;
    }
    return this.#askStorage(request, false);
  }

  /**
   * Resolves when the caller can pay some cost (the smallest amount would be held now); throws what `reserve` would
   * throw otherwise: 402 `insufficient_balance` (the wallet at or below its credit line, no subscription quota or
   * overage left) or 429 `quota_exhausted`. Holds nothing. Answered from this instance's leases when they have
   * room, otherwise by the next group commit, like a reservation.
   */
  async assertCanPay(request: Omit<ReserveRequest, 'amountNano' | 'entryId'>): Promise<void> {
    const probe: ReserveRequest = { ...request, amountNano: SMALLEST_AMOUNT_NANO, entryId: PROBE_ENTRY_ID };
    const local = this.#planLocally(probe);
    if (local instanceof GatewayError) throw local;
    if (local === null) await this.#askStorage(probe, true);
  }

  #askStorage(request: ReserveRequest, probe: boolean): Promise<Reservation> {
    return new Promise<Reservation>((resolve, reject) => {
      this.#waiters.push({
        grow: {
          entryId: request.entryId,
          accountId: request.accountId,
          keyId: request.keyId,
          keyCapped: request.keyCapped,
          keyBudgeted: request.keyBudgeted,
          candidateSubscriptions: request.subscriptions,
          amountNano: request.amountNano,
          ...(request.project == null ? {} : { project: request.project }),
          ...(probe ? { probe } : {}),
        },
        resolve,
        reject,
      });
      this.#kick(0);
    });
  }

  /** The reservation this instance's lease can give, when every pool involved has room (no storage round trip). */
  #planLocally(request: ReserveRequest): Reservation | GatewayError | null {
    const amount = request.amountNano;
    const now = this.clock.now();
    const project = request.project ?? null;
    const parts: ReservationParts = {
      ...NO_PARTS, key: request.keyCapped ? amount : 0n, budget: request.keyBudgeted ? amount : 0n,
      ...(project === null ? {} : { project: project.capped ? amount : 0n, projectBudget: project.budgeted ? amount : 0n }),
    };
    let subscriptionId: string | null = null;
    if (request.subscriptions.length > 0) {
      subscriptionId = request.subscriptions.find((id) => this.#hasRoom(subscriptionPool(id), amount)) ?? null;
      if (subscriptionId !== null) {
        parts.subscription = amount;
      } else {
        // Only when every subscription's quota is known to be used up does the overage policy decide locally.
        const facts = request.subscriptions.map((id) => this.#facts.get(id));
        const allExhausted = facts.every((fact) => fact !== undefined && fact.exhaustedUntil > now && now - fact.knownAt < this.options.factsTtlMs);
        const first = facts[0];
        if (!allExhausted || first === undefined) return null;
        subscriptionId = request.subscriptions[0] ?? null;
        if (first.policy === 'deny') return subscriptionQuotaRefusal(Math.min(...facts.map((fact) => (fact as SubscriptionFacts).exhaustedUntil)) - now);
        parts.wallet = amount;
        if (first.policy === 'limit') parts.overage = amount;
      }
    } else {
      parts.wallet = amount;
    }
    const reservation: Reservation = {
      entryId: request.entryId,
      accountId: request.accountId,
      keyId: request.keyId,
      keyCapped: request.keyCapped,
      keyBudgeted: request.keyBudgeted,
      subscriptionId,
      candidateSubscriptions: request.subscriptions,
      amountNano: amount,
      parts,
      ...(project === null ? {} : { project }),
    };
    for (const [pool, part] of poolsOf(reservation)) if (!this.#hasRoom(pool, part)) return null;
    return reservation;
  }

  #hasRoom(pool: string, amount: NanoUsd): boolean {
    if (this.#busy.has(pool) || this.#stale.has(pool)) return false;
    const state = this.#pools.get(pool);
    return state !== undefined && state.held - state.inFlight >= amount;
  }

  /**
   * Queues the real cost for settlement (0 releases the reservation). Never waits. While the database is away the
   * settlement is kept on disk (with its usage row) within a turn of the event loop, and committed once it is back.
   */
  settle(reservation: Reservation, charge: SettleRequest): void {
    this.#settlements.push({
      reservation,
      costNano: charge.costNano < 0n ? 0n : charge.costNano,
      requestId: charge.requestId,
      createdAt: charge.createdAt,
      ...(charge.checkpointed === true ? { checkpointed: true } : {}),
      usageRow: charge.usageRow ?? null,
      keptIn: null,
    });
    if (this.#databaseDown) this.#keepSoon();
    this.#kick(this.#settlements.length >= this.options.maxBatch ? 0 : this.options.flushIntervalMs);
  }

  /** Settlements kept on disk and not committed yet (the outbox's depth). */
  get keptSettlements(): number {
    let count = 0;
    for (const remaining of this.#keptFiles.values()) count += remaining;
    return count;
  }

  #keepSoon(): void {
    if ((this.options.outbox ?? null) === null || this.#closed) return;
    if (this.#running !== null) {
      this.#keepWanted = true;
      return;
    }
    this.#keepSoonImmediate ??= setImmediate(() => {
      this.#keepSoonImmediate = null;
      if (this.#running !== null) this.#keepWanted = true;
      else this.#step(() => this.#keepQueued());
    });
  }

  /** Writes the queued settlements not kept yet to one outbox file (a storage step: no transaction runs meanwhile). */
  async #keepQueued(): Promise<void> {
    const outbox = this.options.outbox ?? null;
    const unkept = this.#settlements.filter((settlement) => settlement.keptIn === null);
    if (outbox === null || unkept.length === 0) return;
    try {
      const file = await outbox.keep(unkept, this.clock.now());
      for (const settlement of unkept) settlement.keptIn = file;
      this.#keptFiles.set(file, unkept.length);
      this.logger.warn('money: settlements kept on disk until the database answers', { settlements: unkept.length, kept: this.keptSettlements });
    } catch (error) {
      this.logger.error('money: settlements could not be kept on disk; they wait in memory', { ...describeError(error), settlements: unkept.length });
    }
  }

  /** Committed: their outbox files lose them, and a file none is left in is removed. */
  #committed(settlements: readonly QueuedSettlement[]): void {
    const outbox = this.options.outbox ?? null;
    if (outbox === null) return;
    const done: string[] = [];
    for (const settlement of settlements) {
      const file = settlement.keptIn;
      if (file === null) continue;
      const remaining = (this.#keptFiles.get(file) ?? 1) - 1;
      if (remaining > 0) {
        this.#keptFiles.set(file, remaining);
      } else {
        this.#keptFiles.delete(file);
        done.push(file);
      }
    }
    if (done.length === 0) return;
    this.logger.info('money: settlements kept on disk are committed', { files: done.length, kept: this.keptSettlements });
    // Applying a file again (a crash before it is gone) moves no money: its entries are in storage.
    outbox.remove(done).catch((error: unknown) => this.logger.warn('money: committed outbox files could not be removed; the next start skips their settlements', describeError(error)));
  }

  /** A charge with nothing reserved for it (an outcome billed without admission): settled like any other. */
  unreserved(accountId: string, keyId: string, entryId: string): Reservation {
    return { entryId, accountId, keyId, keyCapped: false, keyBudgeted: false, subscriptionId: null, candidateSubscriptions: [], amountNano: 0n, parts: { ...NO_PARTS } };
  }

  /** The balance after every settlement queued so far (admin and balance views; never on the request path). */
  async availableBalance(accountId: string): Promise<NanoUsd> {
    await this.flush();
    const balances = await this.storage.accounts.getBalances([accountId]);
    return balances.get(accountId) ?? 0n;
  }

  async keySpent(keyId: string): Promise<NanoUsd> {
    await this.flush();
    return (await this.storage.keys.getById(keyId))?.spentNano ?? 0n;
  }

  /**
   * What no new request of this instance can take from each key's quota cap and budget, after every queued
   * settlement is written (read the keys after this): the holds of other instances plus this instance's requests in
   * flight — exactly what a reservation is checked against besides the spend (admin and console views only).
   */
  async keyHolds(accountId: string): Promise<(keyId: string) => KeyHolds> {
    await this.flush();
    const unavailable = new Map<string, NanoUsd>();
    for (const hold of await this.storage.money.listHolds(accountId)) {
      if (hold.instanceId !== this.options.instanceId) unavailable.set(hold.pool, (unavailable.get(hold.pool) ?? 0n) + hold.heldNano);
    }
    for (const [pool, state] of this.#pools) if (state.accountId === accountId && state.inFlight > 0n) unavailable.set(pool, (unavailable.get(pool) ?? 0n) + state.inFlight);
    return (keyId) => ({ capHeldNano: unavailable.get(keyPool(keyId)) ?? 0n, budgetHeldNano: unavailable.get(budgetPool(keyId)) ?? 0n });
  }

  /** The same for each project's quota cap and budget of the account (admin and console views only). */
  async projectHolds(accountId: string): Promise<(projectId: string) => KeyHolds> {
    await this.flush();
    const unavailable = new Map<string, NanoUsd>();
    for (const hold of await this.storage.money.listHolds(accountId)) {
      if (hold.instanceId !== this.options.instanceId) unavailable.set(hold.pool, (unavailable.get(hold.pool) ?? 0n) + hold.heldNano);
    }
    for (const [pool, state] of this.#pools) if (state.accountId === accountId && state.inFlight > 0n) unavailable.set(pool, (unavailable.get(pool) ?? 0n) + state.inFlight);
    return (projectId) => ({ capHeldNano: unavailable.get(projectPool(projectId)) ?? 0n, budgetHeldNano: unavailable.get(projectBudgetPool(projectId)) ?? 0n });
  }

  /** Top-ups and corrections go straight to storage (they are rare and must be confirmed). */
  async credit(credit: LedgerCredit): Promise<NanoUsd | null> {
    const balance = await this.storage.ledger.applyCredit(credit);
    this.forgetBalance(credit.accountId);
    return balance;
  }

  /** Funds of the account moved outside this ledger (a redemption code, a correction): storage decides next. */
  forgetBalance(accountId: string): void {
    this.#stale.add(walletPool(accountId));
    // A project's cap or budget may have changed too (projects change through their account's invalidation).
    for (const [pool, state] of this.#pools) {
      if (state.accountId === accountId && (pool.startsWith('project:') || pool.startsWith('pbudget:'))) this.#stale.add(pool);
    }
  }

  /**
   * Gives this instance's idle lease on the account's wallet back to storage before a payment from the balance
   * reads what every instance holds; requests in flight keep their holds.
   */
  async releaseWalletLease(accountId: string): Promise<void> {
    await this.flush();
    const state = this.#pools.get(walletPool(accountId));
    if (state === undefined || state.held <= state.inFlight) return;
    // Idle from now on: the next transaction sizes the pool to its requests in flight.
    state.lastUsedAt = 0;
    this.#kick(0);
    await this.flush();
  }

  /** The key's quota cap or budget changed. */
  forgetKey(keyId: string): void {
    this.#stale.add(keyPool(keyId));
    this.#stale.add(budgetPool(keyId));
  }

  /** The subscription changed (plan, cancellation). */
  forgetSubscription(subscriptionId: string): void {
    this.#facts.delete(subscriptionId);
    this.#stale.add(subscriptionPool(subscriptionId));
    this.#stale.add(overagePool(subscriptionId));
  }

  /** Writes every queued settlement (and answers every waiting reservation). */
  async flush(): Promise<void> {
    this.#clearTimer();
    while (this.#running !== null || this.#settlements.length > 0 || this.#waiters.length > 0) {
      if (this.#running !== null) await this.#running;
      else await this.#run();
    }
  }

  /**
   * Settles what is queued and gives every hold of this instance back. When the database refuses, what is queued is
   * left in the outbox (the next start of this instance id applies it) instead of waiting for the database.
   */
  async close(): Promise<void> {
    if (this.#heartbeat !== null) clearInterval(this.#heartbeat);
    if (this.#checkpointTimer !== null) clearInterval(this.#checkpointTimer);
    if (this.#dueTimer !== null) clearTimeout(this.#dueTimer);
    if (this.#keepSoonImmediate !== null) clearImmediate(this.#keepSoonImmediate);
    await this.#flushOrKeep();
    this.#closed = true;
    this.#clearTimer();
    try {
      await this.storage.money.releaseInstance(this.options.instanceId);
      this.#pools.clear();
    } catch (error) {
      this.logger.warn('could not release this instance\'s holds; another instance will after the stale interval', describeError(error));
    }
  }

  /** This instance's view of its holds (tests and diagnostics). */
  heldPools(): Map<string, { held: NanoUsd; inFlight: NanoUsd }> {
    return new Map([...this.#pools].map(([pool, state]) => [pool, { held: state.held, inFlight: state.inFlight }]));
  }

  /** `flush`, except that once a transaction fails with everything queued kept on disk, it stops trying. */
  async #flushOrKeep(): Promise<void> {
    this.#clearTimer();
    const outbox = this.options.outbox ?? null;
    while (this.#running !== null || this.#settlements.length > 0 || this.#waiters.length > 0) {
      if (this.#running !== null) {
        await this.#running;
        continue;
      }
      const failures = this.#failures;
      await this.#run();
      if (outbox === null || this.#failures === failures) continue;
      while (this.#running !== null) await this.#running;
      if (this.#settlements.some((settlement) => settlement.keptIn === null)) await this.#step(() => this.#keepQueued());
      if (this.#settlements.every((settlement) => settlement.keptIn !== null)) {
        if (this.#settlements.length > 0) this.logger.warn('money: the database refuses at shutdown; queued settlements stay on disk for the next start', { settlements: this.#settlements.length });
        this.#settlements = [];
        return;
      }
    }
  }

  #clearTimer(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    if (this.#soon !== null) clearImmediate(this.#soon);
    this.#timer = null;
    this.#soon = null;
  }

  #kick(delayMs: number): void {
    if (this.#closed) return;
    if (this.#running !== null) {
      this.#again = true;
      return;
    }
    if (delayMs <= 0) {
      // On the next turn, not in this one: on SQLite a transaction holds the event loop, and back-to-back
      // transactions (a backlog, or settlements that filled a batch) let requests' I/O run between them.
      if (this.#soon !== null) return;
      this.#clearTimer();
      this.#soon = setImmediate(() => {
        this.#soon = null;
        if (this.#running === null) void this.#run();
        else this.#again = true;
      });
      return;
    }
    this.#timer ??= setTimeout(() => {
      this.#timer = null;
      if (this.#running === null) void this.#run();
      else this.#again = true;
    }, delayMs);
    this.#timer.unref();
  }

  #run(): Promise<void> {
    this.#clearTimer();
    return this.#step(() => this.#commit());
  }

  /** Runs one storage step (a money transaction, a checkpoint write, an outbox write): one at a time. */
  #step(work: () => Promise<void>): Promise<void> {
    const running = work().finally(() => this.#afterStep());
    this.#running = running;
    return running;
  }

  /** One storage step ended: start what queued meanwhile. */
  #afterStep(): void {
    this.#running = null;
    if (this.#keepWanted) {
      this.#keepWanted = false;
      if (this.#databaseDown && !this.#closed && this.#settlements.some((settlement) => settlement.keptIn === null)) {
        void this.#step(() => this.#keepQueued());
        return;
      }
    }
    const more = this.#again || this.#waiters.length > 0;
    this.#again = false;
    if (more || this.#settlements.length > 0) {
      // After a failure, wait before trying again (queued settlements are kept, never dropped).
      const pause = this.clock.now() - this.#failedAt < 500 ? 500 : more ? 0 : this.options.flushIntervalMs;
      this.#kick(pause);
    }
  }

  async #commit(): Promise<void> {
    const waiters = this.#waiters;
    this.#waiters = [];
    const settlements = this.#settlements.splice(0, this.options.maxBatch);
    const now = this.clock.now();
    // Pools this transaction recomputes: those of the batch, plus idle leases to give back.
    const scope = moneyScope(waiters.map((waiter) => waiter.grow), settlements);
    const { accounts, keys, subscriptions } = scope;
    const touched = scope.pools;
    for (const [pool, state] of this.#pools) {
      if ((state.held > state.inFlight && now - state.lastUsedAt >= this.options.lease.idleMs) || this.#stale.has(pool)) scope.addPool(pool, state.accountId);
    }
    if (touched.size === 0) {
      for (const waiter of waiters) waiter.reject(new Error('nothing to reserve'));
      return;
    }
    for (const pool of touched.keys()) this.#busy.add(pool);
    const staleBefore = new Set(this.#stale);
    try {
      const plan = await this.storage.money.transact([...accounts], async (transaction) => {
        const snapshot = await transaction.read({ accountIds: [...accounts], keyIds: [...keys], subscriptionIds: [...subscriptions], projectIds: [...scope.projects], pools: [...touched.keys()] });
        const current = new Map<string, PoolState>();
        for (const pool of touched.keys()) {
          const state = this.#pools.get(pool);
          if (state !== undefined) current.set(pool, state);
        }
        const planned = planBatch({ now, snapshot, pools: current, grows: waiters.map((waiter) => waiter.grow), settlements, lease: this.options.lease });
        for (const pool of touched.keys()) {
          if (!planned.pools.has(pool) && current.has(pool)) planned.pools.set(pool, { ...(current.get(pool) as PoolState), held: (current.get(pool) as PoolState).inFlight });
        }
        await transaction.write(this.options.instanceId, {
          rollovers: planned.rollovers,
          budgetRollovers: planned.budgetRollovers,
          projectBudgetRollovers: planned.projectBudgetRollovers,
          usages: planned.usages,
          holds: [...planned.pools].map(([pool, state]) => ({ pool, accountId: state.accountId, heldNano: state.held })),
          checkpointsDone: settlements.filter((settlement) => settlement.checkpointed === true).map((settlement) => settlement.requestId),
          now,
        });
        return planned;
      });
      this.#databaseDown = false;
      this.#committed(settlements);
      // Committed: adopt the planned pools (no local reservation touched them meanwhile: they were busy).
      for (const [pool, state] of plan.pools) {
        if (state.held === 0n && state.inFlight === 0n) this.#pools.delete(pool);
        else this.#pools.set(pool, state);
      }
      for (const pool of staleBefore) if (touched.has(pool)) this.#stale.delete(pool);
      const knownAt = this.clock.now();
      for (const [id, facts] of plan.subscriptionFacts) this.#facts.set(id, { ...facts, knownAt });
      plan.outcomes.forEach((outcome, index) => {
        const waiter = waiters[index] as Waiter;
        if ('reservation' in outcome) waiter.resolve(outcome.reservation);
        else if ('pool' in outcome) waiter.reject(keyPoolRefusal(outcome, waiter.grow.amountNano));
        else if ('resetsInMs' in outcome) waiter.reject(subscriptionQuotaRefusal(outcome.resetsInMs));
        else waiter.reject(insufficientBalance());
      });
    } catch (error) {
      this.#failedAt = this.clock.now();
      this.#failures += 1;
      this.logger.error('money transaction failed', { ...describeError(error), settlements: settlements.length, reservations: waiters.length });
      this.#settlements.unshift(...settlements);
      const refusal = (): GatewayError => (isDependencyUnavailable(error)
        ? serviceUnavailable(error)
        : new GatewayError('internal_error', 'Funds could not be reserved for this request. Retry shortly.'));
      for (const waiter of waiters) waiter.reject(refusal());
      // Kept on disk until a transaction commits them, so a crash or a stop meanwhile loses none.
      this.#databaseDown = true;
      await this.#keepQueued();
    } finally {
      for (const pool of touched.keys()) this.#busy.delete(pool);
    }
  }
}

/** What one money transaction reads and recomputes: the pools of its requests, their accounts, keys and subscriptions. */
function moneyScope(grows: readonly GrowRequest[], settlements: readonly Settlement[]) {
  const pools = new Map<string, string>();
  const accounts = new Set<string>();
  const keys = new Set<string>();
  const subscriptions = new Set<string>();
  const projects = new Set<string>();
  const addPool = (pool: string, accountId: string): void => {
    pools.set(pool, accountId);
    accounts.add(accountId);
    // A project pool recomputed (idle or stale) needs its project's funds read.
    if (pool.startsWith('project:') || pool.startsWith('pbudget:')) projects.add(pool.slice(pool.indexOf(':') + 1));
  };
  const addProject = (accountId: string, project: ProjectFunds | null | undefined): void => {
    if (project == null) return;
    if (project.capped) {
      projects.add(project.id);
      addPool(projectPool(project.id), accountId);
    }
    if (project.budgeted) {
      projects.add(project.id);
      addPool(projectBudgetPool(project.id), accountId);
    }
  };
  const addRequest = (accountId: string, keyId: string, keyCapped: boolean, keyBudgeted: boolean, candidates: readonly string[]): void => {
    addPool(walletPool(accountId), accountId);
    if (keyCapped) {
      keys.add(keyId);
      addPool(keyPool(keyId), accountId);
    }
    if (keyBudgeted) {
      keys.add(keyId);
      addPool(budgetPool(keyId), accountId);
    }
    for (const id of candidates) {
      subscriptions.add(id);
      addPool(subscriptionPool(id), accountId);
      addPool(overagePool(id), accountId);
    }
  };
  for (const grow of grows) {
    addRequest(grow.accountId, grow.keyId, grow.keyCapped, grow.keyBudgeted, grow.candidateSubscriptions);
    addProject(grow.accountId, grow.project);
  }
  for (const { reservation } of settlements) {
    addProject(reservation.accountId, reservation.project);
    addRequest(reservation.accountId, reservation.keyId, reservation.keyCapped, reservation.keyBudgeted, reservation.subscriptionId === null ? reservation.candidateSubscriptions : [reservation.subscriptionId, ...reservation.candidateSubscriptions]);
  }
  return { pools, accounts, keys, subscriptions, projects, addPool };
}
