import Stripe from 'stripe';
import type { StripeConfig } from '../config/commerce-config.js';

/** The official client, pointed at STRIPE_API_BASE when set (a local Stripe stand-in for tests, or stripe-mock). */
export function createStripeClient(config: StripeConfig): Stripe {
  const base = config.apiBase;
  if (base === null) return new Stripe(config.secretKey, { maxNetworkRetries: 2, timeout: 20_000 });
  const protocol = base.protocol === 'http:' ? 'http' : 'https';
  return new Stripe(config.secretKey, {
    host: base.hostname,
    port: base.port === '' ? (protocol === 'http' ? 80 : 443) : Number(base.port),
    protocol,
    maxNetworkRetries: 2,
    timeout: 20_000,
  });
}
