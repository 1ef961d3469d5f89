import type { Ledger } from '../billing/ledger.js';
import { PlanPurchases } from '../billing/plan-purchases.js';
import type { SubscriptionBook } from '../billing/subscription-book.js';
import type { CommerceConfig } from '../config/commerce-config.js';
import type { Mailer } from '../mail/mailer.js';
import { StripeEvents } from '../payments/stripe-events.js';
import { StripeWebhook } from '../payments/stripe-webhook.js';
import { TopUpCheckout } from '../payments/top-up-checkout.js';
import { ReferralProgram } from '../referrals/referral-program.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logger.js';
import type { Storage } from '../storage/storage.js';
import { SupportDesk } from '../support/support-desk.js';

/** Card top-ups, invoices, referrals and support, built once by the composition root. */
export interface CommerceServices {
  config: CommerceConfig;
  /** Null when Stripe is not configured (STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET): the card top-up is off. */
  checkout: TopUpCheckout | null;
  webhook: StripeWebhook | null;
  referrals: ReferralProgram;
  support: SupportDesk;
  /** Self-service plans bought and renewed from the prepaid balance. */
  plans: PlanPurchases;
}

export interface CommerceDependencies {
  config: { commerce: CommerceConfig };
  storage: Storage;
  ledger: Ledger;
  subscriptions: SubscriptionBook;
  mailer: Mailer;
  clock: Clock;
  logger: Logger;
}

export async function createCommerceServices(dependencies: CommerceDependencies): Promise<CommerceServices> {
  const { storage, ledger, subscriptions, mailer, clock, logger } = dependencies;
  const config = dependencies.config.commerce;
  // The Stripe client (~4 MiB of heap) is loaded only when payments are configured.
  const stripe = config.stripe === null ? null : (await import('../payments/stripe-client.js')).createStripeClient(config.stripe);
  return {
    config,
    checkout: stripe === null ? null : new TopUpCheckout(stripe, storage, config, clock, logger),
    webhook: stripe === null || config.stripe === null
      ? null
      : new StripeWebhook(stripe, config.stripe.webhookSecret, new StripeEvents(stripe, storage, ledger, config, clock, logger), clock, logger),
    referrals: new ReferralProgram(storage, config, clock, logger),
    support: new SupportDesk(storage, mailer, config, clock, logger),
    plans: new PlanPurchases(storage, ledger, subscriptions, config, clock, logger),
  };
}
