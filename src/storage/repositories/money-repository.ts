import { CompiledQuery, sql } from 'kysely';
import type { Insertable, Kysely, Transaction } from 'kysely';
import { toBigInt, toNumber, toOneOf } from '../convert.js';
import type { Database, LedgerEntriesTable, SubscriptionUsageTable } from '../database-schema.js';
import type { SqliteBatches } from '../dialects.js';
import { chunk, rowsPerStatement } from '../pagination.js';
import { textArray } from '../postgres-arrays.js';
import type { BudgetPeriod, NanoUsd } from '../../domain/records.js';
import type { LedgerAudit, MoneyRepository, MoneySnapshot, MoneyTransaction, MoneyWrites, SettledUsage, StoredCheckpoint } from '../storage.js';
import { toRow as toUsageRow } from './usage-log-repository.js';
import { toPlanRecord } from './plan-repository.js';
import { subscriptionTable, toSubscriptionRecord } from './subscription-repository.js';
import { postgresMoneyStatements, sqliteMoneyStatements, type AccountFundsRow, type MoneyStatements } from './money-statements.js';

type Dialect = 'sqlite' | 'postgres';

const IN_LIST = rowsPerStatement(1);
/**
 * PostgreSQL locks a money transaction's accounts up front, in byte order ("C" collation, which matches JavaScript's
 * default sort of the ASCII ids), so concurrent batches of any instances take them in one order and cannot deadlock.
 * The same statement reads their funds: no other transaction can change them while they are locked, so the
 * transaction's read of the accounts needs no round trip of its own.
 */
const LOCK_ACCOUNTS_IN_ID_ORDER = 'select "id", "balance_nano", "credit_line_nano" from "accounts" where "id" = any($1::text[]) order by "id" collate "C" for no key update';
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

