import { sql, type Kysely, type Transaction } from 'kysely';
import type { CheckoutSession, Invoice, Referral, ReferralReward } from '../../domain/commerce-records.js';
import type { CommerceDatabase } from '../commerce-schema.js';
import { toNumber } from '../convert.js';
import type { NanoUsd } from '../../domain/records.js';
import { toCheckoutSession, toInvoice, toReferral, toReferralReward } from './commerce-rows.js';
import { paidStatements, type PaidTransaction } from './commerce-transaction.js';

type Dialect = 'sqlite' | 'postgres';

/**
 * What one webhook event may do, all in one database transaction: so a top-up's event record, its credit, its
 * invoice and the referrer's reward are either all stored or none is.
 */
export interface PaymentTransaction extends PaidTransaction {
  /** Records the event id; false when it was already processed (a duplicate or replay). */
  claimEvent(id: string, type: string, outcome: string, now: number): Promise<boolean>;
  /** Records what the event's processing came to (the claim wrote a provisional outcome). */
  setEventOutcome(id: string, outcome: string): Promise<void>;
  /** Takes the row locks of these accounts in one order (PostgreSQL), before any balance moves. */
  lockAccounts(accountIds: string[]): Promise<void>;
  session(id: string): Promise<CheckoutSession | null>;
  sessionByPaymentIntent(paymentIntentId: string): Promise<CheckoutSession | null>;
  /** How many of the account's top-ups are paid already. */
  paidSessionCount(accountId: string): Promise<number>;
  /** Marks an unpaid session paid; false when it already was. */
  markPaid(id: string, paid: { paymentIntentId: string | null; ledgerEntryId: string; invoiceId: string; now: number }): Promise<boolean>;
  markExpired(id: string): Promise<boolean>;
  addReversed(id: string, amountNano: NanoUsd): Promise<void>;
  invoice(id: string): Promise<Invoice | null>;
  referral(referredAccountId: string): Promise<Referral | null>;
  rewardCount(referredAccountId: string): Promise<number>;
  insertReward(reward: Omit<ReferralReward, 'reversedNano'>): Promise<boolean>;
  /** The referral reward a top-up earned, if any. */
  rewardOf(checkoutSessionId: string): Promise<ReferralReward | null>;
  /** Records that `amountNano` more of the reward was taken back. */
  addRewardReversed(ledgerEntryId: string, amountNano: NanoUsd): Promise<void>;
}

export interface PaymentRepository {
  createSession(session: CheckoutSession): Promise<void>;
  getSession(id: string): Promise<CheckoutSession | null>;
  listSessions(accountId: string, limit: number): Promise<CheckoutSession[]>;
  transact<T>(work: (transaction: PaymentTransaction) => Promise<T>): Promise<T>;
}

function transactionView(trx: Transaction<CommerceDatabase>, dialect: Dialect): PaymentTransaction {
  return {
    async claimEvent(id, type, outcome, now) {
      const inserted = await trx
        .insertInto('stripe_events')
        .values({ id, type, outcome, received_at: now })
        .onConflict((conflict) => conflict.column('id').doNothing())
        .returning('id')
        .executeTakeFirst();
      return inserted !== undefined;
    },

    async setEventOutcome(id, outcome) {
      await trx.updateTable('stripe_events').set({ outcome }).where('id', '=', id).execute();
    },

    ...sessionStatements(trx),
    ...referralStatements(trx),

    async lockAccounts(accountIds) {
      if (dialect !== 'postgres' || accountIds.length === 0) return;
      // Byte order, as the ledger's batches lock accounts, so the two never wait on each other in a cycle.
      await trx.selectFrom('accounts').select('id').where('id', 'in', [...new Set(accountIds)].sort())
        .orderBy(sql`${sql.ref('id')} collate "C"`).forNoKeyUpdate().execute();
    },

    ...paidStatements(trx),

    async invoice(id) {
      const row = await trx.selectFrom('invoices').selectAll().where('id', '=', id).executeTakeFirst();
      return row === undefined ? null : toInvoice(row);
    },
  };
}

