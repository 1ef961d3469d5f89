import { CompiledQuery } from 'kysely';
import type { SqliteConnection, SqliteStatement } from '../sqlite-connection.js';
import type { Insertable, Selectable, Transaction } from 'kysely';
import type { AccountsTable, ApiKeysTable, Database, PlansTable, SubscriptionsTable, UsageLogsTable } from '../database-schema.js';
import type { LedgerEntriesTable, MoneyHoldsTable, SubscriptionUsageTable } from '../money-schema.js';
import { columnNames, integerArray, rowInsertText, textArray, unnestInsert, type ArrayColumns } from '../postgres-arrays.js';
import { insertUsageLogs, sqliteUsageRows } from './usage-log-repository.js';
import { settlePlainQuery, type PlainSettlement } from './money-settle-statement.js';

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
  /**
   * All writes of a plain settlement in one statement (PostgreSQL, where each statement is a round trip); answers the
   * ids of the entries inserted. Absent: the writes go one kind at a time (SQLite, where a statement costs no trip).
   */
  settlePlain?(settlement: PlainSettlement): Promise<string[]>;
}

/** Each table's columns with the PostgreSQL array type their values travel in; SQLite binds them by name, row by row. */
const LEDGER_ENTRY_COLUMNS: ArrayColumns<Insertable<LedgerEntriesTable>> = {
  id: 'text',
  account_id: 'text',
  kind: 'text',
  amount_nano: 'int8',
  key_id: 'text',
  request_id: 'text',
  reason: 'text',
  created_at: 'int8',
  shortfall_nano: 'int8',
};

const SUBSCRIPTION_USAGE_COLUMNS: ArrayColumns<Insertable<SubscriptionUsageTable>> = {
  id: 'text',
  subscription_id: 'text',
  account_id: 'text',
  key_id: 'text',
  request_id: 'text',
  period_start: 'int8',
  amount_nano: 'int8',
  overage_nano: 'int8',
  created_at: 'int8',
};

const MONEY_HOLD_COLUMNS: ArrayColumns<Insertable<MoneyHoldsTable>> = {
  instance_id: 'text',
  pool: 'text',
  account_id: 'text',
  held_nano: 'int8',
  updated_at: 'int8',
};

type Bindable = string | number | bigint | null;

/** A row's values in the order of `names`, a missing one as NULL. */
function valuesOf<Row>(row: Row, names: readonly (keyof Row & string)[]): Bindable[] {
  return names.map((name) => (row[name] ?? null) as Bindable);
}

type Prepare = (text: string) => SqliteStatement;

/** Each statement prepared on first use and kept: the texts never change, so SQLite parses each once. */
function preparedOnce(prepare: Prepare, text: string): () => SqliteStatement {
  let statement: SqliteStatement | null = null;
  return () => (statement ??= prepare(text));
}

/**
 * SQLite: one prepared single-row statement per row, run synchronously on the connection of the transaction that is
 * open. No statement is built or parsed per batch (that was most of a money transaction's hold on the event loop);
 * a row costs a few microseconds and there is no round trip to save.
 */
