import type { NanoUsd } from './records.js';

/** The buyer's details as printed on invoices; edited in the console before a purchase. */
export interface BillingProfile {
  accountId: string;
  name: string;
  /** Lines separated by newlines. */
  address: string;
  /** ISO 3166-1 alpha-2, upper case. */
  country: string;
  taxId: string | null;
  email: string | null;
  updatedAt: number;
}

export type CheckoutSessionStatus = 'open' | 'paid' | 'expired';

export interface CheckoutSession {
  /** Stripe's Checkout Session id (`cs_…`). */
  id: string;
  accountId: string;
  userId: string;
  /** What the account is credited, in cents of USD. */
  creditCents: number;
  taxCents: number;
  /** What the card is charged: credit plus tax. */
  totalCents: number;
  currency: 'usd';
  status: CheckoutSessionStatus;
  paymentIntentId: string | null;
  ledgerEntryId: string | null;
  invoiceId: string | null;
  /** Refunds and disputes taken back from the account since payment. */
  reversedNano: NanoUsd;
  createdAt: number;
  paidAt: number | null;
}

export interface InvoiceParty {
  name: string;
  addressLines: string[];
  country: string | null;
  taxId: string | null;
  email: string | null;
}

export interface InvoiceLine {
  description: string;
  quantity: number;
  unitCents: number;
  amountCents: number;
}

export type InvoiceKind = 'invoice' | 'credit_note';

/** An issued invoice or credit note: immutable. Amounts are cents of `currency`; a credit note's are negative. */
export interface Invoice {
  id: string;
  accountId: string;
  kind: InvoiceKind;
  series: string;
  sequence: number;
  /** The printed number, `<series>-<sequence padded to 6>`. */
  number: string;
  source: string;
  correctsInvoiceId: string | null;
  currency: 'usd';
  seller: InvoiceParty;
  buyer: InvoiceParty;
  lines: InvoiceLine[];
  /** Present when tax applies: its label and rate in hundredths of a percent. */
  tax: { label: string; rateBasisPoints: number } | null;
  subtotalCents: number;
  taxCents: number;
  totalCents: number;
  issuedAt: number;
}

/** Everything of an invoice but its number, which storage assigns in the issuing transaction. */
export type InvoiceDraft = Omit<Invoice, 'sequence' | 'number'>;

export type ReferralStatus = 'eligible' | 'repeated_ip';

export interface Referral {
  referredAccountId: string;
  referrerAccountId: string;
  ipHash: string;
  emailVerified: boolean;
  status: ReferralStatus;
  createdAt: number;
}

export interface ReferralReward {
  ledgerEntryId: string;
  referrerAccountId: string;
  referredAccountId: string;
  checkoutSessionId: string;
  amountNano: NanoUsd;
  /** How much of it was taken back because its top-up was refunded or disputed. */
  reversedNano: NanoUsd;
  createdAt: number;
}

export type SupportTicketStatus = 'open' | 'answered' | 'closed';
export type SupportCategory = 'billing' | 'technical' | 'account' | 'other';

export interface SupportReply {
  id: string;
  ticketId: string;
  author: 'operator' | 'user';
  body: string;
  createdAt: number;
}

export interface SupportTicket {
  id: string;
  accountId: string;
  userId: string;
  /** Where replies and the confirmation go. */
  email: string;
  subject: string;
  category: SupportCategory;
  message: string;
  requestId: string | null;
  status: SupportTicketStatus;
  createdAt: number;
  updatedAt: number;
}
