import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import { toBigInt, toNullableBigInt, toNumber } from '../convert.js';
import type { AccountsTable, Database } from '../database-schema.js';
import { chunk, pageLimit, rowsPerStatement, toPage } from '../pagination.js';
import type { Account, NanoUsd, Page, PageRequest } from '../records.js';
import type { AccountPatch, AccountRepository } from '../storage.js';

function toRecord(row: Selectable<AccountsTable>): Account {
  return {
    id: row.id,
    email: row.email,
    passwordHash: row.password_hash,
    tier: row.tier,
    balanceNano: toBigInt(row.balance_nano),
    creditLineNano: toBigInt(row.credit_line_nano),
    alertBalanceNano: toNullableBigInt(row.alert_balance_nano),
    createdAt: toNumber(row.created_at),
    updatedAt: toNumber(row.updated_at),
  };
}

function toRow(account: Account): Insertable<AccountsTable> {
  return {
    id: account.id,
    email: account.email,
    password_hash: account.passwordHash,
    tier: account.tier,
    balance_nano: account.balanceNano,
    credit_line_nano: account.creditLineNano,
    alert_balance_nano: account.alertBalanceNano,
    created_at: account.createdAt,
    updated_at: account.updatedAt,
  };
}

function toChanges(patch: AccountPatch, now: number): Updateable<AccountsTable> {
  const changes: Updateable<AccountsTable> = { updated_at: now };
  if (patch.email !== undefined) changes.email = patch.email;
  if (patch.passwordHash !== undefined) changes.password_hash = patch.passwordHash;
  if (patch.tier !== undefined) changes.tier = patch.tier;
  if (patch.creditLineNano !== undefined) changes.credit_line_nano = patch.creditLineNano;
  if (patch.alertBalanceNano !== undefined) changes.alert_balance_nano = patch.alertBalanceNano;
  return changes;
}

export function createAccountRepository(db: Kysely<Database>): AccountRepository {
  return {
    async create(account) {
      await db.insertInto('accounts').values(toRow(account)).execute();
    },

    async getById(id) {
      const row = await db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
      return row === undefined ? null : toRecord(row);
    },

    async getByEmail(email) {
      const row = await db.selectFrom('accounts').selectAll().where('email', '=', email).executeTakeFirst();
      return row === undefined ? null : toRecord(row);
    },

    async list(page: PageRequest): Promise<Page<Account>> {
      const limit = pageLimit(page);
      let query = db.selectFrom('accounts').selectAll().orderBy('id').limit(limit + 1);
      if (page.after != null) query = query.where('id', '>', page.after);
      const rows = await query.execute();
      return toPage(rows.map(toRecord), limit, (account) => account.id);
    },

    async update(id, patch, now) {
      const row = await db
        .updateTable('accounts')
        .set(toChanges(patch, now))
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
      return row === undefined ? null : toRecord(row);
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
