import { sql } from 'kysely';
import type { Insertable, Selectable, Transaction } from 'kysely';
import type BetterSqlite3 from 'better-sqlite3';
import type {
  AccountsTable, ApiKeysTable, Database, LedgerEntriesTable, MoneyHoldsTable, PlansTable, SubscriptionUsageTable, SubscriptionsTable,
} from '../database-schema.js';
import { chunk, rowsPerStatement } from '../pagination.js';

export type AccountFundsRow = Pick<Selectable<AccountsTable>, 'id' | 'balance_nano' | 'credit_line_nano'>;
export type KeyFundsRow = Pick<
  Selectable<ApiKeysTable>,
  'id' | 'account_id' | 'quota_nano' | 'spent_nano' | 'budget_period' | 'budget_limit_nano' | 'budget_spent_nano' | 'budget_period_start'
>;
export interface PoolHeldRow {
  pool: string;
  held: bigint | string;
}

/**
 * The reads and writes one money transaction is made of, run inside that transaction. Amounts moved per row come
 * sorted by id, so every transaction takes its row locks in one order. Inserts skip ids already stored and return
 * the ids they did insert: only those move money, so a replayed batch is harmless.
 */
export interface MoneyStatements {
  accounts(ids: readonly string[]): Promise<AccountFundsRow[]>;
  keys(ids: readonly string[]): Promise<KeyFundsRow[]>;
  subscriptions(ids: readonly string[]): Promise<Selectable<SubscriptionsTable>[]>;
  plans(ids: readonly string[]): Promise<Selectable<PlansTable>[]>;
  /** Sum over every instance of the holds on each pool; pools without holds are left out. */
  heldByPool(pools: readonly string[]): Promise<PoolHeldRow[]>;
  insertLedgerEntries(rows: readonly Insertable<LedgerEntriesTable>[]): Promise<string[]>;
  insertSubscriptionUsage(rows: readonly Insertable<SubscriptionUsageTable>[]): Promise<string[]>;
  debitAccounts(amounts: readonly (readonly [string, bigint])[]): Promise<void>;
  /** Adds each amount to the key's spend and to its budget's spend. */
  addKeySpend(amounts: readonly (readonly [string, bigint])[]): Promise<void>;
  addSubscriptionUse(id: string, usedNano: bigint, overageNano: bigint): Promise<void>;
  deleteCheckpoints(requestIds: readonly string[]): Promise<void>;
  deleteHolds(instanceId: string, pools: readonly string[]): Promise<void>;
  /** Sets each hold's amount, adding the rows that are missing. */
  upsertHolds(rows: readonly Insertable<MoneyHoldsTable>[]): Promise<void>;
}

const IN_LIST = rowsPerStatement(1);
/** Three parameters per row: the IN list entry and the CASE branch pair. */
const ROWS_PER_UPDATE = rowsPerStatement(3);
/** Keys move two columns by the same amounts: two CASE expressions, five parameters per row. */
const KEYS_PER_UPDATE = rowsPerStatement(5);

/** `case <column> when $1 then $2 … end`: each row's own amount, so one UPDATE moves many rows by different amounts. */
function amountBy(column: string, amounts: readonly (readonly [string, bigint])[]) {
  const branches = amounts.map(([id, amount]) => sql`when ${id} then cast(${amount} as bigint)`);
  return sql<bigint>`case ${sql.ref(column)} ${sql.join(branches, sql` `)} end`;
}

async function inParts<T>(ids: readonly string[], query: (part: string[]) => Promise<T[]>): Promise<T[]> {
  const rows: T[] = [];
  for (const part of chunk(ids, IN_LIST)) rows.push(...(await query(part)));
  return rows;
}

