import { sql, type Kysely } from 'kysely';
import { toBigInt } from '../convert.js';
import type { AccountsTable, Database } from '../database-schema.js';
import { chunk, pageLimit, rowsPerStatement, toPage } from '../pagination.js';
import type { Account, AccountStatus, NanoUsd } from '../../domain/records.js';
import { integer, money, nullableInteger, nullableMoney, nullableText, oneOf, recordMapping, text } from './record-columns.js';
import { tableAccess, type TableMapping } from './table-access.js';

const ACCOUNT_STATUSES: readonly AccountStatus[] = ['enabled', 'disabled', 'deleted'];
import type { AccountPatch, AccountRepository } from '../storage.js';

/** The pseudonym a deleted account keeps in place of its email: unique, not deliverable, not personal. */
export function deletedEmail(accountId: string): string {
  return `deleted+${accountId}@deleted.invalid`;
}

const ACCOUNT_COLUMNS = recordMapping<AccountsTable, Account, AccountPatch>(
  {
    id: text, email: text, passwordHash: nullableText, tier: text, balanceNano: money, creditLineNano: money, alertBalanceNano: nullableMoney,
    status: oneOf(ACCOUNT_STATUSES, 'account status'), rpm: nullableInteger, tpm: nullableInteger, concurrency: nullableInteger,
    deletedAt: nullableInteger, createdAt: integer, updatedAt: integer,
  },
  { email: true, passwordHash: true, tier: true, creditLineNano: true, alertBalanceNano: true, status: true, rpm: true, tpm: true, concurrency: true, deletedAt: true },
);
const toRecord = ACCOUNT_COLUMNS.toRecord;

const ACCOUNTS: TableMapping<'accounts', Account, AccountPatch> = { table: 'accounts', key: 'id', keyOf: (account) => account.id, ...ACCOUNT_COLUMNS };

export function createAccountRepository(db: Kysely<Database>, dialect: 'sqlite' | 'postgres'): AccountRepository {
  const accounts = tableAccess(db, ACCOUNTS);
  return {
    create: accounts.insert,
    getById: accounts.get,
    getByIds: accounts.getMany,
    getByEmail: (email) => accounts.getBy('email', email),
    list: (page) => accounts.page(page),

    async search(text, page) {
      const limit = pageLimit(page);
      // The text is literal: LIKE's wildcards in it are escaped. Case is ignored on both databases.
      const pattern = `${text.toLowerCase().replace(/[%_\\]/g, (match) => `\\${match}`)}%`;
      let query = db.selectFrom('accounts').selectAll()
        .where(sql<boolean>`(lower(email) like ${pattern} escape '\\' or lower(id) like ${pattern} escape '\\'
          or id in (select account_id from billing_profiles where lower(name) like ${pattern} escape '\\'))`)
        .orderBy('id').limit(limit + 1);
      if (page.after != null) query = query.where('id', '>', page.after);
      const rows = await query.execute();
      return toPage(rows.map(toRecord), limit, (account) => account.id);
    },

    update: accounts.update,

    async erase(id, now) {
      return db.transaction().execute(async (trx) => {
        // PostgreSQL: the account's row is locked before its keys, the order every money transaction takes them in
        // (accounts, then keys), so an erase beside a settlement of the same account waits instead of deadlocking.
        let lookup = trx.selectFrom('accounts').selectAll().where('id', '=', id);
        if (dialect === 'postgres') lookup = lookup.forUpdate();
        const existing = await lookup.executeTakeFirst();
        if (existing === undefined) return null;
        if (existing.status === 'deleted') return toRecord(existing);
        await trx.updateTable('api_keys').set({ status: 'revoked', updated_at: now }).where('account_id', '=', id).where('status', '!=', 'revoked').execute();
        await trx.updateTable('subscriptions').set({ status: 'cancelled', cancel_at: now, updated_at: now }).where('account_id', '=', id).where('status', '=', 'active').execute();
        const row = await trx
          .updateTable('accounts')
          .set({
            status: 'deleted',
            email: deletedEmail(id),
            password_hash: null,
            alert_balance_nano: null,
            alert_quota_percent: null,
            deleted_at: now,
            updated_at: now,
          })
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
        return toRecord(row);
      });
    },

    async getBalances(ids) {
      const balances = new Map<string, NanoUsd>();
      for (const part of chunk([...new Set(ids)], rowsPerStatement(1))) {
        const rows = await db.selectFrom('accounts').select(['id', 'balance_nano']).where('id', 'in', part).execute();
        for (const row of rows) balances.set(row.id, toBigInt(row.balance_nano));
      }
      return balances;
    },
  };
}
