import { CompiledQuery, sql } from 'kysely';
import type { Insertable, Selectable, Transaction } from 'kysely';
import type {
  AccountsTable, ApiKeysTable, Database, LedgerEntriesTable, MoneyHoldsTable, PlansTable, SubscriptionsTable, SubscriptionUsageTable, UsageLogsTable,
} from '../database-schema.js';
import { chunk, rowsPerStatement } from '../pagination.js';
import { integerArray, textArray, unnestInsert } from '../postgres-arrays.js';
import { insertUsageLogs } from './usage-log-repository.js';

/** An amount per row id, in id order. */
export type AmountsById = [string, bigint][];

/** A subscription's period use and overage to add. */
export interface SubscriptionUse {
  id: string;
  usedNano: bigint;
  overageNano: bigint;
}

export type AccountFundsRow = Pick<Selectable<AccountsTable>, 'id' | 'balance_nano' | 'credit_line_nano'>;
export type KeyFundsRow = Pick<Selectable<ApiKeysTable>,
  'id' | 'account_id' | 'quota_nano' | 'spent_nano' | 'budget_period' | 'budget_limit_nano' | 'budget_spent_nano' | 'budget_period_start'>;
/** PostgreSQL sums bigint to numeric (a decimal string); SQLite to an integer. */
export interface PoolHeldRow {
  pool: string;
  held: bigint | string;
}

/**
 * The statements of one money transaction: its reads (rows of the ids given, in no particular order), and its writes,
 * which answer what they inserted where the batch needs to know.
 */
export interface MoneyStatements {
  selectAccounts(ids: string[]): Promise<AccountFundsRow[]>;
  selectKeys(ids: string[]): Promise<KeyFundsRow[]>;
  selectSubscriptions(ids: string[]): Promise<Selectable<SubscriptionsTable>[]>;
  selectPlans(ids: string[]): Promise<Selectable<PlansTable>[]>;
  /** What all instances hold from each pool that has holds. */
  heldByPool(pools: string[]): Promise<PoolHeldRow[]>;
  /** The ids actually inserted (an id already stored is skipped). */
  insertLedgerEntries(rows: Insertable<LedgerEntriesTable>[]): Promise<string[]>;
  insertSubscriptionUsage(rows: Insertable<SubscriptionUsageTable>[]): Promise<string[]>;
  debitAccounts(amounts: AmountsById): Promise<void>;
  /** Adds to both the key's spend and its budget spend. */
  addKeySpend(amounts: AmountsById): Promise<void>;
  addSubscriptionUse(uses: SubscriptionUse[]): Promise<void>;
  deleteCheckpoints(requestIds: string[]): Promise<void>;
  dropHolds(instanceId: string, pools: string[]): Promise<void>;
  upsertHolds(rows: Insertable<MoneyHoldsTable>[]): Promise<void>;
  insertUsageRows(rows: Insertable<UsageLogsTable>[]): Promise<void>;
}

const IN_LIST = rowsPerStatement(1);
/** Three parameters per row: the IN list entry and the CASE branch pair. */
const ROWS_PER_UPDATE = rowsPerStatement(3);
/** Keys move two columns by the same amounts: two CASE expressions, five parameters per row. */
const KEYS_PER_UPDATE = rowsPerStatement(5);

/** `case <column> when $1 then $2 … end`: each row's own amount, so one UPDATE moves many rows by different amounts. */
function amountBy(column: string, amounts: AmountsById) {
  const branches = amounts.map(([id, amount]) => sql`when ${id} then cast(${amount} as bigint)`);
  return sql<bigint>`case ${sql.ref(column)} ${sql.join(branches, sql` `)} end`;
}

