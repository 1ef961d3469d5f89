import type Stripe from 'stripe';
import { GatewayError } from '../errors/gateway-error.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logger.js';
import type { EventOutcome, StripeEvents } from './stripe-events.js';

/**
 * Stripe's own default: a signature more than five minutes old is refused (a replay or a late delivery), and so is
 * one dated more than five minutes ahead of this gateway's clock (the package checks only the age).
 */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

/** The `t=` timestamp of a Stripe-Signature header (Unix seconds), or null when it has none. */
function signedAt(header: string): number | null {
  for (const part of header.split(',')) {
    const equals = part.indexOf('=');
    if (equals > 0 && part.slice(0, equals).trim() === 't' && /^\d{1,12}$/.test(part.slice(equals + 1).trim())) return Number(part.slice(equals + 1).trim());
  }
  return null;
}

function refusedSignature(): GatewayError {
  return new GatewayError('bad_request', 'The webhook signature does not verify (wrong secret, altered body or a timestamp outside the tolerance).');
}

/**
 * The webhook's door: only events whose `Stripe-Signature` verifies against STRIPE_WEBHOOK_SECRET over the exact
 * body bytes, with a timestamp within the tolerance of this gateway's clock, reach the books.
 */
export class StripeWebhook {
  constructor(
    private readonly stripe: Stripe,
    private readonly secret: string,
    private readonly events: StripeEvents,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  verify(body: Buffer, signature: string | undefined): Stripe.Event {
    if (signature === undefined || signature === '') throw new GatewayError('bad_request', 'The Stripe-Signature header is missing.');
    const at = signedAt(signature);
    if (at !== null && at - this.clock.now() / 1000 > WEBHOOK_TOLERANCE_SECONDS) {
      this.logger.warn('refused a Stripe webhook whose signature is dated in the future', { ahead_seconds: Math.round(at - this.clock.now() / 1000) });
      throw refusedSignature();
    }
    try {
      // The last argument is "now" in epoch milliseconds (the package divides it by 1000).
      return this.stripe.webhooks.constructEvent(body, signature, this.secret, WEBHOOK_TOLERANCE_SECONDS, undefined, this.clock.now());
    } catch (error) {
      this.logger.warn('refused a Stripe webhook whose signature does not verify', { reason: error instanceof Error ? error.message.split('\n')[0] : 'unknown' });
      throw refusedSignature();
    }
  }

  async receive(body: Buffer, signature: string | undefined): Promise<{ event: string; outcome: EventOutcome }> {
    const event = this.verify(body, signature);
    return { event: event.id, outcome: await this.events.apply(event) };
  }
}
