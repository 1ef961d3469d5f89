import type Stripe from 'stripe';
import type { Ledger } from '../billing/ledger.js';
import type { CommerceConfig } from '../config/commerce-config.js';
import { GatewayError } from '../errors/gateway-error.js';
import { buyerParty, creditNoteDraft, topUpInvoiceDraft } from '../invoices/invoice-drafts.js';
import { referralRewardFor } from '../referrals/referral-reward.js';
import type { Clock } from '../shared/clock.js';
import { newId } from '../shared/ids.js';
import type { Logger } from '../shared/logger.js';
import type { CheckoutSession } from '../domain/commerce-records.js';
import type { NanoUsd } from '../domain/records.js';
import type { PaymentTransaction } from '../storage/repositories/payment-repository.js';
import type { Storage } from '../storage/storage.js';
import { centsToNano, NANO_PER_CENT } from './top-up-price.js';
import { webhookEvent } from '../domain/webhook-events.js';
import { moneyFields } from '../webhooks/webhook-money.js';

/** What became of one webhook event (answered to Stripe and logged). */
export type EventOutcome =
  | 'credited'
  | 'duplicate'
  | 'already_paid'
  | 'awaiting_payment'
  | 'amount_mismatch'
  | 'unknown_session'
  | 'expired'
  | 'reversed'
  | 'nothing_to_reverse'
  | 'ignored';

/**
 * Stripe retries an event answered with an error, for days: the answer for events that arrive before what they
 * depend on (a refund before its payment's completion).
 */
function notYet(what: string): GatewayError {
  return new GatewayError('conflict', `${what} is not known here yet; the event will be processed when Stripe sends it again.`);
}

function idOf(value: string | { id: string } | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'string' ? value : value.id;
}

/** The part of a charge amount (credit plus tax) that was account credit, in cents (rounded down: never over-debits). */
function creditShare(chargeCents: number, session: CheckoutSession): number {
  if (session.totalCents === 0) return 0;
  return Math.floor((Math.min(chargeCents, session.totalCents) * session.creditCents) / session.totalCents);
}

/**
 * Applies signature-verified Stripe events to the books. Each event runs in one database transaction that first
 * records its id, so a duplicate, replayed or concurrent copy moves nothing; a top-up is credited once per
 * Checkout Session whatever events announce it. Refunds and disputes debit the account (it may go negative, and
 * the ledger then refuses new billed requests until a top-up makes it positive again).
 */
export class StripeEvents {
  constructor(
    private readonly stripe: Stripe,
    private readonly storage: Storage,
    private readonly ledger: Ledger,
    private readonly config: CommerceConfig,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  async apply(event: Stripe.Event): Promise<EventOutcome> {
    const outcome = await this.#dispatch(event);
    this.logger.info('stripe event', { event: event.id, type: event.type, outcome });
    return outcome;
  }

  #dispatch(event: Stripe.Event): Promise<EventOutcome> {
    switch (event.type) {
      case 'checkout.session.completed':
      case 'checkout.session.async_payment_succeeded':
        return this.#completed(event, event.data.object);
      case 'checkout.session.expired':
        return this.#expired(event, event.data.object);
      case 'charge.refunded':
        return this.#refunded(event, event.data.object);
      case 'charge.dispute.created':
        return this.#disputed(event, event.data.object);
      default:
        return this.#record(event, 'ignored');
    }
  }