export function sqliteMoneyStatements(database: SqliteConnection): MoneyStatements {
  const prepare: Prepare = (text) => database.prepare(text);
  const account = preparedOnce(prepare, 'select id, balance_nano, credit_line_nano from accounts where id = ?');
  const key = preparedOnce(prepare, 'select id, account_id, quota_nano, spent_nano, budget_period, budget_limit_nano, budget_spent_nano, budget_period_start from api_keys where id = ?');
  const subscription = preparedOnce(prepare, 'select * from subscriptions where id = ?');
  const plan = preparedOnce(prepare, 'select * from plans where id = ?');
  const held = preparedOnce(prepare, 'select sum(held_nano) as held from money_holds where pool = ?');
  const ledgerEntry = preparedOnce(prepare, rowInsertText('ledger_entries', LEDGER_ENTRY_COLUMNS, 'on conflict (id) do nothing'));
  const subscriptionUsage = preparedOnce(prepare, rowInsertText('subscription_usage', SUBSCRIPTION_USAGE_COLUMNS, 'on conflict (id) do nothing'));
  const debit = preparedOnce(prepare, 'update accounts set balance_nano = balance_nano - ? where id = ?');
  const keySpend = preparedOnce(prepare, 'update api_keys set spent_nano = spent_nano + ?, budget_spent_nano = budget_spent_nano + ? where id = ?');
  const subscriptionUse = preparedOnce(prepare, 'update subscriptions set used_nano = used_nano + ?, overage_used_nano = overage_used_nano + ? where id = ?');
  const checkpoint = preparedOnce(prepare, 'delete from stream_checkpoints where request_id = ?');
  const usageRows = sqliteUsageRows(database);
  const dropHold = preparedOnce(prepare, 'delete from money_holds where instance_id = ? and pool = ?');
  const setHold = preparedOnce(
    prepare,
    rowInsertText('money_holds', MONEY_HOLD_COLUMNS, 'on conflict (instance_id, pool) do update set held_nano = excluded.held_nano, updated_at = excluded.updated_at'),
  );

  const rowsOf = <T>(statement: () => SqliteStatement, ids: readonly string[]): T[] => {
    const rows: T[] = [];
    for (const id of ids) {
      const row = statement().get(id) as T | undefined;
      if (row !== undefined) rows.push(row);
    }
    return rows;
  };
  /** The ids of the rows inserted (the first column is the id; an id already stored is skipped). */
  const insertNew = <Row>(statement: () => SqliteStatement, names: readonly (keyof Row & string)[], rows: readonly Row[]): string[] => {
    const inserted: string[] = [];
    for (const row of rows) {
      const values = valuesOf(row, names);
      if (statement().run(...values).changes === 1n) inserted.push(values[0] as string);
    }
    return inserted;
  };
  const ledgerNames = columnNames(LEDGER_ENTRY_COLUMNS);
  const subscriptionUsageNames = columnNames(SUBSCRIPTION_USAGE_COLUMNS);
  const holdNames = columnNames(MONEY_HOLD_COLUMNS);

  return {
    selectAccounts: async (ids) => rowsOf(account, ids),
    selectKeys: async (ids) => rowsOf(key, ids),
    selectSubscriptions: async (ids) => rowsOf(subscription, ids),
    selectPlans: async (ids) => rowsOf(plan, ids),
    async heldByPool(pools) {
      const rows: PoolHeldRow[] = [];
      for (const pool of pools) {
        const sum = (held().get(pool) as { held: bigint | null }).held;
        if (sum !== null) rows.push({ pool, held: sum });
      }
      return rows;
    },
    insertLedgerEntries: async (rows) => insertNew(ledgerEntry, ledgerNames, rows),
    insertSubscriptionUsage: async (rows) => insertNew(subscriptionUsage, subscriptionUsageNames, rows),
    async debitAccounts(amounts) {
      for (const [id, amount] of amounts) debit().run(amount, id);
    },
    async addKeySpend(amounts) {
      for (const [id, amount] of amounts) keySpend().run(amount, amount, id);
    },
    async addSubscriptionUse(uses) {
      for (const use of uses) subscriptionUse().run(use.usedNano, use.overageNano, use.id);
    },
    async deleteCheckpoints(requestIds) {
      for (const id of requestIds) checkpoint().run(id);
    },
    async dropHolds(instanceId, pools) {
      for (const pool of pools) dropHold().run(instanceId, pool);
    },
    async upsertHolds(rows) {
      for (const row of rows) setHold().run(...valuesOf(row, holdNames));
    },
    async insertUsageRows(rows) {
      usageRows(rows);
    },
  };
}

const insertLedgerEntries = unnestInsert('ledger_entries', LEDGER_ENTRY_COLUMNS, 'on conflict ("id") do nothing returning "id"');

const insertSubscriptionUsage = unnestInsert('subscription_usage', SUBSCRIPTION_USAGE_COLUMNS, 'on conflict ("id") do nothing returning "id"');

const upsertHolds = unnestInsert('money_holds', MONEY_HOLD_COLUMNS, 'on conflict ("instance_id", "pool") do update set "held_nano" = excluded."held_nano", "updated_at" = excluded."updated_at"');

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
 * `locked`: the accounts the transaction locked, with their funds as the lock read them; reads of those accounts answer
 * from them, which is right while the transaction has not written them yet (a money transaction reads before it writes).
 */
export function postgresMoneyStatements(trx: Transaction<Database>, locked: readonly AccountFundsRow[] = []): MoneyStatements {
  const run = (query: CompiledQuery) => trx.executeQuery(query);
  const insertedIds = async (query: CompiledQuery) => (await trx.executeQuery<{ id: string }>(query)).rows.map((row) => row.id);
  const idsAndAmounts = (amounts: AmountsById) => [textArray(amounts.map(([id]) => id)), integerArray(amounts.map(([, amount]) => amount))];
  const rowsOf = async <Row>(text: string, ids: string[]): Promise<Row[]> => (ids.length === 0 ? [] : (await trx.executeQuery<Row>(CompiledQuery.raw(text, [textArray(ids)]))).rows);
  const lockedById = new Map(locked.map((row) => [row.id, row]));
  return {
    selectAccounts: async (ids) => {
      if (!ids.every((id) => lockedById.has(id))) return rowsOf(SELECT_ACCOUNTS, ids);
      return ids.map((id) => lockedById.get(id) as AccountFundsRow);
    },
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
    settlePlain: (settlement) => insertedIds(settlePlainQuery(settlement)),
  };
}
