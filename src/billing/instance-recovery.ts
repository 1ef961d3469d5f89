import type { MoneyTransaction, Storage, StoredCheckpoint } from '../storage/storage.js';
import { planBatch, type LeasePolicy } from './money-batch.js';
import type { Settlement } from './batch-settling.js';
import { poolsOf, type PoolState } from './money-pools.js';
import { moneyScope } from './money-scope.js';
import type { KeptSettlement } from './settlement-outbox.js';
import { decodeReservation, decodeUsageRow } from './stream-checkpoints.js';
import type { LedgerOptions } from './ledger-requests.js';
import type { Clock } from '../shared/clock.js';
import { describeError, type Logger } from '../shared/logger.js';

/**
 * Recovers an instance gone (`staleBefore`: silent since then; null: this instance's previous run): in one
 * transaction under the accounts' locks, each of its streams' checkpoints is claimed (deleted: a second recoverer
 * finds none), charged through the pools as the instance would have settled it (never more than its hold), and
 * given its usage row; then every hold of the instance is released. `kept`: settlements the previous run kept on
 * disk, charged in the same transaction (a stream's kept settlement has its final figure: its checkpoint is only
 * deleted). Returns the streams charged at their checkpoints, or null when the instance turned out alive.
 */
export async function recoverInstance(
storage: Storage, lease: LeasePolicy, instanceId: string, staleBefore: number | null, now: number, kept: readonly KeptSettlement[] = [],
): Promise<number | null> {
  const accountIds = [...new Set([...(await storage.money.checkpointAccounts(instanceId)), ...kept.map((settlement) => settlement.reservation.accountId)])];
  return storage.money.transact(accountIds, async (transaction) => {
    if (!(await transaction.instanceGone(instanceId, staleBefore))) return null;
    const claimed = accountIds.length === 0 ? [] : await transaction.claimCheckpoints(instanceId, accountIds);
    const settledIds = new Set(kept.map((settlement) => settlement.requestId));
    const streams = claimed.filter((checkpoint) => !settledIds.has(checkpoint.requestId));
    if (streams.length > 0 || kept.length > 0) await chargeGone(transaction, lease, instanceId, kept, streams, now);
    await transaction.dropInstance(instanceId);
    return streams.length;
  });
}

/**
 * Charges what a gone instance left: settlements it kept on disk (applied as it would have, once: a ledger entry
 * id already in storage moves no money) and its streams at their checkpoints, with their usage rows.
 */
async function chargeGone(
transaction: MoneyTransaction, lease: LeasePolicy, instanceId: string, everyKept: readonly KeptSettlement[], claimed: readonly StoredCheckpoint[], now: number,
): Promise<void> {
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
  const snapshot = await transaction.read({
    accountIds: [...scope.accounts], keyIds: [...scope.keys], subscriptionIds: [...scope.subscriptions], projectIds: [...scope.projects], pools: [...scope.pools.keys()],
    customers: [...scope.customers.values()], holders: [...scope.holders],
  });
  const planned = planBatch({ now, snapshot, pools, grows: [], settlements, lease });
  await transaction.write(instanceId, {
    rollovers: planned.rollovers, budgetRollovers: planned.budgetRollovers, projectBudgetRollovers: planned.projectBudgetRollovers, usages: planned.usages, holds: [],
    holderTakes: planned.holderTakes, now,
  });
  if (rows.length > 0) await transaction.insertUsageRows(rows);
}

/**
 * Settles what a previous run of this instance id left (a crash): the settlements it kept on disk are applied, its
 * streams charged at their last checkpoint, its other holds released.
 */
