import type { Insertable, Transaction } from 'kysely';
import { toBigInt, toNumber, toOneOf } from '../convert.js';
import type { Database } from '../database-schema.js';
import type { LedgerEntriesTable, SubscriptionUsageTable } from '../money-schema.js';
import { chunk, rowsPerStatement } from '../pagination.js';
import type { BudgetPeriod } from '../../domain/records.js';
import type { MoneySnapshot, MoneySnapshotRequest, MoneyTransaction, MoneyWrites, SettledUsage, StoredCheckpoint } from '../storage.js';
import { toRow as toUsageRow } from './usage-log-repository.js';
import { toPlanRecord } from './plan-repository.js';
import { subscriptionTable, toSubscriptionRecord } from './subscription-repository.js';
import { addCustomerSpend, readCustomerBudgets } from './customer-money.js';
import type { ProjectTables } from '../project-schema.js';
import { projectBudgetOf } from './project-repository.js';
import type { MoneyStatements } from './money-statements.js';
import { isPlain } from './money-settle-statement.js';

type Dialect = 'sqlite' | 'postgres';

const IN_LIST = rowsPerStatement(1);
const BUDGET_PERIODS: readonly BudgetPeriod[] = ['day', 'week', 'month'];

function addTo(totals: Map<string, bigint>, id: string, amount: bigint): void {
  if (amount === 0n) return;
  totals.set(id, (totals.get(id) ?? 0n) + amount);
}

function byId([left]: [string, bigint], [right]: [string, bigint]): number {
  return left < right ? -1 : left > right ? 1 : 0;
}

function ledgerRow(usage: SettledUsage): Insertable<LedgerEntriesTable> {
  return {
    id: usage.entryId,
    account_id: usage.accountId,
    kind: 'usage',
    amount_nano: -usage.walletNano,
    key_id: usage.keyId,
    request_id: usage.requestId,
    reason: usage.subscriptionId === null ? null : `subscription ${usage.subscriptionId}`,
    created_at: usage.createdAt,
    shortfall_nano: usage.shortfallNano,
  };
}

function subscriptionUsageRow(usage: SettledUsage): Insertable<SubscriptionUsageTable> {
  return {
    id: usage.entryId,
    subscription_id: usage.subscriptionId ?? '',
    account_id: usage.accountId,
    key_id: usage.keyId,
    request_id: usage.requestId,
    period_start: usage.periodStart ?? 0,
    amount_nano: usage.subscriptionNano,
    overage_nano: usage.overageNano,
    created_at: usage.createdAt,
  };
}

/** A usage writes a ledger entry when the wallet paid or a shortfall is recorded, a subscription row when a plan paid. */
const needsLedgerEntry = (usage: SettledUsage): boolean => usage.walletNano > 0n || usage.shortfallNano > 0n;
const needsSubscriptionRow = (usage: SettledUsage): boolean => usage.subscriptionId !== null && (usage.subscriptionNano > 0n || usage.overageNano > 0n);

