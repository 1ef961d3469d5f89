import type { CommerceConfig } from '../config/commerce-config.js';
import { centsToUsdText, taxOn } from '../payments/top-up-price.js';
import type { BillingProfile, CheckoutSession, Invoice, InvoiceDraft, InvoiceParty } from '../storage/commerce-records.js';

/** Credit notes are numbered in a series of their own next to the invoices'. */
export function creditNoteSeries(invoiceSeries: string): string {
  return `${invoiceSeries}-CN`;
}

export function sellerParty(config: CommerceConfig): InvoiceParty {
  const seller = config.seller;
  return {
    name: seller.name,
    addressLines: seller.address.split('\n').map((line) => line.trim()).filter(Boolean),
    country: null,
    taxId: seller.taxId,
    email: seller.email,
  };
}

/** The buyer as the account's billing details say at issue time (the account email when none were given). */
export function buyerParty(profile: BillingProfile | null, fallbackName: string): InvoiceParty {
  if (profile === null) return { name: fallbackName, addressLines: [], country: null, taxId: null, email: null };
  return {
    name: profile.name,
    addressLines: profile.address.split('\n').map((line) => line.trim()).filter(Boolean),
    country: profile.country,
    taxId: profile.taxId,
    email: profile.email,
  };
}

/** The invoice of a paid card top-up: one line of account credit, the tax line when configured, totals. */
export function topUpInvoiceDraft(input: {
  id: string;
  session: CheckoutSession;
  config: CommerceConfig;
  buyer: InvoiceParty;
  issuedAt: number;
}): InvoiceDraft {
  const { session, config } = input;
  const tax = config.tax;
  return {
    id: input.id,
    accountId: session.accountId,
    kind: 'invoice',
    series: config.invoiceSeries,
    source: `stripe:${session.id}`,
    correctsInvoiceId: null,
    currency: 'usd',
    seller: sellerParty(config),
    buyer: input.buyer,
    lines: [{ description: `Prepaid account credit (${centsToUsdText(session.creditCents)} USD)`, quantity: 1, unitCents: session.creditCents, amountCents: session.creditCents }],
    // The rate the card was charged with: the session's own tax, so a later rate change does not alter it.
    tax: tax === null && session.taxCents === 0 ? null : { label: tax?.label ?? 'Tax', rateBasisPoints: tax?.rateBasisPoints ?? 0 },
    subtotalCents: session.creditCents,
    taxCents: session.taxCents,
    totalCents: session.totalCents,
    issuedAt: input.issuedAt,
  };
}

/** A credit note taking `creditCents` of the original invoice's credit back (a refund), with its share of tax. */
export function creditNoteDraft(input: { id: string; original: Invoice; creditCents: number; source: string; reason: string; issuedAt: number; config: CommerceConfig }): InvoiceDraft {
  const { original } = input;
  const taxCents = original.tax === null ? 0 : Math.min(taxOn(input.creditCents, { label: original.tax.label, rateBasisPoints: original.tax.rateBasisPoints }), original.taxCents);
  return {
    id: input.id,
    accountId: original.accountId,
    kind: 'credit_note',
    series: creditNoteSeries(input.config.invoiceSeries),
    source: input.source,
    correctsInvoiceId: original.id,
    currency: original.currency,
    seller: original.seller,
    buyer: original.buyer,
    lines: [{ description: `${input.reason} — corrects invoice ${original.number}`, quantity: 1, unitCents: -input.creditCents, amountCents: -input.creditCents }],
    tax: original.tax,
    subtotalCents: -input.creditCents,
    taxCents: -taxCents,
    totalCents: -(input.creditCents + taxCents),
    issuedAt: input.issuedAt,
  };
}

const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/**
 * The invoice of a plan period bought from the prepaid balance (or the price difference of an upgrade within a
 * period): one line naming the plan and the period. No tax line: the tax was charged on the top-up that funded
 * the balance.
 */
export function planPeriodInvoiceDraft(input: {
  id: string;
  accountId: string;
  source: string;
  planName: string;
  periodStart: number;
  periodEnd: number;
  amountCents: number;
  upgrade: boolean;
  config: CommerceConfig;
  buyer: InvoiceParty;
  issuedAt: number;
}): InvoiceDraft {
  const what = input.upgrade ? `Upgrade to plan ${input.planName}` : `Plan ${input.planName}`;
  return {
    id: input.id,
    accountId: input.accountId,
    kind: 'invoice',
    series: input.config.invoiceSeries,
    source: input.source,
    correctsInvoiceId: null,
    currency: 'usd',
    seller: sellerParty(input.config),
    buyer: input.buyer,
    lines: [{
      description: `${what}, ${utcDay(input.periodStart)} to ${utcDay(input.periodEnd)} (UTC), paid from the prepaid balance`,
      quantity: 1,
      unitCents: input.amountCents,
      amountCents: input.amountCents,
    }],
    tax: null,
    subtotalCents: input.amountCents,
    taxCents: 0,
    totalCents: input.amountCents,
    issuedAt: input.issuedAt,
  };
}
