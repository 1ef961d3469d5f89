import type { ColumnType } from 'kysely';
import type { BooleanColumn, IntegerColumn, MoneyColumn, NullableIntegerColumn } from './schema-columns.js';
import type { Database } from './database-schema.js';

/** Tables of card top-ups, invoices, referrals and support (migration 0010), in the conventions of database-schema.ts. */
export interface BillingProfilesTable {
  account_id: string;
  name: string;
  address: string;
  country: string;
  tax_id: string | null;
  email: string | null;
  updated_at: IntegerColumn;
}

export interface CheckoutSessionsTable {
  id: string;
  account_id: string;
  user_id: string;
  credit_cents: IntegerColumn;
  tax_cents: IntegerColumn;
  total_cents: IntegerColumn;
  currency: string;
  /** `open`, `paid` or `expired`. */
  status: string;
  payment_intent_id: string | null;
  ledger_entry_id: string | null;
  invoice_id: string | null;
  reversed_nano: MoneyColumn;
  created_at: IntegerColumn;
  paid_at: NullableIntegerColumn;
}

export interface StripeEventsTable {
  id: string;
  type: string;
  outcome: string;
  received_at: IntegerColumn;
}

export interface InvoiceCountersTable {
  series: string;
  last_number: IntegerColumn;
}

export interface InvoicesTable {
  id: string;
  account_id: string;
  /** `invoice` or `credit_note`. */
  kind: string;
  series: string;
  sequence: IntegerColumn;
  number: string;
  source: string;
  corrects_invoice_id: string | null;
  currency: string;
  /** JSON: the party's name, address lines, tax id. */
  seller: string;
  buyer: string;
  /** JSON list of { description, quantity, unit_cents, amount_cents }. */
  lines: string;
  subtotal_cents: IntegerColumn;
  tax_cents: IntegerColumn;
  total_cents: IntegerColumn;
  issued_at: IntegerColumn;
}

export interface ReferralCodesTable {
  account_id: string;
  code: string;
  created_at: IntegerColumn;
}

export interface ReferralsTable {
  referred_account_id: string;
  referrer_account_id: string;
  ip_hash: string;
  email_verified: BooleanColumn;
  status: string;
  created_at: IntegerColumn;
}

export interface ReferralRewardsTable {
  ledger_entry_id: string;
  referrer_account_id: string;
  referred_account_id: string;
  checkout_session_id: string;
  amount_nano: MoneyColumn;
  /** How much of the reward refunds and disputes of its top-up took back. */
  reversed_nano: ColumnType<bigint, bigint | undefined, bigint>;
  created_at: IntegerColumn;
}

export interface SupportTicketsTable {
  id: string;
  account_id: string;
  user_id: string;
  email: string;
  subject: string;
  category: string;
  message: string;
  request_id: string | null;
  /** `open`, `answered` or `closed`. */
  status: string;
  created_at: IntegerColumn;
  updated_at: IntegerColumn;
}

export interface SupportRepliesTable {
  id: string;
  ticket_id: string;
  /** `operator` or `user`. */
  author: string;
  body: string;
  created_at: IntegerColumn;
}

// A type alias (not an interface), so Kysely's `withTables` sees an index-compatible record.
export type CommerceTables = {
  billing_profiles: BillingProfilesTable;
  checkout_sessions: CheckoutSessionsTable;
  stripe_events: StripeEventsTable;
  invoice_counters: InvoiceCountersTable;
  invoices: InvoicesTable;
  referral_codes: ReferralCodesTable;
  referrals: ReferralsTable;
  referral_rewards: ReferralRewardsTable;
  support_tickets: SupportTicketsTable;
  support_replies: SupportRepliesTable;
};

/** The whole database as the commerce repositories see it (their own tables plus accounts and the ledger). */
export type CommerceDatabase = Database & CommerceTables;
