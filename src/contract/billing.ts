import { z } from 'zod';
import { isoTime, listPageOf } from './common.js';

/** A card top-up (a Stripe Checkout Session) as the billing page lists it. */
export const topUp = z.strictObject({
  id: z.string(),
  object: z.literal('checkout'),
  status: z.string(),
  amount_usd: z.number(),
  tax_usd: z.number(),
  total_usd: z.number(),
  refunded_usd: z.number(),
  invoice_id: z.string().nullable(),
  created_at: isoTime,
  paid_at: isoTime.nullable(),
});
export type TopUpJson = z.infer<typeof topUp>;
/** POST /api/console/billing/checkout: the top-up and the Stripe Checkout page to send the browser to. */
export const openedCheckout = topUp.extend({ url: z.string() });
export type OpenedCheckoutJson = z.infer<typeof openedCheckout>;

/** POST /api/console/billing/redeem: what the code added and the balance after it. */
export const redemption = z.strictObject({ object: z.literal('redemption'), code_id: z.string(), amount_usd: z.number(), balance_usd: z.number() });
export type RedemptionJson = z.infer<typeof redemption>;

/** GET /api/console/billing. */
export const billing = z.strictObject({
  object: z.literal('billing'),
  account_id: z.string(),
  balance_usd: z.number(),
  /** A negative balance (after a refund or dispute) refuses billed requests until a top-up makes it positive. */
  can_spend: z.boolean(),
  card: z.discriminatedUnion('enabled', [
    z.strictObject({ enabled: z.literal(false), how_to_enable: z.string() }),
    z.strictObject({
      enabled: z.literal(true),
      currency: z.string(),
      presets_usd: z.array(z.number()),
      min_usd: z.number(),
      max_usd: z.number(),
      tax: z.strictObject({ label: z.string(), rate_percent: z.number() }).nullable(),
    }),
  ]),
  recent_top_ups: z.array(topUp),
});
export type BillingJson = z.infer<typeof billing>;

/** The buyer's details printed on later invoices. */
export const billingProfile = z.strictObject({
  object: z.literal('billing_profile'),
  name: z.string().nullable(),
  address: z.string().nullable(),
  country: z.string().nullable(),
  tax_id: z.string().nullable(),
  email: z.string().nullable(),
  updated_at: isoTime.nullable(),
});
export type BillingProfileJson = z.infer<typeof billingProfile>;

const invoiceParty = z.strictObject({ name: z.string(), address_lines: z.array(z.string()), country: z.string().nullable(), tax_id: z.string().nullable(), email: z.string().nullable() });

/** An invoice or credit note. */
export const invoice = z.strictObject({
  id: z.string(),
  object: z.enum(['invoice', 'credit_note']),
  number: z.string(),
  corrects_invoice_id: z.string().nullable(),
  currency: z.string(),
  seller: invoiceParty,
  buyer: invoiceParty,
  /** What was bought: account credit, a plan period, or the refund a credit note records. */
  lines: z.array(z.strictObject({ description: z.string(), quantity: z.number(), unit_amount_usd: z.number(), amount_usd: z.number() })),
  tax: z.strictObject({ label: z.string(), rate_percent: z.number(), amount_usd: z.number() }).nullable(),
  subtotal_usd: z.number(),
  tax_usd: z.number(),
  total_usd: z.number(),
  issued_at: isoTime,
  pdf_url: z.string(),
});
export type InvoiceJson = z.infer<typeof invoice>;
export const invoicePage = listPageOf(invoice);
export type InvoicePageJson = z.infer<typeof invoicePage>;

/** A sign-up through the account's referral link. */
export const referredSignUp = z.strictObject({
  account_id: z.string(),
  signed_up_at: isoTime,
  eligible: z.boolean(),
  /** Why a sign-up earns nothing, in words the referrer can act on (never the address itself). */
  reason: z.enum(['repeated_ip', 'email_not_verified']).nullable(),
  rewarded_usd: z.number(),
  rewards: z.number(),
});
export const referralReward = z.strictObject({
  ledger_entry_id: z.string(),
  referred_account_id: z.string(),
  amount_usd: z.number(),
  /** Taken back because the top-up that earned it was refunded or disputed. */
  reversed_usd: z.number(),
  created_at: isoTime,
});
/** GET /api/console/referrals. */
export const referrals = z.strictObject({
  object: z.literal('referrals'),
  code: z.string(),
  link: z.string(),
  reward: z.string(),
  referred: z.array(referredSignUp),
  rewards: z.array(referralReward),
});
export type ReferralsJson = z.infer<typeof referrals>;

export const supportReply = z.strictObject({ id: z.string(), author: z.string(), body: z.string(), created_at: isoTime });

/** A support ticket; `replies` when it is read with them. */
export const supportTicket = z.strictObject({
  id: z.string(),
  object: z.literal('support_ticket'),
  account_id: z.string(),
  user_id: z.string(),
  email: z.string(),
  subject: z.string(),
  category: z.string(),
  message: z.string(),
  request_id: z.string().nullable(),
  status: z.enum(['open', 'answered', 'closed']),
  created_at: isoTime,
  updated_at: isoTime,
  replies: z.array(supportReply).optional(),
});
export type SupportTicketJson = z.infer<typeof supportTicket>;
export const supportTicketPage = listPageOf(supportTicket);
export type SupportTicketPageJson = z.infer<typeof supportTicketPage>;

/** GET /api/console/fx: the display currencies' rates against USD. */
export const fxRates = z.strictObject({ base: z.string(), rates: z.record(z.string(), z.number()).nullable(), as_of: isoTime.nullable(), source: z.string().nullable() });
export type FxRatesJson = z.infer<typeof fxRates>;

/** One line of the account's money trail: a ledger entry, or a UTC day's usage summed, with the balance after it. */
export const transactionLine = z.strictObject({
  id: z.string(),
  at: isoTime,
  /** What the entry is, in the console's words (`card_top_up`, `usage`, `operator_credit`…). */
  type: z.string(),
  /** The ledger's kind of entry. */
  kind: z.string(),
  description: z.string(),
  reason: z.string().nullable(),
  amount_usd: z.number(),
  balance_after_usd: z.number(),
  /** A usage line's request count (null: not usage). */
  requests: z.number().int().nullable(),
  /** What a usage line's requests cost beyond what the balance covered (null: not usage). */
  shortfall_usd: z.number().nullable(),
});
export type TransactionLineJson = z.infer<typeof transactionLine>;

/** GET /api/console/transactions: the lines between `from` and `to`, newest first, and the balances at both ends. */
export const transactionHistory = z.strictObject({
  object: z.literal('list'),
  from: isoTime,
  to: isoTime,
  opening_balance_usd: z.number(),
  closing_balance_usd: z.number(),
  /** More entries than one answer holds: `from` is moved up to the oldest line given. */
  truncated: z.boolean(),
  data: z.array(transactionLine),
});
export type TransactionHistoryJson = z.infer<typeof transactionHistory>;
