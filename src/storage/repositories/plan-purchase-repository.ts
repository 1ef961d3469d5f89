import { sql, type Kysely, type Transaction } from 'kysely';
import type { Invoice } from '../../domain/commerce-records.js';
import type { CommerceDatabase } from '../commerce-schema.js';
import { toBigInt } from '../convert.js';
import type { NanoUsd, Subscription } from '../../domain/records.js';
import type { SubscriptionPatch } from '../storage.js';
import { toInvoice } from './commerce-rows.js';
import { coreTransaction } from './account-credit.js';
import { paidStatements, type PaidTransaction } from './commerce-transaction.js';
import { subscriptionTable, toSubscriptionRecord } from './subscription-repository.js';

type Dialect = 'sqlite' | 'postgres';

/** An account's funds as a purchase sees them under the account's lock. */
export interface AccountFunds {
  balanceNano: NanoUsd;
  creditLineNano: NanoUsd;
  /** What every gateway instance holds from the wallet for requests in flight and leases. */
  heldNano: NanoUsd;
}

/**
 * What buying or renewing a plan period does, all in one database transaction under the account's row lock (the
 * lock every money transaction takes): the payment's ledger entry, the subscription's change and the period's
 * invoice are stored together or not at all.
 */
export interface PlanPurchaseTransaction extends PaidTransaction {
  funds(accountId: string): Promise<AccountFunds | null>;
  subscriptions(accountId: string): Promise<Subscription[]>;
  subscription(id: string): Promise<Subscription | null>;
  createSubscription(subscription: Subscription): Promise<void>;
  updateSubscription(id: string, patch: SubscriptionPatch, now: number): Promise<Subscription | null>;
  invoiceBySource(source: string): Promise<Invoice | null>;
}

export interface PlanPurchaseRepository {
  transact<T>(accountId: string, work: (transaction: PlanPurchaseTransaction) => Promise<T>): Promise<T>;
  /** Active subscriptions set to renew whose paid period ends before `before`, soonest first. */
  listRenewalsDue(before: number, limit: number): Promise<Subscription[]>;
}

function transactionView(trx: Transaction<CommerceDatabase>): PlanPurchaseTransaction {
  const subscriptions = subscriptionTable(coreTransaction(trx));
  return {
    async funds(accountId) {
      const account = await trx.selectFrom('accounts').select(['balance_nano', 'credit_line_nano']).where('id', '=', accountId).executeTakeFirst();
      if (account === undefined) return null;
      const held = await trx
        .selectFrom('money_holds')
        .select(sql<bigint | string | null>`sum(${sql.ref('held_nano')})`.as('held'))
        .where('pool', '=', `wallet:${accountId}`)
        .executeTakeFirstOrThrow();
      return { balanceNano: toBigInt(account.balance_nano), creditLineNano: toBigInt(account.credit_line_nano), heldNano: held.held === null ? 0n : toBigInt(held.held) };
    },

    subscriptions: (accountId) => subscriptions.listAll({ account_id: accountId }),
    subscription: subscriptions.get,
    createSubscription: subscriptions.insert,
    updateSubscription: subscriptions.update,

    ...paidStatements(trx),

    async invoiceBySource(source) {
      const row = await trx.selectFrom('invoices').selectAll().where('source', '=', source).executeTakeFirst();
      return row === undefined ? null : toInvoice(row);
    },
  };
}

export function createPlanPurchaseRepository(db: Kysely<CommerceDatabase>, dialect: Dialect): PlanPurchaseRepository {
  return {
    transact(accountId, work) {
      return db.transaction().execute(async (trx) => {
        // PostgreSQL: the account's row lock, as the ledger's money transactions take it, so no settlement or hold
        // interleaves between reading the funds and paying. (SQLite write transactions are serialised already.)
        if (dialect === 'postgres') await trx.selectFrom('accounts').select('id').where('id', '=', accountId).forNoKeyUpdate().execute();
        return work(transactionView(trx));
      });
    },

    async listRenewalsDue(before, limit) {
      const rows = await db
        .selectFrom('subscriptions')
        .selectAll()
        .where('status', '=', 'active')
        .where('renews', '=', 1)
        .where('paid_through', 'is not', null)
        .where('paid_through', '<', before)
        .orderBy('paid_through')
        .limit(limit)
        .execute();
      return rows.map(toSubscriptionRecord);
    },
  };
}
