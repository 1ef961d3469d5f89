import { GatewayError, serviceUnavailable } from '../errors/gateway-error.js';
import { isDependencyUnavailable } from '../errors/dependency-unavailable.js';
import type { Clock } from '../shared/clock.js';
import { describeError, type Logger } from '../shared/logger.js';
import type { NanoUsd } from '../domain/records.js';
import type { LedgerCredit, Storage } from '../storage/storage.js';
import { planBatch, type GrowRequest } from './money-batch.js';
import { StreamCheckpoints } from './stream-checkpoints.js';
import type { KeptSettlement } from './settlement-outbox.js';
import type { KeyHolds, LedgerOptions, ReserveRequest, SettleRequest } from './ledger-requests.js';
import { insufficientBalance, keyPoolRefusal, subscriptionQuotaRefusal } from './money-refusals.js';
import { moneyScope } from './money-scope.js';
import { recoverInstance } from './instance-recovery.js';
import {
  NO_PARTS, budgetPool, customerPoolPrefix, keyPool, overagePool, poolsOf, projectBudgetPool, projectPool, subscriptionPool, walletPool, type PoolState,
  type Reservation, type ReservationParts, type SubscriptionFacts,
} from './money-pools.js';

export type { KeyHolds, LedgerOptions, ReserveRequest, SettleRequest } from './ledger-requests.js';

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
  /** Settlements charged against a holder's hold, by request id, until their transaction commits. */
  readonly #holderSettlements = new Map<string, { promise: Promise<void>; resolve: () => void }>();
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
    const charged = await recoverInstance(this.storage, this.options.lease, this.options.instanceId, null, this.clock.now(), settlements);
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
      const charged = await recoverInstance(this.storage, this.options.lease, instanceId, before, this.clock.now());
      if (charged === null) continue;
      released.push(instanceId);
      streams += charged;
    }
    if (released.length > 0) this.logger.warn('released the holds of instances without a heartbeat, their streams charged at their checkpoints', { instances: released, streams });
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
    // A holder's hold is made in storage, never from this instance's lease.
    if (request.holder !== undefined) return this.#askStorage(request, false);
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
          ...(request.customerBudgeted === true ? { customer: request.customer ?? null, customerBudgeted: true } : {}),
          candidateSubscriptions: request.subscriptions,
          amountNano: request.amountNano,
          ...(request.project == null ? {} : { project: request.project }),
          ...(probe ? { probe } : {}),
          ...(request.holder === undefined ? {} : { holder: request.holder }),
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
    const customerBudgeted = request.customerBudgeted === true && request.customer != null;
    const parts: ReservationParts = {
      ...NO_PARTS, key: request.keyCapped ? amount : 0n, budget: request.keyBudgeted ? amount : 0n, customer: customerBudgeted ? amount : 0n,
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
      ...(customerBudgeted ? { customer: request.customer, customerBudgeted: true } : {}),
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
    if (reservation.holder !== undefined && !this.#holderSettlements.has(charge.requestId)) {
      let resolve = (): void => {};
      const promise = new Promise<void>((done) => {
        resolve = done;
      });
      this.#holderSettlements.set(charge.requestId, { promise, resolve });
    }
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
    for (const settlement of settlements) {
      const waiting = this.#holderSettlements.get(settlement.requestId);
      if (waiting === undefined) continue;
      this.#holderSettlements.delete(settlement.requestId);
      waiting.resolve();
    }
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

  /**
   * A reservation charged against a holder's hold (a batch's) instead of holding anything itself: its settlement takes
   * the cost from the hold first (then, for what the hold lacks, from what the pools have free), and the hold keeps the
   * rest. Costs no round trip.
   */
  chargedAgainst(holder: string, request: ReserveRequest): Reservation {
    return {
      entryId: request.entryId, accountId: request.accountId, keyId: request.keyId, keyCapped: request.keyCapped, keyBudgeted: request.keyBudgeted,
      ...(request.customerBudgeted === true && request.customer != null ? { customer: request.customer, customerBudgeted: true } : {}),
      subscriptionId: null, candidateSubscriptions: request.subscriptions, amountNano: 0n, parts: { ...NO_PARTS }, project: request.project ?? null, holder,
    };
  }

  /**
   * Resolves once the settlement of `requestId`, charged against a holder's hold, is committed (at once when none is
   * queued), or after `timeoutMs` at the latest.
   */
  async settledAgainstHolder(requestId: string, timeoutMs: number): Promise<boolean> {
    const waiting = this.#holderSettlements.get(requestId);
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

  /**
   * Gives back what a holder (a batch) still holds, in one transaction under its account's lock: after the batch's
   * last charge, at its end, cancellation, expiry or failure. Returns what was released; a second call releases nothing.
   */
  async releaseHolder(holder: string, accountId: string): Promise<NanoUsd> {
    const released = await this.storage.money.transact([accountId], (transaction) => transaction.dropHolder(holder));
    if (released > 0n) this.forgetBalance(accountId);
    return released;
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

  /** The account's end-customer rules changed: storage decides the next reservation from each customer's budget. */
  forgetCustomerBudgets(accountId: string): void {
    const prefix = customerPoolPrefix(accountId);
    for (const pool of this.#pools.keys()) if (pool.startsWith(prefix)) this.#stale.add(pool);
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
    const { accounts, keys, subscriptions, customers } = scope;
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
        const snapshot = await transaction.read({
          accountIds: [...accounts], keyIds: [...keys], subscriptionIds: [...subscriptions], projectIds: [...scope.projects], pools: [...touched.keys()], customers: [...customers.values()],
          holders: [...scope.holders],
        });
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
          holderGrants: planned.holderGrants,
          holderTakes: planned.holderTakes,
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