/** Kysely queries with bound parameters per row, in chunks under the parameter limit (SQLite). */
export function kyselyMoneyStatements(trx: Transaction<Database>): MoneyStatements {
  const inChunks = async <Row>(ids: string[], select: (part: string[]) => Promise<Row[]>): Promise<Row[]> => {
    const rows: Row[] = [];
    for (const part of chunk(ids, IN_LIST)) rows.push(...await select(part));
    return rows;
  };
  return {
    selectAccounts: (ids) => inChunks(ids, (part) => trx.selectFrom('accounts').select(['id', 'balance_nano', 'credit_line_nano']).where('id', 'in', part).execute()),
    selectKeys: (ids) => inChunks(ids, (part) => trx
      .selectFrom('api_keys')
      .select(['id', 'account_id', 'quota_nano', 'spent_nano', 'budget_period', 'budget_limit_nano', 'budget_spent_nano', 'budget_period_start'])
      .where('id', 'in', part)
      .execute()),
    selectSubscriptions: (ids) => inChunks(ids, (part) => trx.selectFrom('subscriptions').selectAll().where('id', 'in', part).execute()),
    selectPlans: (ids) => inChunks(ids, (part) => trx.selectFrom('plans').selectAll().where('id', 'in', part).execute()),
    heldByPool: (pools) => inChunks(pools, (part) => trx
      .selectFrom('money_holds')
      .select(['pool', sql<bigint | string>`sum(${sql.ref('held_nano')})`.as('held')])
      .where('pool', 'in', part)
      .groupBy('pool')
      .execute()),

    async insertLedgerEntries(rows) {
      const ids: string[] = [];
      for (const part of chunk(rows, rowsPerStatement(9))) {
        const inserted = await trx.insertInto('ledger_entries').values(part).onConflict((conflict) => conflict.column('id').doNothing()).returning('id').execute();
        for (const row of inserted) ids.push(row.id);
      }
      return ids;
    },

    async insertSubscriptionUsage(rows) {
      const ids: string[] = [];
      for (const part of chunk(rows, rowsPerStatement(9))) {
        const inserted = await trx.insertInto('subscription_usage').values(part).onConflict((conflict) => conflict.column('id').doNothing()).returning('id').execute();
        for (const row of inserted) ids.push(row.id);
      }
      return ids;
    },

    async debitAccounts(amounts) {
      for (const part of chunk(amounts, ROWS_PER_UPDATE)) {
        await trx.updateTable('accounts')
          .set({ balance_nano: sql<bigint>`${sql.ref('balance_nano')} - ${amountBy('id', part)}` })
          .where('id', 'in', part.map(([id]) => id))
          .execute();
      }
    },

    async addKeySpend(amounts) {
      for (const part of chunk(amounts, KEYS_PER_UPDATE)) {
        await trx.updateTable('api_keys')
          .set({
            spent_nano: sql<bigint>`${sql.ref('spent_nano')} + ${amountBy('id', part)}`,
            budget_spent_nano: sql<bigint>`${sql.ref('budget_spent_nano')} + ${amountBy('id', part)}`,
          })
          .where('id', 'in', part.map(([id]) => id))
          .execute();
      }
    },

    async addSubscriptionUse(uses) {
      for (const use of uses) {
        await trx.updateTable('subscriptions')
          .set({
            used_nano: sql<bigint>`${sql.ref('used_nano')} + cast(${use.usedNano} as bigint)`,
            overage_used_nano: sql<bigint>`${sql.ref('overage_used_nano')} + cast(${use.overageNano} as bigint)`,
          })
          .where('id', '=', use.id)
          .execute();
      }
    },

    async deleteCheckpoints(requestIds) {
      for (const part of chunk(requestIds, IN_LIST)) {
        await trx.deleteFrom('stream_checkpoints').where('request_id', 'in', part).execute();
      }
    },

    async dropHolds(instanceId, pools) {
      for (const part of chunk(pools, IN_LIST)) {
        await trx.deleteFrom('money_holds').where('instance_id', '=', instanceId).where('pool', 'in', part).execute();
      }
    },

    async upsertHolds(rows) {
      for (const part of chunk(rows, rowsPerStatement(5))) {
        await trx
          .insertInto('money_holds')
          .values(part)
          .onConflict((conflict) => conflict.columns(['instance_id', 'pool']).doUpdateSet({
            held_nano: (expression) => expression.ref('excluded.held_nano'),
            updated_at: (expression) => expression.ref('excluded.updated_at'),
          }))
          .execute();
      }
    },

    async insertUsageRows(rows) {
      for (const part of chunk(rows, rowsPerStatement(22))) {
        await trx.insertInto('usage_logs').values(part).onConflict((conflict) => conflict.column('request_id').doNothing()).execute();
      }
    },
  };
}

const insertLedgerEntries = unnestInsert<Insertable<LedgerEntriesTable>>('ledger_entries', {
  id: 'text',
  account_id: 'text',
  kind: 'text',
  amount_nano: 'int8',
  key_id: 'text',
  request_id: 'text',
  reason: 'text',
  created_at: 'int8',
  shortfall_nano: 'int8',
}, 'on conflict ("id") do nothing returning "id"');

const insertSubscriptionUsage = unnestInsert<Insertable<SubscriptionUsageTable>>('subscription_usage', {
  id: 'text',
  subscription_id: 'text',
  account_id: 'text',
  key_id: 'text',
  request_id: 'text',
  period_start: 'int8',
  amount_nano: 'int8',
  overage_nano: 'int8',
  created_at: 'int8',
}, 'on conflict ("id") do nothing returning "id"');

const upsertHolds = unnestInsert<Insertable<MoneyHoldsTable>>('money_holds', {
  instance_id: 'text',
  pool: 'text',
  account_id: 'text',
  held_nano: 'int8',
  updated_at: 'int8',
}, 'on conflict ("instance_id", "pool") do update set "held_nano" = excluded."held_nano", "updated_at" = excluded."updated_at"');

