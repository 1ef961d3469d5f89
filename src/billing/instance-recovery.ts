import type { MoneyTransaction, Storage, StoredCheckpoint } from '../storage/storage.js';
import { planBatch, type LeasePolicy, type Settlement } from './money-batch.js';
import { poolsOf, type PoolState } from './money-pools.js';
import { moneyScope } from './money-scope.js';
import type { KeptSettlement } from './settlement-outbox.js';
import { decodeReservation, decodeUsageRow } from './stream-checkpoints.js';

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
