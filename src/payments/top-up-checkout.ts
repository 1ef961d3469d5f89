import type Stripe from 'stripe';
import type { CommerceConfig } from '../config/commerce-config.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Clock } from '../shared/clock.js';
import { describeError, type Logger } from '../shared/logger.js';
import { newId } from '../shared/ids.js';
import type { CheckoutSession } from '../domain/commerce-records.js';
import type { Storage } from '../storage/storage.js';
import { centsToUsdText, priceTopUp } from './top-up-price.js';

export interface CheckoutRequest {
  accountId: string;
  userId: string;
  amountUsd: number | string;
  /** The console's address, for Stripe's return pages. */
  consoleBase: string;
}

export interface OpenedCheckout {
  session: CheckoutSession;
  /** Stripe's hosted payment page. */
  url: string;
}

/**
 * Opens Stripe Checkout Sessions for top-ups. Opening one moves no money: the account is credited only by the
 * signed `checkout.session.completed` webhook (see StripeEvents), never by the browser coming back.
 */
export class TopUpCheckout {
  constructor(
    private readonly stripe: Stripe,
    private readonly storage: Storage,
    private readonly config: CommerceConfig,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  async open(request: CheckoutRequest): Promise<OpenedCheckout> {
    const price = priceTopUp(request.amountUsd, this.config.topUp, this.config.tax);
    const profile = await this.storage.billingProfiles.get(request.accountId);
    const lineItems: Stripe.Checkout.SessionCreateParams.LineItem[] = [{
      quantity: 1,
      price_data: { currency: 'usd', unit_amount: price.creditCents, product_data: { name: `Prepaid credit ${centsToUsdText(price.creditCents)} USD` } },
    }];
    const tax = this.config.tax;
    if (tax !== null && price.taxCents > 0) {
      lineItems.push({ quantity: 1, price_data: { currency: 'usd', unit_amount: price.taxCents, product_data: { name: tax.label } } });
    }
    const metadata = { account_id: request.accountId, user_id: request.userId, credit_cents: String(price.creditCents) };
    let created: Stripe.Checkout.Session;
    try {
      created = await this.stripe.checkout.sessions.create({
        mode: 'payment',
        line_items: lineItems,
        client_reference_id: request.accountId,
        metadata,
        payment_intent_data: { metadata },
        ...(profile?.email == null ? {} : { customer_email: profile.email }),
        success_url: `${request.consoleBase}/billing?checkout=success&session_id={CHECKOUT_SESSION_ID}`,
        cancel_url: `${request.consoleBase}/billing?checkout=cancelled`,
      }, { idempotencyKey: newId('checkout', this.clock.now()) });
    } catch (error) {
      this.logger.warn('Stripe refused to open a Checkout Session', describeError(error));
      throw new GatewayError('upstream_error', 'The payment provider could not start the payment; try again in a moment.');
    }
    if (created.url === null || created.amount_total !== price.totalCents) {
      this.logger.error('Stripe answered a Checkout Session that does not match the request', { session: created.id, amount_total: created.amount_total, expected: price.totalCents });
      throw new GatewayError('upstream_error', 'The payment provider answered an unexpected payment page; try again in a moment.');
    }
    const session: CheckoutSession = {
      id: created.id,
      accountId: request.accountId,
      userId: request.userId,
      creditCents: price.creditCents,
      taxCents: price.taxCents,
      totalCents: price.totalCents,
      currency: 'usd',
      status: 'open',
      paymentIntentId: typeof created.payment_intent === 'string' ? created.payment_intent : created.payment_intent?.id ?? null,
      ledgerEntryId: null,
      invoiceId: null,
      reversedNano: 0n,
      createdAt: this.clock.now(),
      paidAt: null,
    };
    await this.storage.payments.createSession(session);
    return { session, url: created.url };
  }
}