export async function recoverPreviousRun(storage: Storage, options: LedgerOptions, clock: Clock, logger: Logger): Promise<void> {
  const outbox = options.outbox ?? null;
  const { files: kept, unreadable } = outbox === null ? { files: [], unreadable: [] } : await outbox.list();
  if (unreadable.length > 0) logger.error('money: outbox files that cannot be read were set aside; their settlements are not applied', { directory: outbox?.directory, files: unreadable });
  const settlements = kept.flatMap((file) => file.settlements);
  const charged = await recoverInstance(storage, options.lease, options.instanceId, null, clock.now(), settlements);
  if (charged !== null && charged > 0) logger.warn('charged the streams a previous run of this instance left at their checkpoints', { instance: options.instanceId, streams: charged });
  if (outbox !== null && kept.length > 0) {
    await outbox.remove(kept.map((file) => file.file));
    logger.warn('applied the settlements a previous run of this instance kept on disk while the database was away', { instance: options.instanceId, settlements: settlements.length });
  }
  const released = await storage.money.registerInstance(options.instanceId, clock.now());
  if (released > 0) logger.warn('released holds left by a previous run of this instance', { instance: options.instanceId, holds: released });
}

/** Recovers every other instance without a heartbeat for `staleAfterMs`: its streams charged, its holds released. */
/** Recovers the stale instances; true when there were any. */
export async function sweepGoneInstances(storage: Storage, options: LedgerOptions, clock: Clock, logger: Logger): Promise<boolean> {
  const before = clock.now() - options.staleAfterMs;
  const stale = (await storage.money.staleInstances(before)).filter((id) => id !== options.instanceId);
  const released: string[] = [];
  let streams = 0;
  for (const instanceId of stale) {
    const charged = await recoverInstance(storage, options.lease, instanceId, before, clock.now());
    if (charged === null) continue;
    released.push(instanceId);
    streams += charged;
  }
  if (released.length > 0) logger.warn('released the holds of instances without a heartbeat, their streams charged at their checkpoints', { instances: released, streams });
  return stale.length > 0;
}

/** The heartbeat row is written at least this often. */
const HEARTBEAT_WRITE_MAX_MS = 10_000;

/**
 * Beats every `heartbeatMs`: records this instance's heartbeat and recovers the instances gone meanwhile, each only as
 * often as staleness needs; `beaten` runs after each beat.
 */
export class InstanceHeartbeat {
  #interval: NodeJS.Timeout | null = null;
  /** Beats since the heartbeat row was last written, and since the last sweep of other instances. */
  #beatsSinceWrite = 0;
  #beatsSinceSweep = 0;
  /** Whether the last sweep found stale instances (then the next beat sweeps again). */
  #sweepFound = false;

  constructor(
    private readonly storage: Storage,
    private readonly options: LedgerOptions,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly beaten: () => void,
  ) {}

  start(): void {
    this.#interval = setInterval(() => {
      this.#beat().catch((error: unknown) => this.logger.warn('ledger heartbeat failed', describeError(error)));
    }, this.options.heartbeatMs);
    this.#interval.unref();
  }

  stop(): void {
    if (this.#interval !== null) clearInterval(this.#interval);
  }

  async #beat(): Promise<void> {
    const { heartbeatMs, staleAfterMs } = this.options;
    // The heartbeat row is written three times per staleness period, at most every 10 s apart: enough that a live
    // instance is never taken for silent, few enough that an idle one costs the database little.
    this.#beatsSinceWrite += 1;
    if (this.#beatsSinceWrite * heartbeatMs >= Math.min(HEARTBEAT_WRITE_MAX_MS, staleAfterMs / 3) - heartbeatMs / 2) {
      this.#beatsSinceWrite = 0;
      await this.storage.money.heartbeat(this.options.instanceId, this.clock.now());
    }
    // Other instances are swept about once per staleness period (every beat while some are found stale): a dead
    // one's holds are released within twice INSTANCE_STALE_SECONDS.
    this.#beatsSinceSweep += 1;
    if (this.#sweepFound || this.#beatsSinceSweep * heartbeatMs >= staleAfterMs - heartbeatMs / 2) {
      this.#beatsSinceSweep = 0;
      this.#sweepFound = await sweepGoneInstances(this.storage, this.options, this.clock, this.logger);
    }
    this.beaten();
  }
}