/** Multi-row statements built by Kysely: one round trip per few hundred rows, what a networked database needs. */
export function kyselyMoneyStatements(trx: Transaction<Database>): MoneyStatements {
  return {
    accounts: (ids) => inParts(ids, (part) => trx.selectFrom('accounts').select(['id', 'balance_nano', 'credit_line_nano']).where('id', 'in', part).execute()),
    keys: (ids) => inParts(ids, (part) => trx
      .selectFrom('api_keys')
      .select(['id', 'account_id', 'quota_nano', 'spent_nano', 'budget_period', 'budget_limit_nano', 'budget_spent_nano', 'budget_period_start'])
      .where('id', 'in', part)
      .execute()),
    subscriptions: (ids) => inParts(ids, (part) => trx.selectFrom('subscriptions').selectAll().where('id', 'in', part).execute()),
    plans: (ids) => inParts(ids, (part) => trx.selectFrom('plans').selectAll().where('id', 'in', part).execute()),
    heldByPool: (pools) => inParts(pools, (part) => trx
      .selectFrom('money_holds')
      .select(['pool', sql<bigint | string>`sum(${sql.ref('held_nano')})`.as('held')])
      .where('pool', 'in', part)
      .groupBy('pool')
      .execute()),

    async insertLedgerEntries(rows) {
      const inserted: string[] = [];
      for (const part of chunk(rows, rowsPerStatement(9))) {
        const ids = await trx.insertInto('ledger_entries').values(part).onConflict((conflict) => conflict.column('id').doNothing()).returning('id').execute();
        for (const row of ids) inserted.push(row.id);
      }
      return inserted;
    },
    async insertSubscriptionUsage(rows) {
      const inserted: string[] = [];
      for (const part of chunk(rows, rowsPerStatement(9))) {
        const ids = await trx.insertInto('subscription_usage').values(part).onConflict((conflict) => conflict.column('id').doNothing()).returning('id').execute();
        for (const row of ids) inserted.push(row.id);
      }
      return inserted;
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
    async addSubscriptionUse(id, usedNano, overageNano) {
      await trx.updateTable('subscriptions')
        .set({
          used_nano: sql<bigint>`${sql.ref('used_nano')} + cast(${usedNano} as bigint)`,
          overage_used_nano: sql<bigint>`${sql.ref('overage_used_nano')} + cast(${overageNano} as bigint)`,
        })
        .where('id', '=', id)
        .execute();
    },
    async deleteCheckpoints(requestIds) {
      for (const part of chunk(requestIds, IN_LIST)) await trx.deleteFrom('stream_checkpoints').where('request_id', 'in', part).execute();
    },
    async deleteHolds(instanceId, pools) {
      for (const part of chunk(pools, IN_LIST)) await trx.deleteFrom('money_holds').where('instance_id', '=', instanceId).where('pool', 'in', part).execute();
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
  };
}

const LEDGER_COLUMNS = ['id', 'account_id', 'kind', 'amount_nano', 'key_id', 'request_id', 'reason', 'created_at', 'shortfall_nano'] as const;
const SUBSCRIPTION_USAGE_COLUMNS = ['id', 'subscription_id', 'account_id', 'key_id', 'request_id', 'period_start', 'amount_nano', 'overage_nano', 'created_at'] as const;

function insertSql(table: string, columns: readonly string[], conflict: string): string {
  return `insert into ${table} (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')}) ${conflict}`;
}

type Bindable = string | number | bigint | null;
type Prepare = (text: string) => BetterSqlite3.Statement;

/** Each statement prepared on first use and kept: the texts never change, so SQLite parses each once. */
function preparedOnce(prepare: Prepare, text: string): () => BetterSqlite3.Statement {
  let statement: BetterSqlite3.Statement | null = null;
  return () => (statement ??= prepare(text));
}

/**
 * SQLite: one prepared single-row statement per row, run synchronously on the connection of the transaction that is
 * open. No statement is built or parsed per batch (that was most of a money transaction's hold on the event loop);
 * a row costs a few microseconds and there is no round trip to save.
 */
export function sqliteMoneyStatements(database: BetterSqlite3.Database): MoneyStatements {
  const prepare: Prepare = (text) => database.prepare(text);
  const account = preparedOnce(prepare, 'select id, balance_nano, credit_line_nano from accounts where id = ?');
  const key = preparedOnce(prepare, 'select id, account_id, quota_nano, spent_nano, budget_period, budget_limit_nano, budget_spent_nano, budget_period_start from api_keys where id = ?');
  const subscription = preparedOnce(prepare, 'select * from subscriptions where id = ?');
  const plan = preparedOnce(prepare, 'select * from plans where id = ?');
  const held = preparedOnce(prepare, 'select sum(held_nano) as held from money_holds where pool = ?');
  const ledgerEntry = preparedOnce(prepare, insertSql('ledger_entries', LEDGER_COLUMNS, 'on conflict (id) do nothing'));
  const subscriptionUsage = preparedOnce(prepare, insertSql('subscription_usage', SUBSCRIPTION_USAGE_COLUMNS, 'on conflict (id) do nothing'));
  const debit = preparedOnce(prepare, 'update accounts set balance_nano = balance_nano - ? where id = ?');
  const keySpend = preparedOnce(prepare, 'update api_keys set spent_nano = spent_nano + ?, budget_spent_nano = budget_spent_nano + ? where id = ?');
  const subscriptionUse = preparedOnce(prepare, 'update subscriptions set used_nano = used_nano + ?, overage_used_nano = overage_used_nano + ? where id = ?');
  const checkpoint = preparedOnce(prepare, 'delete from stream_checkpoints where request_id = ?');
  const dropHold = preparedOnce(prepare, 'delete from money_holds where instance_id = ? and pool = ?');
  const setHold = preparedOnce(
    prepare,
    `${insertSql('money_holds', ['instance_id', 'pool', 'account_id', 'held_nano', 'updated_at'], '')}on conflict (instance_id, pool) do update set held_nano = excluded.held_nano, updated_at = excluded.updated_at`,
  );

  const rowsOf = <T>(statement: () => BetterSqlite3.Statement, ids: readonly string[]): T[] => {
    const rows: T[] = [];
    for (const id of ids) {
      const row = statement().get(id) as T | undefined;
      if (row !== undefined) rows.push(row);
    }
    return rows;
  };
  const insertNew = <Row>(statement: () => BetterSqlite3.Statement, columns: readonly (keyof Row & string)[], rows: readonly Row[]): string[] => {
    const inserted: string[] = [];
    for (const row of rows) {
      const values = columns.map((column) => (row[column] ?? null) as Bindable);
      if (statement().run(values).changes === 1) inserted.push(values[0] as string);
    }
    return inserted;
  };

  return {
    accounts: async (ids) => rowsOf(account, ids),
    keys: async (ids) => rowsOf(key, ids),
    subscriptions: async (ids) => rowsOf(subscription, ids),
    plans: async (ids) => rowsOf(plan, ids),
    async heldByPool(pools) {
      const rows: PoolHeldRow[] = [];
      for (const pool of pools) {
        const sum = (held().get(pool) as { held: bigint | null }).held;
        if (sum !== null) rows.push({ pool, held: sum });
      }
      return rows;
    },
    insertLedgerEntries: async (rows) => insertNew(ledgerEntry, LEDGER_COLUMNS, rows),
    insertSubscriptionUsage: async (rows) => insertNew(subscriptionUsage, SUBSCRIPTION_USAGE_COLUMNS, rows),
    async debitAccounts(amounts) {
      for (const [id, amount] of amounts) debit().run(amount, id);
    },
    async addKeySpend(amounts) {
      for (const [id, amount] of amounts) keySpend().run(amount, amount, id);
    },
    async addSubscriptionUse(id, usedNano, overageNano) {
      subscriptionUse().run(usedNano, overageNano, id);
    },
    async deleteCheckpoints(requestIds) {
      for (const id of requestIds) checkpoint().run(id);
    },
    async deleteHolds(instanceId, pools) {
      for (const pool of pools) dropHold().run(instanceId, pool);
    },
    async upsertHolds(rows) {
      for (const row of rows) setHold().run(row.instance_id, row.pool, row.account_id, row.held_nano, row.updated_at);
    },
  };
}