const SELECT_ACCOUNTS = 'select "id", "balance_nano", "credit_line_nano" from "accounts" where "id" = any($1::text[])';
const SELECT_KEYS = 'select "id", "account_id", "quota_nano", "spent_nano", "budget_period", "budget_limit_nano", "budget_spent_nano", "budget_period_start" '
  + 'from "api_keys" where "id" = any($1::text[])';
const SELECT_SUBSCRIPTIONS = 'select * from "subscriptions" where "id" = any($1::text[])';
const SELECT_PLANS = 'select * from "plans" where "id" = any($1::text[])';
const HELD_BY_POOL = 'select "pool", sum("held_nano") as "held" from "money_holds" where "pool" = any($1::text[]) group by "pool"';
const DEBIT_ACCOUNTS = 'update "accounts" set "balance_nano" = "accounts"."balance_nano" - "v"."amount" '
  + 'from unnest($1::text[], $2::int8[]) as "v"("id", "amount") where "accounts"."id" = "v"."id"';
const ADD_KEY_SPEND = 'update "api_keys" set "spent_nano" = "api_keys"."spent_nano" + "v"."amount", '
  + '"budget_spent_nano" = "api_keys"."budget_spent_nano" + "v"."amount" '
  + 'from unnest($1::text[], $2::int8[]) as "v"("id", "amount") where "api_keys"."id" = "v"."id"';
const ADD_SUBSCRIPTION_USE = 'update "subscriptions" set "used_nano" = "subscriptions"."used_nano" + "v"."used", '
  + '"overage_used_nano" = "subscriptions"."overage_used_nano" + "v"."overage" '
  + 'from unnest($1::text[], $2::int8[], $3::int8[]) as "v"("id", "used", "overage") where "subscriptions"."id" = "v"."id"';
const DELETE_CHECKPOINTS = 'delete from "stream_checkpoints" where "request_id" = any($1::text[])';
const DROP_HOLDS = 'delete from "money_holds" where "instance_id" = $1 and "pool" = any($2::text[])';

/**
 * One statement per kind of read or write, whatever the batch size: its text never changes, and each column's values
 * travel as one array parameter (PostgreSQL). The ids of each update are unique and in id order, as the caller gives them.
 */
export function postgresMoneyStatements(trx: Transaction<Database>): MoneyStatements {
  const run = (query: CompiledQuery) => trx.executeQuery(query);
  const insertedIds = async (query: CompiledQuery) => (await trx.executeQuery<{ id: string }>(query)).rows.map((row) => row.id);
  const idsAndAmounts = (amounts: AmountsById) => [textArray(amounts.map(([id]) => id)), integerArray(amounts.map(([, amount]) => amount))];
  const rowsOf = async <Row>(text: string, ids: string[]): Promise<Row[]> => (ids.length === 0 ? [] : (await trx.executeQuery<Row>(CompiledQuery.raw(text, [textArray(ids)]))).rows);
  return {
    selectAccounts: (ids) => rowsOf(SELECT_ACCOUNTS, ids),
    selectKeys: (ids) => rowsOf(SELECT_KEYS, ids),
    selectSubscriptions: (ids) => rowsOf(SELECT_SUBSCRIPTIONS, ids),
    selectPlans: (ids) => rowsOf(SELECT_PLANS, ids),
    heldByPool: (pools) => rowsOf(HELD_BY_POOL, pools),
    insertLedgerEntries: async (rows) => (rows.length === 0 ? [] : insertedIds(insertLedgerEntries(rows))),
    insertSubscriptionUsage: async (rows) => (rows.length === 0 ? [] : insertedIds(insertSubscriptionUsage(rows))),
    async debitAccounts(amounts) {
      if (amounts.length > 0) await run(CompiledQuery.raw(DEBIT_ACCOUNTS, idsAndAmounts(amounts)));
    },
    async addKeySpend(amounts) {
      if (amounts.length > 0) await run(CompiledQuery.raw(ADD_KEY_SPEND, idsAndAmounts(amounts)));
    },
    async addSubscriptionUse(uses) {
      if (uses.length === 0) return;
      await run(CompiledQuery.raw(ADD_SUBSCRIPTION_USE, [textArray(uses.map((use) => use.id)), integerArray(uses.map((use) => use.usedNano)), integerArray(uses.map((use) => use.overageNano))]));
    },
    async deleteCheckpoints(requestIds) {
      if (requestIds.length > 0) await run(CompiledQuery.raw(DELETE_CHECKPOINTS, [textArray(requestIds)]));
    },
    async dropHolds(instanceId, pools) {
      if (pools.length > 0) await run(CompiledQuery.raw(DROP_HOLDS, [instanceId, textArray(pools)]));
    },
    async upsertHolds(rows) {
      if (rows.length > 0) await run(upsertHolds(rows));
    },
    async insertUsageRows(rows) {
      if (rows.length > 0) await run(insertUsageLogs(rows));
    },
  };
}
