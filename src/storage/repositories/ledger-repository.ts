import { sql } from 'kysely';
import type { Insertable, Kysely, Selectable, Transaction } from 'kysely';
import { toBigInt, toNumber, toOneOf } from '../convert.js';
import type { Database } from '../database-schema.js';
import type { LedgerEntriesTable } from '../money-schema.js';
import { chunk, pageLimit, rowsPerStatement, toPage } from '../pagination.js';
import type { LedgerEntry, LedgerEntryKind, NanoUsd } from '../../domain/records.js';
import type { UsageCharge } from '../../domain/usage-records.js';
import { BalanceLimitError, type LedgerCredit, type LedgerRepository } from '../storage.js';
import { creditLockedAccount } from './account-credit.js';

const ENTRY_KINDS: readonly LedgerEntryKind[] = ['topup', 'usage', 'refund', 'correction', 'referral', 'subscription_grant', 'subscription', 'signup_credit'];
const LEDGER_COLUMNS = 8;
const DAY_MS = 86_400_000;

export type Dialect = 'sqlite' | 'postgres';

function toRecord(row: Selectable<LedgerEntriesTable>): LedgerEntry {
  return {
    id: row.id,
    accountId: row.account_id,
    kind: toOneOf(row.kind, ENTRY_KINDS, 'ledger entry kind'),
    amountNano: toBigInt(row.amount_nano),
    keyId: row.key_id,
    requestId: row.request_id,
    reason: row.reason,
    createdAt: toNumber(row.created_at),
    shortfallNano: toBigInt(row.shortfall_nano),
  };
}

function usageEntry(charge: UsageCharge): Insertable<LedgerEntriesTable> {
  if (charge.costNano < 0n) throw new RangeError(`Usage charge ${charge.entryId} has a negative cost`);
  return {
    id: charge.entryId,
    account_id: charge.accountId,
    kind: 'usage',
    amount_nano: -charge.costNano,
    key_id: charge.keyId,
    request_id: charge.requestId,
    reason: null,
    created_at: charge.createdAt,
  };
}

function addTo(totals: Map<string, bigint>, id: string, amount: bigint): void {
  totals.set(id, (totals.get(id) ?? 0n) + amount);
}

/**
 * PostgreSQL: takes the row locks of every account and key in the batch up front, in id order, so concurrent
 * batches cannot deadlock. `for no key update` is what the later UPDATEs need and does not block the foreign-key
 * checks of ledger inserts. (SQLite transactions already hold the database write lock: `begin immediate`.)
 */
async function lockInIdOrder(trx: Transaction<Database>, accountIds: string[], keyIds: string[]): Promise<void> {
  // Byte order ("C" collation) matches JavaScript's default sort of the ASCII ids, so chunks lock in one order.
  const byteOrder = sql`${sql.ref('id')} collate "C"`;
  for (const part of chunk([...accountIds].sort(), rowsPerStatement(1))) {
    await trx.selectFrom('accounts').select('id').where('id', 'in', part).orderBy(byteOrder).forNoKeyUpdate().execute();
  }
  for (const part of chunk([...keyIds].sort(), rowsPerStatement(1))) {
    await trx.selectFrom('api_keys').select('id').where('id', 'in', part).orderBy(byteOrder).forNoKeyUpdate().execute();
  }
}

/** `case id when $1 then $2 … end`: each row's own amount, so one UPDATE moves many rows by different amounts. */
function amountById(amounts: [string, bigint][]) {
  const branches = amounts.map(([id, amount]) => sql`when ${id} then cast(${amount} as bigint)`);
  return sql<bigint>`case ${sql.ref('id')} ${sql.join(branches, sql` `)} end`;
}

/** Three parameters per row: the IN list entry and the CASE branch pair. */
const ROWS_PER_UPDATE = rowsPerStatement(3);

/**
 * One credit (or debit) inside the caller's transaction: the account's lock taken, then `creditLockedAccount`.
 * Idempotent per `entryId`; null when there is no such account; BalanceLimitError (thrown, so the caller's
 * transaction rolls back) past the allowed range.
 */
export async function applyCreditIn(trx: Transaction<Database>, dialect: Dialect, credit: LedgerCredit): Promise<NanoUsd | null> {
  let lookup = trx.selectFrom('accounts').select('balance_nano').where('id', '=', credit.accountId);
  if (dialect === 'postgres') lookup = lookup.forNoKeyUpdate();
  const account = await lookup.executeTakeFirst();
  if (account === undefined) return null;

  const balanceNano = await creditLockedAccount(trx, credit);
  // Already applied (same entryId): idempotent, the balance stays as it is.
  if (balanceNano === null) return toBigInt(account.balance_nano);
  const max = credit.maxBalanceNano;
  // Thrown inside the transaction, so the entry and the balance just written are rolled back with it.
  if (max !== undefined && (balanceNano > max || balanceNano < -max)) throw new BalanceLimitError(toBigInt(account.balance_nano), max);
  return balanceNano;
}

/**
 * Writes usage charges in one transaction: their ledger entries (a replayed entry id moves no money), then each
 * account's balance and each key's spend lowered and raised by what was inserted, in id order.
 */