/** A top-up's Checkout Session inside the webhook's transaction: read, paid once, expired, its refunds counted. */
function sessionStatements(trx: Transaction<CommerceDatabase>): Pick<PaymentTransaction,
  'session' | 'sessionByPaymentIntent' | 'paidSessionCount' | 'markPaid' | 'markExpired' | 'addReversed'> {
  return {
    async session(id) {
      const row = await trx.selectFrom('checkout_sessions').selectAll().where('id', '=', id).executeTakeFirst();
      return row === undefined ? null : toCheckoutSession(row);
    },

    async sessionByPaymentIntent(paymentIntentId) {
      const row = await trx.selectFrom('checkout_sessions').selectAll().where('payment_intent_id', '=', paymentIntentId).executeTakeFirst();
      return row === undefined ? null : toCheckoutSession(row);
    },

    async paidSessionCount(accountId) {
      const row = await trx.selectFrom('checkout_sessions').select(sql<number | bigint | string>`count(*)`.as('count'))
        .where('account_id', '=', accountId).where('status', '=', 'paid').executeTakeFirstOrThrow();
      return toNumber(row.count);
    },

    async markPaid(id, paid) {
      const updated = await trx
        .updateTable('checkout_sessions')
        .set({ status: 'paid', payment_intent_id: paid.paymentIntentId, ledger_entry_id: paid.ledgerEntryId, invoice_id: paid.invoiceId, paid_at: paid.now })
        .where('id', '=', id)
        .where('status', '!=', 'paid')
        .returning('id')
        .executeTakeFirst();
      return updated !== undefined;
    },

    async markExpired(id) {
      const updated = await trx.updateTable('checkout_sessions').set({ status: 'expired' }).where('id', '=', id).where('status', '=', 'open').returning('id').executeTakeFirst();
      return updated !== undefined;
    },

    async addReversed(id, amountNano) {
      await trx.updateTable('checkout_sessions')
        .set({ reversed_nano: sql<bigint>`${sql.ref('reversed_nano')} + cast(${amountNano} as bigint)` })
        .where('id', '=', id)
        .execute();
    },
  };
}

/** The referral a top-up may reward, inside the webhook's transaction: the reward paid once, and taken back. */
function referralStatements(trx: Transaction<CommerceDatabase>): Pick<PaymentTransaction,
  'referral' | 'rewardCount' | 'insertReward' | 'rewardOf' | 'addRewardReversed'> {
  return {
    async referral(referredAccountId) {
      const row = await trx.selectFrom('referrals').selectAll().where('referred_account_id', '=', referredAccountId).executeTakeFirst();
      return row === undefined ? null : toReferral(row);
    },

    async rewardCount(referredAccountId) {
      const row = await trx.selectFrom('referral_rewards').select(sql<number | bigint | string>`count(*)`.as('count'))
        .where('referred_account_id', '=', referredAccountId).executeTakeFirstOrThrow();
      return toNumber(row.count);
    },

    async insertReward(reward) {
      const inserted = await trx
        .insertInto('referral_rewards')
        .values({
          ledger_entry_id: reward.ledgerEntryId,
          referrer_account_id: reward.referrerAccountId,
          referred_account_id: reward.referredAccountId,
          checkout_session_id: reward.checkoutSessionId,
          amount_nano: reward.amountNano,
          created_at: reward.createdAt,
        })
        .onConflict((conflict) => conflict.doNothing())
        .returning('ledger_entry_id')
        .executeTakeFirst();
      return inserted !== undefined;
    },

    async rewardOf(checkoutSessionId) {
      const row = await trx.selectFrom('referral_rewards').selectAll().where('checkout_session_id', '=', checkoutSessionId).executeTakeFirst();
      return row === undefined ? null : toReferralReward(row);
    },

    async addRewardReversed(ledgerEntryId, amountNano) {
      await trx.updateTable('referral_rewards')
        .set({ reversed_nano: sql<bigint>`${sql.ref('reversed_nano')} + cast(${amountNano} as bigint)` })
        .where('ledger_entry_id', '=', ledgerEntryId)
        .execute();
    },
  };
}

export function createPaymentRepository(db: Kysely<CommerceDatabase>, dialect: Dialect): PaymentRepository {
  return {
    async createSession(session) {
      await db.insertInto('checkout_sessions').values({
        id: session.id,
        account_id: session.accountId,
        user_id: session.userId,
        credit_cents: session.creditCents,
        tax_cents: session.taxCents,
        total_cents: session.totalCents,
        currency: session.currency,
        status: session.status,
        payment_intent_id: session.paymentIntentId,
        ledger_entry_id: session.ledgerEntryId,
        invoice_id: session.invoiceId,
        reversed_nano: session.reversedNano,
        created_at: session.createdAt,
        paid_at: session.paidAt,
      }).execute();
    },

    async getSession(id) {
      const row = await db.selectFrom('checkout_sessions').selectAll().where('id', '=', id).executeTakeFirst();
      return row === undefined ? null : toCheckoutSession(row);
    },

    async listSessions(accountId, limit) {
      const rows = await db.selectFrom('checkout_sessions').selectAll().where('account_id', '=', accountId).orderBy('created_at', 'desc').limit(limit).execute();
      return rows.map(toCheckoutSession);
    },

    transact(work) {
      return db.transaction().execute((trx) => work(transactionView(trx, dialect)));
    },
  };
}

