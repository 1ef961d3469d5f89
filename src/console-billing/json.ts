import { nanoToUsd } from '../billing/money.js';
import { centsToUsdText } from '../payments/top-up-price.js';
import { isoTime } from '../management/time-input.js';
import type { BillingProfile, CheckoutSession, Invoice, InvoiceParty, SupportReply } from '../domain/commerce-records.js';
import type { ReferredSignUp } from '../storage/repositories/referral-repository.js';
import type { SupportTicketWithReplies } from '../storage/repositories/support-repository.js';
import type { ReferralReward } from '../domain/commerce-records.js';
import type { BillingProfileJson, InvoiceJson, ReferralsJson, SupportTicketJson, TopUpJson } from '../contract/billing.js';

/** Cents as a JSON number of USD (exact for every amount a top-up can have). */
export function centsToUsd(cents: number): number {
  return Number(centsToUsdText(cents));
}

export function billingProfileJson(profile: BillingProfile | null): BillingProfileJson {
  return {
    object: 'billing_profile',
    name: profile?.name ?? null,
    address: profile?.address ?? null,
    country: profile?.country ?? null,
    tax_id: profile?.taxId ?? null,
    email: profile?.email ?? null,
    updated_at: isoTime(profile?.updatedAt ?? null),
  };
}

function partyJson(party: InvoiceParty): InvoiceJson['seller'] {
  return { name: party.name, address_lines: party.addressLines, country: party.country, tax_id: party.taxId, email: party.email };
}

export function invoiceJson(invoice: Invoice): InvoiceJson {
  return {
    id: invoice.id,
    object: invoice.kind,
    number: invoice.number,
    corrects_invoice_id: invoice.correctsInvoiceId,
    currency: invoice.currency,
    seller: partyJson(invoice.seller),
    buyer: partyJson(invoice.buyer),
    lines: invoice.lines.map((line) => ({ description: line.description, quantity: line.quantity, unit_amount_usd: centsToUsd(line.unitCents), amount_usd: centsToUsd(line.amountCents) })),
    tax: invoice.tax === null ? null : { label: invoice.tax.label, rate_percent: invoice.tax.rateBasisPoints / 100, amount_usd: centsToUsd(invoice.taxCents) },
    subtotal_usd: centsToUsd(invoice.subtotalCents),
    tax_usd: centsToUsd(invoice.taxCents),
    total_usd: centsToUsd(invoice.totalCents),
    issued_at: isoTime(invoice.issuedAt),
    pdf_url: `/api/console/billing/invoices/${encodeURIComponent(invoice.id)}/pdf`,
  };
}

export function checkoutJson(session: CheckoutSession): TopUpJson {
  return {
    id: session.id,
    object: 'checkout',
    status: session.status,
    amount_usd: centsToUsd(session.creditCents),
    tax_usd: centsToUsd(session.taxCents),
    total_usd: centsToUsd(session.totalCents),
    refunded_usd: nanoToUsd(session.reversedNano),
    invoice_id: session.invoiceId,
    created_at: isoTime(session.createdAt),
    paid_at: isoTime(session.paidAt),
  };
}

export function referredJson(referred: ReferredSignUp): ReferralsJson['referred'][number] {
  return {
    account_id: referred.referredAccountId,
    signed_up_at: isoTime(referred.createdAt),
    // Why a sign-up earns nothing, in words the referrer can act on (never the address itself).
    eligible: referred.status === 'eligible' && referred.emailVerified,
    reason: referred.status === 'repeated_ip' ? 'repeated_ip' : referred.emailVerified ? null : 'email_not_verified',
    rewarded_usd: nanoToUsd(referred.rewardedNano),
    rewards: referred.rewardCount,
  };
}

export function rewardJson(reward: ReferralReward): ReferralsJson['rewards'][number] {
  return {
    ledger_entry_id: reward.ledgerEntryId,
    referred_account_id: reward.referredAccountId,
    amount_usd: nanoToUsd(reward.amountNano),
    // Taken back because the top-up that earned it was refunded or disputed.
    reversed_usd: nanoToUsd(reward.reversedNano),
    created_at: isoTime(reward.createdAt),
  };
}

function replyJson(reply: SupportReply): NonNullable<SupportTicketJson['replies']>[number] {
  return { id: reply.id, author: reply.author, body: reply.body, created_at: isoTime(reply.createdAt) };
}

export function ticketJson(ticket: SupportTicketWithReplies | (Omit<SupportTicketWithReplies, 'replies'> & { replies?: SupportReply[] })): SupportTicketJson {
  return {
    id: ticket.id,
    object: 'support_ticket',
    account_id: ticket.accountId,
    user_id: ticket.userId,
    email: ticket.email,
    subject: ticket.subject,
    category: ticket.category,
    message: ticket.message,
    request_id: ticket.requestId,
    status: ticket.status,
    created_at: isoTime(ticket.createdAt),
    updated_at: isoTime(ticket.updatedAt),
    ...(ticket.replies === undefined ? {} : { replies: ticket.replies.map(replyJson) }),
  };
}
