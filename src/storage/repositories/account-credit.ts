import { sql, type Transaction } from 'kysely';
import { toBigInt } from '../convert.js';
import type { Database } from '../database-schema.js';
import type { NanoUsd } from '../../domain/records.js';
import type { LedgerCredit } from '../storage.js';

/**
 * The core tables' view of a transaction over a schema that extends them (commerce, sign-up credits). Kysely's
 * builders are invariant in the schema, so the wider transaction is narrowed once here rather than at each caller.
 */
export function coreTransaction<Tables extends Database>(trx: Transaction<Tables>): Transaction<Database> {
  return trx as unknown as Transaction<Database>;
}

/**
 * Credits (a negative amount debits) an account inside the caller's transaction, which holds the account's row lock
 * (PostgreSQL) or the database's write lock (SQLite): the ledger entry, then the balance moved by its amount.
 * Idempotent per entry id: an id already in the ledger moves nothing and answers null; otherwise the new balance.
 * Every credit, top-up, refund and plan payment goes through here, so the ledger and the balance never drift.
 */
export async function creditLockedAccount(trx: Transaction<Database>, credit: LedgerCredit): Promise<NanoUsd | null> {
  const inserted = await trx
    .insertInto('ledger_entries')
    .values({
      id: credit.entryId,
      account_id: credit.accountId,
      kind: credit.kind,
      amount_nano: credit.amountNano,
      key_id: null,
      request_id: null,
      reason: credit.reason,
      created_at: credit.createdAt,
    })
    .onConflict((conflict) => conflict.column('id').doNothing())
    .returning('id')
    .executeTakeFirst();
  if (inserted === undefined) return null;
  const updated = await trx
    .updateTable('accounts')
    .set({ balance_nano: sql<bigint>`${sql.ref('balance_nano')} + cast(${credit.amountNano} as bigint)` })
    .where('id', '=', credit.accountId)
    .returning('balance_nano')
    .executeTakeFirstOrThrow();
  return toBigInt(updated.balance_nano);
}
