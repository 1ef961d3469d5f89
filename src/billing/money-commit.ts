import type { Storage } from '../storage/storage.js';
import type { UsageLogRow } from '../domain/usage-records.js';
import type { GrowRequest } from './batch-growing.js';
import type { LedgerOptions, ReserveRequest } from './ledger-requests.js';
import type { ClaimedPools, LocalLeases } from './local-leases.js';
import { planBatch, type BatchPlan } from './money-batch.js';
import type { PoolState } from './money-pools.js';
import type { MoneyScope } from './money-scope.js';
import type { QueuedSettlement } from './queued-settlements.js';

/** One group commit's work: the scope it reads, the pools it recomputes, the reservations to grow, the settlements. */
export interface CommitBatch {
  scope: MoneyScope;
  leases: LocalLeases;
  claimed: ClaimedPools;
  grows: GrowRequest[];
  settlements: readonly QueuedSettlement[];
  /** The settlements' usage rows this transaction writes (empty: the usage log writes them). */
  usageRows: readonly UsageLogRow[];
  now: number;
}

/**
 * One money transaction: reads the scope's funds under its accounts' locks, plans the batch (settlements, then
 * reservations to grow, then every claimed pool's hold) and writes the plan. The caller adopts the plan once committed.
 */
export function transactBatch(storage: Storage, options: LedgerOptions, batch: CommitBatch): Promise<BatchPlan> {
  const { scope, claimed, settlements, now } = batch;
  const { accounts, keys, subscriptions, customers } = scope;
  const touched = claimed.touched;
  return storage.money.transact([...accounts], async (transaction) => {
    const snapshot = await transaction.read({
      accountIds: [...accounts], keyIds: [...keys], subscriptionIds: [...subscriptions], projectIds: [...scope.projects], pools: [...touched.keys()], customers: [...customers.values()],
      holders: [...scope.holders],
    });
    const current = batch.leases.statesOf(claimed);
    const planned = planBatch({ now, snapshot, pools: current, grows: batch.grows, settlements, lease: options.lease });
    for (const pool of touched.keys()) {
      if (!planned.pools.has(pool) && current.has(pool)) planned.pools.set(pool, { ...(current.get(pool) as PoolState), held: (current.get(pool) as PoolState).inFlight });
    }
    await transaction.write(options.instanceId, {
      rollovers: planned.rollovers,
      budgetRollovers: planned.budgetRollovers,
      projectBudgetRollovers: planned.projectBudgetRollovers,
      usages: planned.usages,
      holds: [...planned.pools].map(([pool, state]) => ({ pool, accountId: state.accountId, heldNano: state.held })),
      checkpointsDone: settlements.filter((settlement) => settlement.checkpointed === true).map((settlement) => settlement.requestId),
      holderGrants: planned.holderGrants,
      holderTakes: planned.holderTakes,
      usageRows: [...batch.usageRows],
      now,
    });
    return planned;
  });
}

/** What storage is asked to grow for a reservation the leases could not give. */
export function growRequestOf(request: ReserveRequest, probe: boolean): GrowRequest {
  return {
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
  };
}
