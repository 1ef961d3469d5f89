import type { Kysely } from 'kysely';

/**
 * Card top-ups, invoices, referrals and support tickets.
 *
 * - `billing_profiles`: the buyer's details printed on the account's invoices (name, address, tax id).
 * - `checkout_sessions`: each Stripe Checkout Session opened for a top-up; `paid` once its webhook credited it
 *   (exactly once), `reversed_nano` what refunds and disputes took back since.
 * - `stripe_events`: every webhook event processed, by Stripe's event id (a replay moves nothing).
 * - `invoice_counters` / `invoices`: gap-free numbers per series, taken in the transaction that issues the invoice;
 *   an invoice never changes after issue (corrections are credit notes, `corrects_invoice_id`).
 * - `referral_codes`, `referrals`, `referral_rewards`: one code per account, at most one attribution per referred
 *   account, and each reward paid once per paid top-up.
 * - `support_tickets` / `support_replies`: the console's support form and the operator's answers.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('billing_profiles')
    .addColumn('account_id', 'text', (column) => column.primaryKey().references('accounts.id'))
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('address', 'text', (column) => column.notNull())
    .addColumn('country', 'text', (column) => column.notNull())
    .addColumn('tax_id', 'text')
    .addColumn('email', 'text')
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();

  await db.schema
    .createTable('checkout_sessions')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id'))
    .addColumn('user_id', 'text', (column) => column.notNull())
    .addColumn('credit_cents', 'bigint', (column) => column.notNull())
    .addColumn('tax_cents', 'bigint', (column) => column.notNull())
    .addColumn('total_cents', 'bigint', (column) => column.notNull())
    .addColumn('currency', 'text', (column) => column.notNull())
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('payment_intent_id', 'text')
    .addColumn('ledger_entry_id', 'text')
    .addColumn('invoice_id', 'text')
    .addColumn('reversed_nano', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('paid_at', 'bigint')
    .execute();
  await db.schema.createIndex('checkout_sessions_account_id_index').on('checkout_sessions').columns(['account_id', 'created_at']).execute();
  await db.schema.createIndex('checkout_sessions_payment_intent_index').on('checkout_sessions').column('payment_intent_id').execute();

  await db.schema
    .createTable('stripe_events')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('type', 'text', (column) => column.notNull())
    .addColumn('outcome', 'text', (column) => column.notNull())
    .addColumn('received_at', 'bigint', (column) => column.notNull())
    .execute();

  await db.schema
    .createTable('invoice_counters')
    .addColumn('series', 'text', (column) => column.primaryKey())
    .addColumn('last_number', 'bigint', (column) => column.notNull())
    .execute();

  await db.schema
    .createTable('invoices')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id'))
    .addColumn('kind', 'text', (column) => column.notNull())
    .addColumn('series', 'text', (column) => column.notNull())
    .addColumn('sequence', 'bigint', (column) => column.notNull())
    .addColumn('number', 'text', (column) => column.notNull().unique())
    // What the invoice is for (`stripe:<session id>`, `stripe-refund:<charge id>:<refunded total>`): one invoice per source.
    .addColumn('source', 'text', (column) => column.notNull().unique())
    .addColumn('corrects_invoice_id', 'text', (column) => column.references('invoices.id'))
    .addColumn('currency', 'text', (column) => column.notNull())
    .addColumn('seller', 'text', (column) => column.notNull())
    .addColumn('buyer', 'text', (column) => column.notNull())
    .addColumn('lines', 'text', (column) => column.notNull())
    .addColumn('subtotal_cents', 'bigint', (column) => column.notNull())
    .addColumn('tax_cents', 'bigint', (column) => column.notNull())
    .addColumn('total_cents', 'bigint', (column) => column.notNull())
    .addColumn('issued_at', 'bigint', (column) => column.notNull())
    .addUniqueConstraint('invoices_series_sequence_unique', ['series', 'sequence'])
    .execute();
  await db.schema.createIndex('invoices_account_id_index').on('invoices').columns(['account_id', 'issued_at']).execute();

  await db.schema
    .createTable('referral_codes')
    .addColumn('account_id', 'text', (column) => column.primaryKey().references('accounts.id'))
    .addColumn('code', 'text', (column) => column.notNull().unique())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();

  await db.schema
    .createTable('referrals')
    .addColumn('referred_account_id', 'text', (column) => column.primaryKey().references('accounts.id'))
    .addColumn('referrer_account_id', 'text', (column) => column.notNull().references('accounts.id'))
    .addColumn('ip_hash', 'text', (column) => column.notNull())
    .addColumn('email_verified', 'integer', (column) => column.notNull())
    // `eligible`, or why not: `repeated_ip`.
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('referrals_referrer_index').on('referrals').columns(['referrer_account_id', 'created_at']).execute();
  await db.schema.createIndex('referrals_ip_hash_index').on('referrals').columns(['ip_hash', 'created_at']).execute();

  await db.schema
    .createTable('referral_rewards')
    .addColumn('ledger_entry_id', 'text', (column) => column.primaryKey())
    .addColumn('referrer_account_id', 'text', (column) => column.notNull().references('accounts.id'))
    .addColumn('referred_account_id', 'text', (column) => column.notNull().references('accounts.id'))
    .addColumn('checkout_session_id', 'text', (column) => column.notNull().unique())
    .addColumn('amount_nano', 'bigint', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('referral_rewards_referrer_index').on('referral_rewards').columns(['referrer_account_id', 'created_at']).execute();
  await db.schema.createIndex('referral_rewards_referred_index').on('referral_rewards').column('referred_account_id').execute();

  await db.schema
    .createTable('support_tickets')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id'))
    .addColumn('user_id', 'text', (column) => column.notNull())
    .addColumn('email', 'text', (column) => column.notNull())
    .addColumn('subject', 'text', (column) => column.notNull())
    .addColumn('category', 'text', (column) => column.notNull())
    .addColumn('message', 'text', (column) => column.notNull())
    .addColumn('request_id', 'text')
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('support_tickets_account_id_index').on('support_tickets').columns(['account_id', 'created_at']).execute();
  await db.schema.createIndex('support_tickets_status_index').on('support_tickets').columns(['status', 'updated_at']).execute();

  await db.schema
    .createTable('support_replies')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('ticket_id', 'text', (column) => column.notNull().references('support_tickets.id'))
    .addColumn('author', 'text', (column) => column.notNull())
    .addColumn('body', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('support_replies_ticket_id_index').on('support_replies').columns(['ticket_id', 'created_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['support_replies', 'support_tickets', 'referral_rewards', 'referrals', 'referral_codes', 'invoices', 'invoice_counters', 'stripe_events', 'checkout_sessions', 'billing_profiles']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