/** The funds, keys, subscriptions (with their plans) and pool holds a transaction asked for. */
async function readSnapshot(trx: Transaction<Database>, statements: MoneyStatements, request: MoneySnapshotRequest): Promise<MoneySnapshot> {
  const snapshot: MoneySnapshot = { accounts: new Map(), keys: new Map(), subscriptions: new Map(), heldByPool: new Map() };
  for (const row of await statements.selectAccounts([...new Set(request.accountIds)])) {
    snapshot.accounts.set(row.id, { balanceNano: toBigInt(row.balance_nano), creditLineNano: toBigInt(row.credit_line_nano) });
  }
  for (const row of await statements.selectKeys([...new Set(request.keyIds)])) {
    snapshot.keys.set(row.id, {
      accountId: row.account_id,
      quotaNano: row.quota_nano === null ? null : toBigInt(row.quota_nano),
      spentNano: toBigInt(row.spent_nano),
      budget: row.budget_period === null || row.budget_limit_nano === null ? null : {
        period: toOneOf(row.budget_period, BUDGET_PERIODS, 'api key budget period'),
        limitNano: toBigInt(row.budget_limit_nano),
        spentNano: toBigInt(row.budget_spent_nano),
        periodStart: toNumber(row.budget_period_start),
      },
    });
  }
  const subscriptions = await statements.selectSubscriptions([...new Set(request.subscriptionIds)]);
  const plans = await statements.selectPlans([...new Set(subscriptions.map((row) => row.plan_id))]);
  const planById = new Map(plans.map((row) => [row.id, toPlanRecord(row)]));
  for (const row of subscriptions) {
    const plan = planById.get(row.plan_id);
    if (plan !== undefined) snapshot.subscriptions.set(row.id, { subscription: toSubscriptionRecord(row), plan });
  }
  const projectIds = [...new Set(request.projectIds ?? [])];
  if (projectIds.length > 0) {
    const projects = new Map<string, NonNullable<MoneySnapshot['projects']> extends Map<string, infer T> ? T : never>();
    for (const part of chunk(projectIds, IN_LIST)) {
      const rows = await trx.withTables<ProjectTables>().selectFrom('projects')
        .select(['id', 'account_id', 'quota_nano', 'spent_nano', 'budget_period', 'budget_limit_nano', 'budget_spent_nano', 'budget_period_start'])
        .where('id', 'in', part)
        .execute();
      for (const row of rows) {
        projects.set(row.id, { accountId: row.account_id, quotaNano: row.quota_nano === null ? null : toBigInt(row.quota_nano), spentNano: toBigInt(row.spent_nano), budget: projectBudgetOf(row) });
      }
    }
    snapshot.projects = projects;
  }
  for (const row of await statements.heldByPool([...new Set(request.pools)])) snapshot.heldByPool.set(row.pool, toBigInt(row.held));
  const holders = [...new Set(request.holders ?? [])];
  if (holders.length > 0) {
    const holderHolds = new Map<string, Map<string, bigint>>();
    for (const part of chunk(holders, IN_LIST)) {
      for (const row of await trx.selectFrom('money_holds').select(['instance_id', 'pool', 'held_nano']).where('instance_id', 'in', part).execute()) {
        const pools = holderHolds.get(row.instance_id) ?? new Map<string, bigint>();
        pools.set(row.pool, toBigInt(row.held_nano));
        holderHolds.set(row.instance_id, pools);
      }
    }
    snapshot.holderHolds = holderHolds;
  }
  if (request.customers !== undefined && request.customers.length > 0) snapshot.customerBudgets = await readCustomerBudgets(trx, request.customers);
  return snapshot;
}

/**
 * Writes one settlement: period and budget rollovers, the usage entries (only those new move money), balances, key
 * spend and subscription use moved by the sums, the checkpoints settled, and this instance's holds.
 */
async function writeSettlement(trx: Transaction<Database>, statements: MoneyStatements, instanceId: string, writes: MoneyWrites): Promise<Set<string>> {
  if (statements.settlePlain !== undefined && isPlain(writes)) return settlePlainly(statements.settlePlain, instanceId, writes);
  await writeRollovers(trx, writes);
  const fresh = await insertFreshEntries(statements, writes.usages);
  await moveSpendSums(trx, statements, writes.usages, fresh);
  await statements.deleteCheckpoints(writes.checkpointsDone ?? []);
  const kept = writes.holds.filter((hold) => hold.heldNano > 0n);
  const dropped = writes.holds.filter((hold) => hold.heldNano <= 0n).map((hold) => hold.pool);
  await statements.dropHolds(instanceId, dropped);
  await statements.upsertHolds(kept.map((hold) => ({ instance_id: instanceId, pool: hold.pool, account_id: hold.accountId, held_nano: hold.heldNano, updated_at: writes.now })));
  await writeHolderHolds(trx, writes, fresh);
  await statements.insertUsageRows((writes.usageRows ?? []).map(toUsageRow));
  return fresh;
}

/** A settlement with nothing but usage entries, checkpoints, holds and usage rows: one statement writes it all. */
async function settlePlainly(settlePlain: NonNullable<MoneyStatements['settlePlain']>, instanceId: string, writes: MoneyWrites): Promise<Set<string>> {
  const entries = writes.usages.filter(needsLedgerEntry).map(ledgerRow);
  const kept = writes.holds.filter((hold) => hold.heldNano > 0n);
  const droppedPools = writes.holds.filter((hold) => hold.heldNano <= 0n).map((hold) => hold.pool);
  const checkpointsDone = writes.checkpointsDone ?? [];
  const usageRows = writes.usageRows ?? [];
  if (entries.length === 0 && kept.length === 0 && droppedPools.length === 0 && checkpointsDone.length === 0 && usageRows.length === 0) return new Set();
  return new Set(await settlePlain({
    entries,
    checkpointsDone,
    droppedPools,
    kept: kept.map((hold) => ({ instance_id: instanceId, pool: hold.pool, account_id: hold.accountId, held_nano: hold.heldNano, updated_at: writes.now })),
    instanceId,
    usageRows: usageRows.map(toUsageRow),
  }));
}

