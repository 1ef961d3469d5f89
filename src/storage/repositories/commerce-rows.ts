import type { Insertable, Selectable } from 'kysely';
import type { BillingProfile, CheckoutSession, Invoice, InvoiceLine, InvoiceParty, Referral, ReferralReward, SupportReply, SupportTicket } from '../../domain/commerce-records.js';
import type {
  BillingProfilesTable, CheckoutSessionsTable, InvoicesTable, ReferralRewardsTable, ReferralsTable, SupportRepliesTable, SupportTicketsTable,
} from '../commerce-schema.js';
import { toBigInt, toBoolean, toNullableNumber, toNumber, toOneOf } from '../convert.js';

/** Row ⇄ record conversions of the commerce tables (migration 0010), shared by their repositories. */
export function toBillingProfile(row: Selectable<BillingProfilesTable>): BillingProfile {
  return {
    accountId: row.account_id,
    name: row.name,
    address: row.address,
    country: row.country,
    taxId: row.tax_id,
    email: row.email,
    updatedAt: toNumber(row.updated_at),
  };
}

export function toReferralReward(row: Selectable<ReferralRewardsTable>): ReferralReward {
  return {
    ledgerEntryId: row.ledger_entry_id,
    referrerAccountId: row.referrer_account_id,
    referredAccountId: row.referred_account_id,
    checkoutSessionId: row.checkout_session_id,
    amountNano: toBigInt(row.amount_nano),
    reversedNano: toBigInt(row.reversed_nano),
    createdAt: toNumber(row.created_at),
  };
}

export function toCheckoutSession(row: Selectable<CheckoutSessionsTable>): CheckoutSession {
  return {
    id: row.id,
    accountId: row.account_id,
    userId: row.user_id,
    creditCents: toNumber(row.credit_cents),
    taxCents: toNumber(row.tax_cents),
    totalCents: toNumber(row.total_cents),
    currency: toOneOf(row.currency, ['usd'], 'checkout currency'),
    status: toOneOf(row.status, ['open', 'paid', 'expired'], 'checkout session status'),
    paymentIntentId: row.payment_intent_id,
    ledgerEntryId: row.ledger_entry_id,
    invoiceId: row.invoice_id,
    reversedNano: toBigInt(row.reversed_nano),
    createdAt: toNumber(row.created_at),
    paidAt: toNullableNumber(row.paid_at),
  };
}

interface StoredLines {
  lines: InvoiceLine[];
  tax: Invoice['tax'];
}

export function toInvoice(row: Selectable<InvoicesTable>): Invoice {
  const stored = JSON.parse(row.lines) as StoredLines;
  return {
    id: row.id,
    accountId: row.account_id,
    kind: toOneOf(row.kind, ['invoice', 'credit_note'], 'invoice kind'),
    series: row.series,
    sequence: toNumber(row.sequence),
    number: row.number,
    source: row.source,
    correctsInvoiceId: row.corrects_invoice_id,
    currency: toOneOf(row.currency, ['usd'], 'invoice currency'),
    seller: JSON.parse(row.seller) as InvoiceParty,
    buyer: JSON.parse(row.buyer) as InvoiceParty,
    lines: stored.lines,
    tax: stored.tax,
    subtotalCents: toNumber(row.subtotal_cents),
    taxCents: toNumber(row.tax_cents),
    totalCents: toNumber(row.total_cents),
    issuedAt: toNumber(row.issued_at),
  };
}

export function invoiceRow(invoice: Invoice): Insertable<InvoicesTable> {
  return {
    id: invoice.id,
    account_id: invoice.accountId,
    kind: invoice.kind,
    series: invoice.series,
    sequence: invoice.sequence,
    number: invoice.number,
    source: invoice.source,
    corrects_invoice_id: invoice.correctsInvoiceId,
    currency: invoice.currency,
    seller: JSON.stringify(invoice.seller),
    buyer: JSON.stringify(invoice.buyer),
    lines: JSON.stringify({ lines: invoice.lines, tax: invoice.tax } satisfies StoredLines),
    subtotal_cents: invoice.subtotalCents,
    tax_cents: invoice.taxCents,
    total_cents: invoice.totalCents,
    issued_at: invoice.issuedAt,
  };
}

export function toReferral(row: Selectable<ReferralsTable>): Referral {
  return {
    referredAccountId: row.referred_account_id,
    referrerAccountId: row.referrer_account_id,
    ipHash: row.ip_hash,
    emailVerified: toBoolean(row.email_verified),
    status: toOneOf(row.status, ['eligible', 'repeated_ip'], 'referral status'),
    createdAt: toNumber(row.created_at),
  };
}

export function toSupportTicket(row: Selectable<SupportTicketsTable>): SupportTicket {
  return {
    id: row.id,
    accountId: row.account_id,
    userId: row.user_id,
    email: row.email,
    subject: row.subject,
    category: toOneOf(row.category, ['billing', 'technical', 'account', 'other'], 'support category'),
    message: row.message,
    requestId: row.request_id,
    status: toOneOf(row.status, ['open', 'answered', 'closed'], 'support ticket status'),
    createdAt: toNumber(row.created_at),
    updatedAt: toNumber(row.updated_at),
  };
}

export function toSupportReply(row: Selectable<SupportRepliesTable>): SupportReply {
  return {
    id: row.id,
    ticketId: row.ticket_id,
    author: toOneOf(row.author, ['operator', 'user'], 'support reply author'),
    body: row.body,
    createdAt: toNumber(row.created_at),
  };
}