async function settleChargesIn(trx: Transaction<Database>, dialect: Dialect, charges: UsageCharge[]): Promise<void> {
  const entries = charges.map(usageEntry);
  if (dialect === 'postgres') {
    await lockInIdOrder(
      trx,
      [...new Set(charges.map((charge) => charge.accountId))],
      [...new Set(charges.map((charge) => charge.keyId))],
    );
  }

  // Only rows actually inserted come back, so replayed entryIds move no money.
  const costByAccount = new Map<string, bigint>();
  const costByKey = new Map<string, bigint>();
  for (const part of chunk(entries, rowsPerStatement(LEDGER_COLUMNS))) {
    const inserted = await trx
      .insertInto('ledger_entries')
      .values(part)
      .onConflict((conflict) => conflict.column('id').doNothing())
      .returning(['account_id', 'key_id', 'amount_nano'])
      .execute();
    for (const row of inserted) {
      const cost = -toBigInt(row.amount_nano);
      addTo(costByAccount, row.account_id, cost);
      if (row.key_id !== null) addTo(costByKey, row.key_id, cost);
    }
  }

  for (const part of chunk([...costByAccount].sort(byId), ROWS_PER_UPDATE)) {
    await trx
      .updateTable('accounts')
      .set({ balance_nano: sql<bigint>`${sql.ref('balance_nano')} - ${amountById(part)}` })
      .where('id', 'in', part.map(([id]) => id))
      .execute();
  }
  for (const part of chunk([...costByKey].sort(byId), ROWS_PER_UPDATE)) {
    await trx
      .updateTable('api_keys')
      .set({ spent_nano: sql<bigint>`${sql.ref('spent_nano')} + ${amountById(part)}` })
      .where('id', 'in', part.map(([id]) => id))
      .execute();
  }
}

export function createLedgerRepository(db: Kysely<Database>, dialect: Dialect): LedgerRepository {
  return {
    async applyCredit(credit) {
      return db.transaction().execute((trx) => applyCreditIn(trx, dialect, credit));
    },

    async settleCharges(charges) {
      if (charges.length === 0) return;
      await db.transaction().execute((trx) => settleChargesIn(trx, dialect, charges));
    },

    async listByAccount(accountId, page, filter = {}) {
      const limit = pageLimit(page);
      const descending = filter.order === 'desc';
      let query = db.selectFrom('ledger_entries').selectAll().where('account_id', '=', accountId).orderBy('id', descending ? 'desc' : 'asc').limit(limit + 1);
      if (page.after != null) query = query.where('id', descending ? '<' : '>', page.after);
      if (filter.kinds !== undefined) query = filter.kinds.length === 0 ? query.where(sql<boolean>`1 = 0`) : query.where('kind', 'in', [...filter.kinds]);
      if (filter.excludeKinds !== undefined && filter.excludeKinds.length > 0) query = query.where('kind', 'not in', [...filter.excludeKinds]);
      if (filter.from !== undefined) query = query.where('created_at', '>=', filter.from);
      if (filter.to !== undefined) query = query.where('created_at', '<', filter.to);
      const rows = await query.execute();
      return toPage(rows.map(toRecord), limit, (entry) => entry.id);
    },

    async sumByAccount(accountId, before) {
      // PostgreSQL's sum(bigint) is numeric (a decimal string from pg); SQLite's is an integer.
      let query = db
        .selectFrom('ledger_entries')
        .select(sql<bigint | string>`coalesce(sum(${sql.ref('amount_nano')}), 0)`.as('total'))
        .where('account_id', '=', accountId);
      if (before !== undefined) query = query.where('created_at', '<', before);
      const row = await query.executeTakeFirstOrThrow();
      return toBigInt(row.total);
    },

    async dailyUsage(accountId, from, to) {
      // Integer division of epoch milliseconds on both databases (bigint / bigint truncates, as SQLite's integers do).
      const day = sql<number | string>`(${sql.ref('created_at')} / ${sql.lit(DAY_MS)})`;
      const rows = await db
        .selectFrom('ledger_entries')
        .select([
          day.as('day'),
          sql<number | string>`count(*)`.as('entries'),
          sql<bigint | string>`coalesce(sum(${sql.ref('amount_nano')}), 0)`.as('amount'),
          sql<bigint | string>`coalesce(sum(${sql.ref('shortfall_nano')}), 0)`.as('shortfall'),
          sql<number | string>`max(${sql.ref('created_at')})`.as('last_at'),
        ])
        .where('account_id', '=', accountId)
        .where('kind', '=', 'usage')
        .where('created_at', '>=', from)
        .where('created_at', '<', to)
        .groupBy(day)
        .orderBy(day)
        .execute();
      return rows.map((row) => ({
        day: toNumber(row.day) * DAY_MS,
        entries: toNumber(row.entries),
        amountNano: toBigInt(row.amount),
        shortfallNano: toBigInt(row.shortfall),
        lastAt: toNumber(row.last_at),
      }));
    },
  };
}

function byId([left]: [string, bigint], [right]: [string, bigint]): number {
  return left < right ? -1 : left > right ? 1 : 0;
}