/** Subscriptions rolled to their current period (or cancelled), key and project budgets started again from zero. */
async function writeRollovers(trx: Transaction<Database>, writes: MoneyWrites): Promise<void> {
  for (const rollover of writes.rollovers) {
    await trx
      .updateTable('subscriptions')
      .set({
        status: rollover.status,
        current_period_start: rollover.currentPeriodStart,
        current_period_end: rollover.currentPeriodEnd,
        updated_at: writes.now,
        ...(rollover.resetUsage ? { used_nano: 0n, overage_used_nano: 0n } : {}),
      })
      .where('id', '=', rollover.id)
      .execute();
  }

  for (const rollover of writes.budgetRollovers ?? []) {
    await trx
      .updateTable('api_keys')
      .set({ budget_period_start: rollover.periodStart, budget_spent_nano: 0n })
      .where('id', '=', rollover.keyId)
      .execute();
  }

  const projectTables = trx.withTables<ProjectTables>();
  for (const rollover of writes.projectBudgetRollovers ?? []) {
    await projectTables
      .updateTable('projects')
      .set({ budget_period_start: rollover.periodStart, budget_spent_nano: 0n })
      .where('id', '=', rollover.projectId)
      .execute();
  }
}

/**
 * Inserts the usages' ledger entries and subscription rows; returns the entry ids actually inserted. Only those move
 * money, so a batch replayed after an unacknowledged commit is harmless.
 */
async function insertFreshEntries(statements: MoneyStatements, usages: MoneyWrites['usages']): Promise<Set<string>> {
  const fresh = new Set<string>();
  const withEntry = usages.filter(needsLedgerEntry);
  for (const id of await statements.insertLedgerEntries(withEntry.map(ledgerRow))) fresh.add(id);
  const withSubscription = usages.filter((usage) => needsSubscriptionRow(usage) && (!needsLedgerEntry(usage) || fresh.has(usage.entryId)));
  for (const id of await statements.insertSubscriptionUsage(withSubscription.map(subscriptionUsageRow))) fresh.add(id);
  return fresh;
}

/** Balances, key, project and customer spend and subscription use moved by the sums of the fresh usages. */
async function moveSpendSums(trx: Transaction<Database>, statements: MoneyStatements, usages: MoneyWrites['usages'], fresh: ReadonlySet<string>): Promise<void> {
  const debitByAccount = new Map<string, bigint>();
  const spendByKey = new Map<string, bigint>();
  const usedBySubscription = new Map<string, bigint>();
  const overageBySubscription = new Map<string, bigint>();
  const spendByProject = new Map<string, bigint>();
  for (const usage of usages) {
    if (!fresh.has(usage.entryId)) continue;
    addTo(debitByAccount, usage.accountId, usage.walletNano);
    addTo(spendByKey, usage.keyId, usage.walletNano + usage.subscriptionNano);
    if (usage.projectId != null) addTo(spendByProject, usage.projectId, usage.walletNano + usage.subscriptionNano);
    if (usage.subscriptionId !== null) {
      addTo(usedBySubscription, usage.subscriptionId, usage.subscriptionNano);
      addTo(overageBySubscription, usage.subscriptionId, usage.overageNano);
    }
  }
  await statements.debitAccounts([...debitByAccount].sort(byId));
  await statements.addKeySpend([...spendByKey].sort(byId));
  // A project's spend counts every charge of its keys (its budget's too), in id order like the keys'.
  const projectTables = trx.withTables<ProjectTables>();
  for (const [projectId, amount] of [...spendByProject].sort(byId)) {
    await projectTables
      .updateTable('projects')
      .set((eb) => ({ spent_nano: eb('spent_nano', '+', amount), budget_spent_nano: eb('budget_spent_nano', '+', amount) }))
      .where('id', '=', projectId)
      .execute();
  }
  await addCustomerSpend(trx, usages, fresh);
  const subscriptionIds = [...new Set([...usedBySubscription.keys(), ...overageBySubscription.keys()])].sort();
  await statements.addSubscriptionUse(subscriptionIds.map((id) => ({ id, usedNano: usedBySubscription.get(id) ?? 0n, overageNano: overageBySubscription.get(id) ?? 0n })));
}

/**
 * Holders' holds: new ones inserted (a holder's rows are made once), then each charge against one taken off it when
 * its settlement's entry is new (a replayed settlement takes nothing), a row taken down to nothing removed.
 */
