import type { Transaction } from 'kysely';
import type { BillingProfile, Invoice, InvoiceDraft } from '../../domain/commerce-records.js';
import type { WebhookEventDraft } from '../../domain/webhook-events.js';
import type { CommerceDatabase } from '../commerce-schema.js';
import type { LedgerCredit } from '../storage.js';
import { coreTransaction, creditLockedAccount } from './account-credit.js';
import { toBillingProfile } from './commerce-rows.js';
import { issueInvoiceIn } from './invoice-repository.js';
import { insertWebhookEvent, webhookTablesOf } from './webhook-repository.js';

/**
 * What every transaction that is paid for (a top-up's webhook, a plan purchase) does with the money: credits the
 * locked account, issues the invoice, records the webhook event and reads the billing profile the invoice is made
 * out to, all inside the caller's transaction.
 */
export interface PaidTransaction {
  /** Inserts the entry and moves the balance; false (nothing moved) when the entry id exists already. */
  applyLedgerEntry(entry: LedgerCredit): Promise<boolean>;
  issueInvoice(draft: InvoiceDraft): Promise<Invoice>;
  /** Records a webhook event in this transaction: it exists exactly when what it tells of does. */
  recordEvent(event: WebhookEventDraft): Promise<void>;
  billingProfile(accountId: string): Promise<BillingProfile | null>;
}

export function paidStatements(trx: Transaction<CommerceDatabase>): PaidTransaction {
  return {
    async applyLedgerEntry(entry) {
      return await creditLockedAccount(coreTransaction(trx), entry) !== null;
    },

    issueInvoice(draft) {
      return issueInvoiceIn(trx, draft);
    },

    async recordEvent(event) {
      await insertWebhookEvent(webhookTablesOf(trx), event);
    },

    async billingProfile(accountId) {
      const row = await trx.selectFrom('billing_profiles').selectAll().where('account_id', '=', accountId).executeTakeFirst();
      return row === undefined ? null : toBillingProfile(row);
    },
  };
}
