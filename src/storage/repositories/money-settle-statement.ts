import { CompiledQuery } from 'kysely';
import type { Insertable } from 'kysely';
import type { LedgerEntriesTable, MoneyHoldsTable } from '../money-schema.js';
import type { UsageLogsTable } from '../database-schema.js';
import { columnNames, integerArray, textArray, type ArrayColumns } from '../postgres-arrays.js';
import type { MoneyWrites, SettledUsage } from '../money-contracts.js';
import { USAGE_COLUMNS } from './usage-log-repository.js';

/**
 * The writes of a plain money transaction as one PostgreSQL statement: settlements that only the wallet paid (or that
 * record a shortfall), with no subscription, project, end-customer budget, holder or period rollover taking part —
 * what nearly every request of an ordinary key is. Data-modifying CTEs run in one statement, one round trip:
 *
 *  - `fresh`: the usage entries inserted (an entry already stored, a batch replayed after an unacknowledged commit, is
 *    skipped and moves nothing);
 *  - each account debited and each key's spend and budget spend raised by the exact sum of its fresh entries
 *    (an entry's amount is minus what the wallet paid, so the sums balance the ledger to the nano-dollar);
 *  - the settled streams' checkpoints deleted, this instance's holds set (or dropped at zero);
 *  - the settled requests' usage rows inserted (a row already stored is skipped), so each row is committed with its
 *    settlement and costs no statement of its own.
 *
 * Its reads stay separate statements before it: the accounts are locked first and the holds of every instance read
 * after the lock, so no other instance's commit can slip between the funds read and these writes.
 */
export interface PlainSettlement {
  entries: Insertable<LedgerEntriesTable>[];
  checkpointsDone: string[];
  droppedPools: string[];
  kept: Insertable<MoneyHoldsTable>[];
  instanceId: string;
  usageRows: Insertable<UsageLogsTable>[];
}

/** Nothing but the wallet and the key's own counters move: the one-statement write applies. */
export function isPlain(writes: MoneyWrites): boolean {
  if (writes.rollovers.length > 0 || (writes.budgetRollovers ?? []).length > 0 || (writes.projectBudgetRollovers ?? []).length > 0) return false;
  if ((writes.holderGrants ?? []).length > 0 || (writes.holderTakes ?? []).length > 0) return false;
  return writes.usages.every(isPlainUsage);
}

function isPlainUsage(usage: SettledUsage): boolean {
  return usage.subscriptionId === null && usage.subscriptionNano === 0n && usage.overageNano === 0n && usage.projectId == null && usage.customer == null;
}

const ENTRY_COLUMNS: ArrayColumns<Insertable<LedgerEntriesTable>> = {
  id: 'text', account_id: 'text', kind: 'text', amount_nano: 'int8', key_id: 'text', request_id: 'text', reason: 'text', created_at: 'int8', shortfall_nano: 'int8',
};
const HOLD_COLUMNS: ArrayColumns<Insertable<MoneyHoldsTable>> = {
  instance_id: 'text', pool: 'text', account_id: 'text', held_nano: 'int8', updated_at: 'int8',
};
const entryNames = columnNames(ENTRY_COLUMNS);
const holdNames = columnNames(HOLD_COLUMNS);
const usageNames = columnNames(USAGE_COLUMNS);

function placeholders<Row>(columns: ArrayColumns<Row>, first: number): string {
  return columnNames(columns).map((name, index) => `$${first + index}::${columns[name]}[]`).join(', ');
}

const quoted = (names: readonly string[]): string => names.map((name) => `"${name}"`).join(', ');
const HOLDS_FIRST = entryNames.length + 4;
const USAGE_FIRST = HOLDS_FIRST + holdNames.length;

const SETTLE_PLAIN = `with "fresh" as (`
  + `insert into "ledger_entries" (${quoted(entryNames)}) select * from unnest(${placeholders(ENTRY_COLUMNS, 1)}) `
  + `on conflict ("id") do nothing returning "id", "account_id", "key_id", "amount_nano"), `
  + `"debit" as (update "accounts" set "balance_nano" = "accounts"."balance_nano" + "s"."amount" `
  + `from (select "account_id", sum("amount_nano")::int8 as "amount" from "fresh" group by "account_id") as "s" `
  + `where "accounts"."id" = "s"."account_id" and "s"."amount" <> 0), `
  + `"spend" as (update "api_keys" set "spent_nano" = "api_keys"."spent_nano" - "s"."amount", "budget_spent_nano" = "api_keys"."budget_spent_nano" - "s"."amount" `
  + `from (select "key_id", sum("amount_nano")::int8 as "amount" from "fresh" group by "key_id") as "s" `
  + `where "api_keys"."id" = "s"."key_id" and "s"."amount" <> 0), `
  + `"checkpoints" as (delete from "stream_checkpoints" where "request_id" = any($${entryNames.length + 1}::text[])), `
  + `"dropped" as (delete from "money_holds" where "instance_id" = $${entryNames.length + 2} and "pool" = any($${entryNames.length + 3}::text[])), `
  + `"kept" as (insert into "money_holds" (${quoted(holdNames)}) select * from unnest(${placeholders(HOLD_COLUMNS, HOLDS_FIRST)}) `
  + `on conflict ("instance_id", "pool") do update set "held_nano" = excluded."held_nano", "updated_at" = excluded."updated_at"), `
  + `"usage" as (insert into "usage_logs" (${quoted(usageNames)}) select * from unnest(${placeholders(USAGE_COLUMNS, USAGE_FIRST)}) `
  + `on conflict ("request_id") do nothing) `
  + `select "id" from "fresh"`;

function arrays<Row>(columns: ArrayColumns<Row>, rows: readonly Row[]): string[] {
  return columnNames(columns).map((name) => (columns[name] === 'text' ? textArray(rows.map((row) => row[name])) : integerArray(rows.map((row) => row[name]))));
}

/** The statement and its parameters; it answers the ids of the entries it inserted. */
export function settlePlainQuery(settlement: PlainSettlement): CompiledQuery {
  return CompiledQuery.raw(SETTLE_PLAIN, [
    ...arrays(ENTRY_COLUMNS, settlement.entries),
    textArray(settlement.checkpointsDone),
    settlement.instanceId,
    textArray(settlement.droppedPools),
    ...arrays(HOLD_COLUMNS, settlement.kept),
    ...arrays(USAGE_COLUMNS, settlement.usageRows),
  ]);
}