async function writeHolderHolds(trx: Transaction<Database>, writes: MoneyWrites, fresh: ReadonlySet<string>): Promise<void> {
  const grants = (writes.holderGrants ?? []).filter((grant) => grant.heldNano > 0n);
  for (const part of chunk(grants, rowsPerStatement(5))) {
    await trx.insertInto('money_holds')
      .values(part.map((grant) => ({ instance_id: grant.holder, pool: grant.pool, account_id: grant.accountId, held_nano: grant.heldNano, updated_at: writes.now })))
      .onConflict((conflict) => conflict.columns(['instance_id', 'pool']).doNothing())
      .execute();
  }
  const taken = new Map<string, { holder: string; pool: string; amount: bigint }>();
  for (const take of writes.holderTakes ?? []) {
    if (!fresh.has(take.entryId) || take.takenNano <= 0n) continue;
    const id = `${take.holder}\u0000${take.pool}`;
    const known = taken.get(id) ?? { holder: take.holder, pool: take.pool, amount: 0n };
    known.amount += take.takenNano;
    taken.set(id, known);
  }
  for (const { holder, pool, amount } of [...taken.values()].sort((left, right) => (left.holder + left.pool < right.holder + right.pool ? -1 : 1))) {
    await trx.updateTable('money_holds')
      .set((eb) => ({ held_nano: eb('held_nano', '-', amount), updated_at: writes.now }))
      .where('instance_id', '=', holder).where('pool', '=', pool)
      .execute();
    await trx.deleteFrom('money_holds').where('instance_id', '=', holder).where('pool', '=', pool).where('held_nano', '<=', 0n).execute();
  }
}

export function transactionView(trx: Transaction<Database>, dialect: Dialect, statements: MoneyStatements): MoneyTransaction {
  return {
    read: (request) => readSnapshot(trx, statements, request),
    write: (instanceId, writes) => writeSettlement(trx, statements, instanceId, writes),

    updateSubscription(id, patch, now) {
      return subscriptionTable(trx).update(id, patch, now);
    },

    async instanceGone(instanceId, staleBefore) {
      let query = trx.selectFrom('gateway_instances').select('heartbeat_at').where('instance_id', '=', instanceId);
      if (dialect === 'postgres') query = query.forUpdate();
      const row = await query.executeTakeFirst();
      return staleBefore === null || row === undefined || toNumber(row.heartbeat_at) < staleBefore;
    },

    async claimCheckpoints(instanceId, accountIds) {
      const claimed: StoredCheckpoint[] = [];
      for (const part of chunk([...new Set(accountIds)], IN_LIST)) {
        const rows = await trx
          .deleteFrom('stream_checkpoints')
          .where('instance_id', '=', instanceId)
          .where('account_id', 'in', part)
          .returning(['request_id', 'account_id', 'cost_nano', 'reservation', 'usage_row'])
          .execute();
        for (const row of rows) {
          claimed.push({ requestId: row.request_id, accountId: row.account_id, costNano: toBigInt(row.cost_nano), reservation: row.reservation, usageRow: row.usage_row });
        }
      }
      return claimed;
    },

    async instanceHolds(instanceId) {
      const rows = await trx.selectFrom('money_holds').select(['pool', 'held_nano']).where('instance_id', '=', instanceId).execute();
      return new Map(rows.map((row) => [row.pool, toBigInt(row.held_nano)]));
    },

    async dropInstance(instanceId) {
      await trx.deleteFrom('money_holds').where('instance_id', '=', instanceId).execute();
      await trx.deleteFrom('gateway_instances').where('instance_id', '=', instanceId).execute();
    },

    async dropHolder(holder) {
      const rows = await trx.deleteFrom('money_holds').where('instance_id', '=', holder).returning('held_nano').execute();
      return rows.reduce((sum, row) => sum + toBigInt(row.held_nano), 0n);
    },

    insertUsageRows(rows) {
      return statements.insertUsageRows(rows.map(toUsageRow));
    },

    async settledEntryIds(entryIds) {
      const settled = new Set<string>();
      for (const part of chunk([...new Set(entryIds)], IN_LIST)) {
        for (const row of await trx.selectFrom('ledger_entries').select('id').where('id', 'in', part).execute()) settled.add(row.id);
        for (const row of await trx.selectFrom('subscription_usage').select('id').where('id', 'in', part).execute()) settled.add(row.id);
      }
      return settled;
    },
  };
}
