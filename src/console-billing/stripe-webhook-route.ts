import { GatewayError } from '../errors/gateway-error.js';
import { readBody } from '../http/read-body.js';
import type { RouteHandler } from '../http/request-context.js';
import { sendJson } from '../http/respond.js';
import type { GatewayServices } from '../services.js';

/** Stripe's events are small; a megabyte leaves room for any of them. */
const WEBHOOK_BODY_LIMIT = 1024 * 1024;

/** `POST /api/webhooks/stripe`: no session; the signature over the exact body bytes is the authentication. */
export function stripeWebhookRoute(services: GatewayServices): RouteHandler {
  return async (context) => {
    const webhook = services.commerce.webhook;
    if (webhook === null) throw new GatewayError('not_found', 'Card payments are not configured on this gateway (STRIPE_SECRET_KEY, STRIPE_WEBHOOK_SECRET).');
    const body = await readBody(context, WEBHOOK_BODY_LIMIT);
    const signature = context.request.headers['stripe-signature'];
    const result = await webhook.receive(body, Array.isArray(signature) ? signature[0] : signature);
    sendJson(context, 200, { received: true, event: result.event, outcome: result.outcome });
  };
}