  async #record(event: Stripe.Event, outcome: EventOutcome): Promise<EventOutcome> {
    const fresh = await this.storage.payments.transact((trx) => trx.claimEvent(event.id, event.type, outcome, this.clock.now()));
    return fresh ? outcome : 'duplicate';
  }

  async #completed(event: Stripe.Event, announced: Stripe.Checkout.Session): Promise<EventOutcome> {
    const stored = await this.storage.payments.getSession(announced.id);
    if (stored === null) {
      this.logger.warn('Stripe announced a Checkout Session this gateway did not open', { session: announced.id });
      return this.#record(event, 'unknown_session');
    }
    if (stored.status === 'paid') return this.#record(event, 'already_paid');
    // The session as Stripe has it now, not as the event captured it.
    const session = await this.stripe.checkout.sessions.retrieve(announced.id);
    if (session.payment_status !== 'paid') return this.#record(event, 'awaiting_payment');
    if (session.amount_total !== stored.totalCents || session.currency !== stored.currency) {
      this.logger.error('a paid Checkout Session does not match what was opened; nothing credited', {
        session: stored.id, amount_total: session.amount_total, currency: session.currency, expected: stored.totalCents,
      });
      return this.#record(event, 'amount_mismatch');
    }
    const referral = await this.storage.referrals.attributionOf(stored.accountId);
    const account = await this.storage.accounts.getById(stored.accountId);
    const now = this.clock.now();
    const outcome = await this.storage.payments.transact(async (trx): Promise<EventOutcome> => {
      if (!(await trx.claimEvent(event.id, event.type, 'credited', now))) return 'duplicate';
      await trx.lockAccounts(referral === null ? [stored.accountId] : [stored.accountId, referral.referrerAccountId]);
      const current = await trx.session(stored.id);
      if (current === null || current.status === 'paid') {
        await trx.setEventOutcome(event.id, 'already_paid');
        return 'already_paid';
      }
      const paidTopUpsBefore = await trx.paidSessionCount(stored.accountId);
      const ledgerEntryId = `led_topup_${stored.id}`;
      const invoiceId = newId('inv', now);
      await trx.markPaid(stored.id, { paymentIntentId: idOf(session.payment_intent), ledgerEntryId, invoiceId, now });
      const creditNano = centsToNano(stored.creditCents);
      await trx.applyLedgerEntry({ entryId: ledgerEntryId, accountId: stored.accountId, kind: 'topup', amountNano: creditNano, reason: `stripe:${stored.id}`, createdAt: now });
      await trx.recordEvent(webhookEvent('topup.succeeded', ledgerEntryId, stored.accountId, {
        top_up_id: stored.id, ledger_entry_id: ledgerEntryId, invoice_id: invoiceId, ...moneyFields('amount', creditNano),
        total_cents: stored.totalCents, currency: stored.currency,
      }, now));
      const profile = await trx.billingProfile(stored.accountId);
      await trx.issueInvoice(topUpInvoiceDraft({ id: invoiceId, session: current, config: this.config, buyer: buyerParty(profile, account?.email ?? stored.accountId), issuedAt: now }));
      await this.#reward(trx, stored, paidTopUpsBefore, creditNano, now);
      return 'credited';
    });
    if (outcome === 'credited') {
      this.ledger.forgetBalance(stored.accountId);
      if (referral !== null) this.ledger.forgetBalance(referral.referrerAccountId);
    }
    return outcome;
  }

  async #reward(trx: PaymentTransaction, session: CheckoutSession, paidTopUpsBefore: number, creditNano: NanoUsd, now: number): Promise<void> {
    const referral = await trx.referral(session.accountId);
    const amount = referralRewardFor(this.config.referralReward, referral, paidTopUpsBefore, creditNano);
    if (referral === null || amount <= 0n) return;
    const ledgerEntryId = `led_referral_${session.id}`;
    const inserted = await trx.insertReward({
      ledgerEntryId, referrerAccountId: referral.referrerAccountId, referredAccountId: session.accountId, checkoutSessionId: session.id, amountNano: amount, createdAt: now,
    });
    if (inserted) {
      await trx.applyLedgerEntry({ entryId: ledgerEntryId, accountId: referral.referrerAccountId, kind: 'referral', amountNano: amount, reason: `referral:${session.accountId}`, createdAt: now });
    }
  }

  async #expired(event: Stripe.Event, announced: Stripe.Checkout.Session): Promise<EventOutcome> {
    return this.storage.payments.transact(async (trx) => {
      if (!(await trx.claimEvent(event.id, event.type, 'expired', this.clock.now()))) return 'duplicate';
      await trx.markExpired(announced.id);
      return 'expired';
    });
  }

  async #refunded(event: Stripe.Event, charge: Stripe.Charge): Promise<EventOutcome> {
    const paymentIntentId = idOf(charge.payment_intent);
    if (paymentIntentId === null) return this.#record(event, 'ignored');
    // The refunded total so far (Stripe sends the cumulative amount), so replays and reordered partial refunds
    // converge on the same debit.
    return this.#reverse(event, paymentIntentId, charge.amount_refunded, {
      entryId: `led_refund_${charge.id}_${charge.amount_refunded}`,
      reason: `stripe-refund:${charge.id}`,
      cumulative: true,
      creditNote: true,
    });
  }

  async #disputed(event: Stripe.Event, dispute: Stripe.Dispute): Promise<EventOutcome> {
    const paymentIntentId = idOf(dispute.payment_intent);
    if (paymentIntentId === null) return this.#record(event, 'ignored');
    return this.#reverse(event, paymentIntentId, dispute.amount, {
      entryId: `led_dispute_${dispute.id}`,
      reason: `stripe-dispute:${dispute.id}`,
      cumulative: false,
      creditNote: false,
    });
  }

  /** Debits the account for money the card holder took back, never more than the top-up credited. */
  async #reverse(
    event: Stripe.Event,
    paymentIntentId: string,
    chargeCents: number,
    options: { entryId: string; reason: string; cumulative: boolean; creditNote: boolean },
  ): Promise<EventOutcome> {
    const found = await this.storage.payments.transact((trx) => trx.sessionByPaymentIntent(paymentIntentId));
    if (found === null || found.status !== 'paid') throw notYet(`The payment ${paymentIntentId}`);
    const referral = await this.storage.referrals.attributionOf(found.accountId);
    const now = this.clock.now();
    let referrerDebited: string | null = null;
    const outcome = await this.storage.payments.transact(async (trx): Promise<EventOutcome> => {
      if (!(await trx.claimEvent(event.id, event.type, 'reversed', now))) return 'duplicate';
      await trx.lockAccounts(referral === null ? [found.accountId] : [found.accountId, referral.referrerAccountId]);
      const session = await trx.session(found.id);
      if (session === null) throw notYet(`The payment ${paymentIntentId}`);
      const share = centsToNano(creditShare(chargeCents, session));
      const left = centsToNano(session.creditCents) - session.reversedNano;
      const debit = options.cumulative ? share - session.reversedNano : share;
      const amount = debit < left ? debit : left;
      const applied = amount > 0n
        && await trx.applyLedgerEntry({ entryId: options.entryId, accountId: session.accountId, kind: 'refund', amountNano: -amount, reason: options.reason, createdAt: now });
      if (!applied) {
        await trx.setEventOutcome(event.id, 'nothing_to_reverse');
        return 'nothing_to_reverse';
      }
      await trx.addReversed(session.id, amount);
      await trx.recordEvent(webhookEvent('refund.created', options.entryId, session.accountId, {
        top_up_id: session.id, ledger_entry_id: options.entryId, reason: options.creditNote ? 'refund' : 'dispute', ...moneyFields('amount', amount),
      }, now));
      referrerDebited = await this.#reverseReward(trx, session, session.reversedNano + amount, options.entryId, now);
      const original = session.invoiceId === null ? null : await trx.invoice(session.invoiceId);
      if (options.creditNote && original !== null) {
        await trx.issueInvoice(creditNoteDraft({
          id: newId('inv', now), original, creditCents: Number(amount / NANO_PER_CENT), source: `${options.reason}:${chargeCents}`, reason: 'Refund of prepaid credit', issuedAt: now, config: this.config,
        }));
      }
      return 'reversed';
    });
    if (outcome === 'reversed') this.ledger.forgetBalance(found.accountId);
    if (referrerDebited !== null) this.ledger.forgetBalance(referrerDebited);
    return outcome;
  }

  /**
   * A referral reward stands only as long as the money that earned it: once `reversedNano` of the top-up's credit was
   * taken back, the same share of its reward (rounded up, never more than the reward) is taken from the referrer, as
   * a `refund` entry, even below zero when the referrer spent it. Returns the referrer's account when it moved money.
   */
  async #reverseReward(trx: PaymentTransaction, session: CheckoutSession, reversedNano: NanoUsd, entryId: string, now: number): Promise<string | null> {
    const reward = await trx.rewardOf(session.id);
    const creditNano = centsToNano(session.creditCents);
    if (reward === null || creditNano <= 0n) return null;
    const share = reversedNano >= creditNano ? reward.amountNano : (reward.amountNano * reversedNano + creditNano - 1n) / creditNano;
    const take = share - reward.reversedNano;
    if (take <= 0n) return null;
    const applied = await trx.applyLedgerEntry({
      entryId: `${entryId}_referral`, accountId: reward.referrerAccountId, kind: 'refund', amountNano: -take, reason: `referral-reversal:${session.accountId}`, createdAt: now,
    });
    if (!applied) return null;
    await trx.addRewardReversed(reward.ledgerEntryId, take);
    return reward.referrerAccountId;
  }
}