function transactionView(trx: Transaction<Database>, dialect: Dialect, statements: MoneyStatements): MoneyTransaction {
  return {
    async read(request) {
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
      for (const row of await statements.heldByPool([...new Set(request.pools)])) snapshot.heldByPool.set(row.pool, toBigInt(row.held));
      return snapshot;
    },

    async write(instanceId, writes: MoneyWrites) {
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

      // Only entries actually inserted move money, so a batch replayed after an unacknowledged commit is harmless.
      const fresh = new Set<string>();
      const withEntry = writes.usages.filter(needsLedgerEntry);
      for (const id of await statements.insertLedgerEntries(withEntry.map(ledgerRow))) fresh.add(id);
      const withSubscription = writes.usages.filter((usage) => needsSubscriptionRow(usage) && (!needsLedgerEntry(usage) || fresh.has(usage.entryId)));
      for (const id of await statements.insertSubscriptionUsage(withSubscription.map(subscriptionUsageRow))) fresh.add(id);

      const debitByAccount = new Map<string, bigint>();
      const spendByKey = new Map<string, bigint>();
      const usedBySubscription = new Map<string, bigint>();
      const overageBySubscription = new Map<string, bigint>();
      for (const usage of writes.usages) {
        if (!fresh.has(usage.entryId)) continue;
        addTo(debitByAccount, usage.accountId, usage.walletNano);
        addTo(spendByKey, usage.keyId, usage.walletNano + usage.subscriptionNano);
        if (usage.subscriptionId !== null) {
          addTo(usedBySubscription, usage.subscriptionId, usage.subscriptionNano);
          addTo(overageBySubscription, usage.subscriptionId, usage.overageNano);
        }
      }
      await statements.debitAccounts([...debitByAccount].sort(byId));
      await statements.addKeySpend([...spendByKey].sort(byId));
      const subscriptionIds = [...new Set([...usedBySubscription.keys(), ...overageBySubscription.keys()])].sort();
      await statements.addSubscriptionUse(subscriptionIds.map((id) => ({ id, usedNano: usedBySubscription.get(id) ?? 0n, overageNano: overageBySubscription.get(id) ?? 0n })));

      await statements.deleteCheckpoints(writes.checkpointsDone ?? []);

      const kept = writes.holds.filter((hold) => hold.heldNano > 0n);
      const dropped = writes.holds.filter((hold) => hold.heldNano <= 0n).map((hold) => hold.pool);
      await statements.dropHolds(instanceId, dropped);
      await statements.upsertHolds(kept.map((hold) => ({ instance_id: instanceId, pool: hold.pool, account_id: hold.accountId, held_nano: hold.heldNano, updated_at: writes.now })));
      return fresh;
    },

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

/** PostgreSQL sums of bigint are numeric (decimal strings); SQLite's are integers. */
function sumOf(column: string) {
  return sql<bigint | string>`coalesce(sum(${sql.ref(column)}), 0)`;
}

/**
 * `sqlite` (SQLite only): the connection, and the observer told how long each money transaction and checkpoint write
 * took. Every statement runs synchronously there, so that is how long it held the event loop.
 */
export function createMoneyRepository(db: Kysely<Database>, dialect: Dialect, sqlite: SqliteBatches | null): MoneyRepository {
  const observe = sqlite?.observe ?? null;
  // SQLite has one connection: its statements run on it directly, inside the transaction Kysely opened there.
  const sqliteStatements = sqlite === null ? null : sqliteMoneyStatements(sqlite.database);
  return {
    async transact(accountIds, work) {
      const startedAt = performance.now();
      let rows = 0;
      const counted = (view: MoneyTransaction): MoneyTransaction => (observe === null ? view : {
        ...view,
        write(instanceId, writes) {
          rows += writes.usages.length + writes.holds.length;
          return view.write(instanceId, writes);
        },
      });
      const result = await db.transaction().execute(async (trx) => {
        let locked: AccountFundsRow[] = [];
        if (dialect === 'postgres' && accountIds.length > 0) {
          locked = (await trx.executeQuery<AccountFundsRow>(CompiledQuery.raw(LOCK_ACCOUNTS_IN_ID_ORDER, [textArray([...new Set(accountIds)].sort())]))).rows;
        }
        return work(counted(transactionView(trx, dialect, sqliteStatements ?? postgresMoneyStatements(trx, locked))));
      });
      observe?.('money', (performance.now() - startedAt) / 1000, rows);
      return result;
    },

    async registerInstance(instanceId, now) {
      return db.transaction().execute(async (trx) => {
        const dropped = await trx.deleteFrom('money_holds').where('instance_id', '=', instanceId).executeTakeFirst();
        await trx
          .insertInto('gateway_instances')
          .values({ instance_id: instanceId, started_at: now, heartbeat_at: now })
          .onConflict((conflict) => conflict.column('instance_id').doUpdateSet({ started_at: now, heartbeat_at: now }))
          .execute();
        return Number(dropped.numDeletedRows);
      });
    },

    async heartbeat(instanceId, now) {
      await db
        .insertInto('gateway_instances')
        .values({ instance_id: instanceId, started_at: now, heartbeat_at: now })
        .onConflict((conflict) => conflict.column('instance_id').doUpdateSet({ heartbeat_at: now }))
        .execute();
    },

    async releaseInstance(instanceId) {
      await db.transaction().execute(async (trx) => {
        await trx.deleteFrom('money_holds').where('instance_id', '=', instanceId).execute();
        await trx.deleteFrom('gateway_instances').where('instance_id', '=', instanceId).execute();
      });
    },

    async staleInstances(before) {
      const stale = await db.selectFrom('gateway_instances').select('instance_id').where('heartbeat_at', '<', before).execute();
      // Holds or checkpoints whose instance has no heartbeat row at all (it stopped, or never registered) are stale too.
      const registered = db.selectFrom('gateway_instances').select('instance_id');
      const orphanHolds = await db.selectFrom('money_holds').select('instance_id').distinct().where('instance_id', 'not in', registered).execute();
      const orphanCheckpoints = await db.selectFrom('stream_checkpoints').select('instance_id').distinct().where('instance_id', 'not in', registered).execute();
      return [...new Set([...stale, ...orphanHolds, ...orphanCheckpoints].map((row) => row.instance_id))];
    },

    async checkpointAccounts(instanceId) {
      const rows = await db.selectFrom('stream_checkpoints').select('account_id').distinct().where('instance_id', '=', instanceId).execute();
      return rows.map((row) => row.account_id);
    },

    async writeCheckpoints(instanceId, checkpoints, now) {
      if (checkpoints.length === 0) return;
      const rows = checkpoints.map((checkpoint) => ({
        request_id: checkpoint.requestId,
        instance_id: instanceId,
        account_id: checkpoint.accountId,
        cost_nano: checkpoint.costNano,
        reservation: checkpoint.reservation,
        usage_row: checkpoint.usageRow,
        updated_at: now,
      }));
      const startedAt = performance.now();
      await db.transaction().execute(async (trx) => {
        for (const part of chunk(rows, rowsPerStatement(7))) {
          await trx
            .insertInto('stream_checkpoints')
            .values(part)
            .onConflict((conflict) => conflict.column('request_id').doUpdateSet({
              cost_nano: (expression) => expression.ref('excluded.cost_nano'),
              usage_row: (expression) => expression.ref('excluded.usage_row'),
              updated_at: (expression) => expression.ref('excluded.updated_at'),
            }))
            .execute();
        }
      });
      observe?.('checkpoints', (performance.now() - startedAt) / 1000, rows.length);
    },

    async listHolds(accountId) {
      let query = db.selectFrom('money_holds').selectAll().orderBy('instance_id').orderBy('pool');
      if (accountId !== undefined) query = query.where('account_id', '=', accountId);
      const rows = await query.execute();
      return rows.map((row) => ({ instanceId: row.instance_id, pool: row.pool, accountId: row.account_id, heldNano: toBigInt(row.held_nano) }));
    },

    async audit(accountId) {
      const ledgerSums = db.selectFrom('ledger_entries').select(['account_id', sumOf('amount_nano').as('total')]).groupBy('account_id');
      const walletHolds = db
        .selectFrom('money_holds')
        .select(['account_id', sumOf('held_nano').as('held')])
        .where('pool', 'like', 'wallet:%')
        .groupBy('account_id');
      const reversals = db.selectFrom('ledger_entries').select(['account_id', sumOf('amount_nano').as('reversed')]).where('kind', '=', 'refund').groupBy('account_id');
      let accounts = db
        .selectFrom('accounts')
        .leftJoin(ledgerSums.as('sums'), 'sums.account_id', 'accounts.id')
        .leftJoin(walletHolds.as('holds'), 'holds.account_id', 'accounts.id')
        .leftJoin(reversals.as('reversals'), 'reversals.account_id', 'accounts.id')
        .select(['accounts.id', 'accounts.balance_nano', 'accounts.credit_line_nano', 'sums.total', 'holds.held', 'reversals.reversed'])
        .orderBy('accounts.id');
      if (accountId !== undefined) accounts = accounts.where('accounts.id', '=', accountId);

      const walletByKey = db.selectFrom('ledger_entries').select(['key_id', sumOf('amount_nano').as('total')]).where('kind', '=', 'usage').groupBy('key_id');
      const planByKey = db.selectFrom('subscription_usage').select(['key_id', sumOf('amount_nano').as('total')]).groupBy('key_id');
      let keys = db
        .selectFrom('api_keys')
        .leftJoin(walletByKey.as('wallet'), 'wallet.key_id', 'api_keys.id')
        .leftJoin(planByKey.as('plan'), 'plan.key_id', 'api_keys.id')
        .select(['api_keys.id', 'api_keys.account_id', 'api_keys.spent_nano', 'wallet.total as wallet_total', 'plan.total as plan_total'])
        .orderBy('api_keys.id');
      if (accountId !== undefined) keys = keys.where('api_keys.account_id', '=', accountId);

      let subscriptions = db
        .selectFrom('subscriptions')
        .select((expression) => [
          'subscriptions.id',
          'subscriptions.account_id',
          'subscriptions.used_nano',
          'subscriptions.overage_used_nano',
          expression
            .selectFrom('subscription_usage')
            .select(sumOf('amount_nano').as('total'))
            .whereRef('subscription_usage.subscription_id', '=', 'subscriptions.id')
            .whereRef('subscription_usage.period_start', '=', 'subscriptions.current_period_start')
            .as('usage_total'),
          expression
            .selectFrom('subscription_usage')
            .select(sumOf('overage_nano').as('total'))
            .whereRef('subscription_usage.subscription_id', '=', 'subscriptions.id')
            .whereRef('subscription_usage.period_start', '=', 'subscriptions.current_period_start')
            .as('overage_total'),
        ])
        .orderBy('subscriptions.id');
      if (accountId !== undefined) subscriptions = subscriptions.where('subscriptions.account_id', '=', accountId);

      let duplicates = db
        .selectFrom('ledger_entries')
        .select('request_id')
        .where('kind', '=', 'usage')
        .where('request_id', 'is not', null)
        .groupBy('request_id')
        .having(sql`count(*)`, '>', 1);
      if (accountId !== undefined) duplicates = duplicates.where('account_id', '=', accountId);

      const [accountRows, keyRows, subscriptionRows, duplicateRows] = await Promise.all([accounts.execute(), keys.execute(), subscriptions.execute(), duplicates.execute()]);
      const amount = (value: unknown): NanoUsd => (value === null || value === undefined ? 0n : toBigInt(value));
      const report: LedgerAudit = {
        accounts: accountRows.map((row) => ({
          id: row.id, balanceNano: amount(row.balance_nano), creditLineNano: amount(row.credit_line_nano), ledgerSumNano: amount(row.total), heldNano: amount(row.held), reversedNano: amount(row.reversed),
        })),
        keys: keyRows.map((row) => ({
          id: row.id, accountId: row.account_id, spentNano: amount(row.spent_nano), usageSumNano: -amount(row.wallet_total) + amount(row.plan_total),
        })),
        subscriptions: subscriptionRows.map((row) => ({
          id: row.id,
          accountId: row.account_id,
          usedNano: amount(row.used_nano),
          overageUsedNano: amount(row.overage_used_nano),
          usageSumNano: amount(row.usage_total),
          overageSumNano: amount(row.overage_total),
        })),
        duplicateCharges: duplicateRows.map((row) => row.request_id ?? ''),
      };
      return report;
    },

    async creditTotals(accountId) {
      const row = await db
        .selectFrom('ledger_entries')
        .select([
          sql<bigint | string>`coalesce(sum(case when ${sql.ref('amount_nano')} > 0 then ${sql.ref('amount_nano')} else 0 end), 0)`.as('credited'),
          sql<bigint | string>`coalesce(sum(case when ${sql.ref('amount_nano')} < 0 then ${sql.ref('amount_nano')} else 0 end), 0)`.as('debited'),
        ])
        .where('account_id', '=', accountId)
        .executeTakeFirstOrThrow();
      return { creditedNano: toBigInt(row.credited), debitedNano: -toBigInt(row.debited) };
    },
  };
}
