import { GatewayError } from '../errors/gateway-error.js';
import type { Clock } from '../shared/clock.js';
import { describeError, type Logger } from '../shared/logger.js';
import type { NanoUsd } from '../domain/records.js';
import type { LedgerCredit, Storage } from '../storage/storage.js';
import { transactBatch } from './money-commit.js';
import { StreamCheckpoints } from './stream-checkpoints.js';
import type { KeyHolds, LedgerOptions, ReserveRequest, SettleRequest } from './ledger-requests.js';
import { answerWaiters, WaitingReservations, type Waiter } from './waiting-reservations.js';
import { transactionFailedRefusal } from './money-refusals.js';
import { moneyScope } from './money-scope.js';
import { InstanceHeartbeat, recoverPreviousRun, sweepGoneInstances } from './instance-recovery.js';
import { NO_PARTS, budgetPool, keyPool, projectBudgetPool, projectPool, type Reservation } from './money-pools.js';
import { LocalLeases } from './local-leases.js';
import type { QueuedSettlement } from './queued-settlements.js';
import { SettlementQueue } from './settlement-queue.js';
import { StorageSteps } from './storage-steps.js';
import { CheckpointWriter } from './checkpoint-writer.js';

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
  readonly #leases: LocalLeases;
  readonly #waiting = new WaitingReservations();
  readonly #settlements: SettlementQueue;
  /** Money transactions failed so far (close tells a failed attempt by it). */
  #failures = 0;
  readonly #steps = new StorageSteps(() => this.#commit(), () => this.#afterStep());
  readonly #checkpointWriter: CheckpointWriter;
  readonly #heartbeat: InstanceHeartbeat;
  #closed = false;
  #failedAt = 0;
  /**
   * Usage rows are written by their settlement's transaction on PostgreSQL, where each statement is a round trip; on
   * SQLite, where a statement costs none, the usage log writes them in short slices that keep the event loop free.
   */
  readonly #rowsWithSettlements: boolean;

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: LedgerOptions,
  ) {
    this.#leases = new LocalLeases(options.factsTtlMs);
    this.#rowsWithSettlements = storage.dialect === 'postgres';
    this.#settlements = new SettlementQueue(options.outbox ?? null, clock, logger, this.#steps, () => this.#closed);
    // Idle leases go back to the pools after each beat (a transaction recomputes them without the lease).
    this.#heartbeat = new InstanceHeartbeat(storage, options, clock, logger, () => {
      if (this.#leases.hasIdleLease(this.clock.now(), this.options.lease.idleMs)) this.#steps.kick(0);
    });
    this.#checkpointWriter = new CheckpointWriter(this.checkpoints, this.#steps, storage, options, clock, logger, () => this.#closed);
  }

  get instanceId(): string {
    return this.options.instanceId;
  }

  /**
   * Settles what a previous run of this instance id left (a crash): its streams are charged at their last
   * checkpoint, its other holds released. Then starts the heartbeat and the checkpoint timer.
   */
  async start(): Promise<void> {
    await recoverPreviousRun(this.storage, this.options, this.clock, this.logger);
    await sweepGoneInstances(this.storage, this.options, this.clock, this.logger);
    this.#heartbeat.start();
    this.#checkpointWriter.start();
  }

  /**
   * The stream's first byte reached its caller: the upstream bills its input from now on, so its first checkpoint
   * is written now (with those of the streams that start meanwhile), not at the next interval. A crash right after
   * the first byte then charges at least the input instead of releasing the hold.
   */
  checkpointFirstByte(requestId: string): void {
    this.#checkpointWriter.firstByte(requestId);
  }

  /** Writes the checkpoints of the streams whose figure changed (`dueOnly`: of those whose first checkpoint is due). */
  writeCheckpoints(dueOnly = false): Promise<void> {
    return this.#checkpointWriter.write(dueOnly);
  }

  /**
   * Holds `amountNano` for a request, or throws the spec's refusal: 402 `insufficient_balance` (the wallet) or
   * 429 `quota_exhausted` (a key's quota cap, a subscription's quota under policy `deny`, or its overage limit).
   */
  async reserve(request: ReserveRequest): Promise<Reservation> {
    return this.reserveNow(request) ?? this.#askStorage(request, false);
  }

  /**
   * `reserve` in the same turn when this instance's lease decides it: the hold taken from the lease, or the lease's
   * refusal thrown. Null when storage must decide (the lease lacks room or facts); `reserve` then waits for it.
   */
  reserveNow(request: ReserveRequest): Reservation | null {
    // A holder's hold is made in storage, never from this instance's lease.
    if (request.holder !== undefined) return null;
    const local = this.#leases.plan(request, this.clock.now());
    if (local instanceof GatewayError) throw local;
    if (local !== null) this.#leases.take(local, this.clock.now());
    return local;
  }

  /**
   * Resolves when the caller can pay some cost (the smallest amount would be held now); throws what `reserve` would
   * throw otherwise: 402 `insufficient_balance` (the wallet at or below its credit line, no subscription quota or
   * overage left) or 429 `quota_exhausted`. Holds nothing. Answered from this instance's leases when they have
   * room, otherwise by the next group commit, like a reservation.
   */
  async assertCanPay(request: Omit<ReserveRequest, 'amountNano' | 'entryId'>): Promise<void> {
    const probe: ReserveRequest = { ...request, amountNano: SMALLEST_AMOUNT_NANO, entryId: PROBE_ENTRY_ID };
    const local = this.#leases.plan(probe, this.clock.now());
    if (local instanceof GatewayError) throw local;
    if (local === null) await this.#askStorage(probe, true);
  }

  #askStorage(request: ReserveRequest, probe: boolean): Promise<Reservation> {
    const answer = this.#waiting.add(request, probe);
    // While a step runs, its end looks at the waiters (some may fit the leases it commits); otherwise now.
    if (this.#steps.running === null) this.#steps.kick(0);
    return answer;
  }

  /**
   * Queues the real cost for settlement (0 releases the reservation). Never waits. While the database is away the
   * settlement is kept on disk (with its usage row) within a turn of the event loop, and committed once it is back.
   * Returns whether its transaction also writes the usage row given (PostgreSQL: in the statement that writes the
   * settlement, so the row costs no statement of its own); false: the caller's usage log writes it.
   */
  settle(reservation: Reservation, charge: SettleRequest): boolean {
    this.#settlements.push({
      reservation,
      costNano: charge.costNano < 0n ? 0n : charge.costNano,
      requestId: charge.requestId,
      createdAt: charge.createdAt,
      ...(charge.checkpointed === true ? { checkpointed: true } : {}),
      usageRow: charge.usageRow ?? null,
      keptIn: null,
    });
    this.#steps.kick(this.#settlements.length >= this.options.maxBatch ? 0 : this.options.flushIntervalMs);
    return this.#rowsWithSettlements && charge.usageRow != null;
  }

  /**
   * Gives a hold back without billing it (a request refused after its money was held, the hold a realtime session's
   * next response never used): the hold's settlement at 0, with no usage row.
   */
  release(reservation: Reservation, release: Pick<SettleRequest, 'requestId' | 'createdAt'>): void {
    this.settle(reservation, { costNano: 0n, requestId: release.requestId, createdAt: release.createdAt });
  }

  /** Settlements kept on disk and not committed yet (the outbox's depth). */
  get keptSettlements(): number {
    return this.#settlements.keptCount;
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
    return this.#settlements.settledAgainstHolder(requestId, timeoutMs);
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

  /**
   * What no new request of this instance can take from each key's quota cap and budget, after every queued
   * settlement is written (read the keys after this): the holds of other instances plus this instance's requests in
   * flight — exactly what a reservation is checked against besides the spend (admin and console views only).
   */
  async keyHolds(accountId: string): Promise<(keyId: string) => KeyHolds> {
    const unavailable = await this.#unavailable(accountId);
    return (keyId) => ({ capHeldNano: unavailable.get(keyPool(keyId)) ?? 0n, budgetHeldNano: unavailable.get(budgetPool(keyId)) ?? 0n });
  }

  /** The same for each project's quota cap and budget of the account (admin and console views only). */
  async projectHolds(accountId: string): Promise<(projectId: string) => KeyHolds> {
    const unavailable = await this.#unavailable(accountId);
    return (projectId) => ({ capHeldNano: unavailable.get(projectPool(projectId)) ?? 0n, budgetHeldNano: unavailable.get(projectBudgetPool(projectId)) ?? 0n });
  }

  /** By pool of the account: the holds of other instances plus this instance's requests in flight. */
  async #unavailable(accountId: string): Promise<Map<string, NanoUsd>> {
    await this.flush();
    const unavailable = new Map<string, NanoUsd>();
    for (const hold of await this.storage.money.listHolds(accountId)) {
      if (hold.instanceId !== this.options.instanceId) unavailable.set(hold.pool, (unavailable.get(hold.pool) ?? 0n) + hold.heldNano);
    }
    for (const [pool, inFlight] of this.#leases.inFlightOf(accountId)) unavailable.set(pool, (unavailable.get(pool) ?? 0n) + inFlight);
    return unavailable;
  }

  /** Top-ups and corrections go straight to storage (they are rare and must be confirmed). */
  async credit(credit: LedgerCredit): Promise<NanoUsd | null> {
    const balance = await this.storage.ledger.applyCredit(credit);
    this.forgetBalance(credit.accountId);
    return balance;
  }

  /** Funds of the account moved outside this ledger (a redemption code, a correction): storage decides next. */
  forgetBalance(accountId: string): void {
    this.#leases.forgetBalance(accountId);
  }

  /**
   * Gives this instance's idle lease on the account's wallet back to storage before a payment from the balance
   * reads what every instance holds; requests in flight keep their holds.
   */
  async releaseWalletLease(accountId: string): Promise<void> {
    await this.flush();
    if (!this.#leases.idleWallet(accountId)) return;
    this.#steps.kick(0);
    await this.flush();
  }

  /** The key's quota cap or budget changed. */
  forgetKey(keyId: string): void {
    this.#leases.forgetKey(keyId);
  }

  /** The account's end-customer rules changed: storage decides the next reservation from each customer's budget. */
  forgetCustomerBudgets(accountId: string): void {
    this.#leases.forgetCustomerBudgets(accountId);
  }

  /** The subscription changed (plan, cancellation). */
  forgetSubscription(subscriptionId: string): void {
    this.#leases.forgetSubscription(subscriptionId);
  }

  /** Writes every queued settlement (and answers every waiting reservation). */
  async flush(): Promise<void> {
    this.#steps.clearTimer();
    while (this.#steps.running !== null || this.#settlements.length > 0 || this.#waiting.length > 0) {
      if (this.#steps.running !== null) await this.#steps.running;
      else await this.#steps.run();
    }
  }

  /**
   * Settles what is queued and gives every hold of this instance back. When the database refuses, what is queued is
   * left in the outbox (the next start of this instance id applies it) instead of waiting for the database.
   */
  async close(): Promise<void> {
    this.#heartbeat.stop();
    this.#checkpointWriter.stopTimers();
    this.#settlements.stop();
    await this.#flushOrKeep();
    this.#closed = true;
    this.#steps.close();
    try {
      await this.storage.money.releaseInstance(this.options.instanceId);
      this.#leases.clear();
    } catch (error) {
      this.logger.warn('could not release this instance\'s holds; another instance will after the stale interval', describeError(error));
    }
  }

  /** This instance's view of its holds (tests and diagnostics). */
  heldPools(): Map<string, { held: NanoUsd; inFlight: NanoUsd }> {
    return this.#leases.view();
  }

  /** `flush`, except that once a transaction fails with everything queued kept on disk, it stops trying. */
  async #flushOrKeep(): Promise<void> {
    this.#steps.clearTimer();
    const outbox = this.options.outbox ?? null;
    while (this.#steps.running !== null || this.#settlements.length > 0 || this.#waiting.length > 0) {
      if (this.#steps.running !== null) {
        await this.#steps.running;
        continue;
      }
      const failures = this.#failures;
      await this.#steps.run();
      if (outbox === null || this.#failures === failures) continue;
      if (await this.#settlements.leaveOnDisk()) return;
    }
  }

  /** One storage step ended: start what queued meanwhile. */
  #afterStep(): void {
    if (!this.#closed) this.#waiting.serveFromLeases(this.#leases, this.clock);
    if (this.#settlements.keepWhatArrived()) return;
    const more = this.#steps.takeAgain() || this.#waiting.length > 0;
    if (more || this.#settlements.length > 0) {
      // After a failure, wait before trying again (queued settlements are kept, never dropped).
      const pause = this.clock.now() - this.#failedAt < 500 ? 500 : more ? 0 : this.options.flushIntervalMs;
      this.#steps.kick(pause);
    }
  }

  async #commit(): Promise<void> {
    const waiters = this.#waiting.takeAll();
    const settlements = this.#settlements.take(this.options.maxBatch);
    const now = this.clock.now();
    // Pools this transaction recomputes: those of the batch, plus idle leases to give back and stale pools.
    const scope = moneyScope(waiters.map((waiter) => waiter.grow), settlements);
    const claimed = this.#leases.claim(scope, now, this.options.lease.idleMs);
    try {
      if (claimed.touched.size === 0) {
        for (const waiter of waiters) waiter.reject(new Error('nothing to reserve'));
        return;
      }
      const usageRows = this.#rowsWithSettlements ? settlements.flatMap((settlement) => (settlement.usageRow === null ? [] : [settlement.usageRow])) : [];
      const plan = await transactBatch(this.storage, this.options, { scope, leases: this.#leases, claimed, grows: waiters.map((waiter) => waiter.grow), settlements, usageRows, now });
      this.#settlements.committed(settlements);
      this.#leases.adopt(claimed, plan, this.clock.now());
      answerWaiters(waiters, plan.outcomes);
    } catch (error) {
      await this.#transactionFailed(error, waiters, settlements);
    } finally {
      this.#leases.release(claimed);
    }
  }

  /** The transaction failed: its settlements go back to the queue (and to disk), its reservations are refused. */
  async #transactionFailed(error: unknown, waiters: readonly Waiter[], settlements: readonly QueuedSettlement[]): Promise<void> {
    this.#failedAt = this.clock.now();
    this.#failures += 1;
    this.logger.error('money transaction failed', { ...describeError(error), settlements: settlements.length, reservations: waiters.length });
    for (const waiter of waiters) waiter.reject(transactionFailedRefusal(error));
    await this.#settlements.failed(settlements);
  }
}
