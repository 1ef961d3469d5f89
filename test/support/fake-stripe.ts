/**
 * A local stand-in for Stripe's API, as the official `stripe` package sees it: it answers the Checkout Session
 * endpoints in Stripe's shapes (form-encoded requests, `Authorization: Bearer sk_…`, Stripe's error object), and it
 * delivers webhook events signed exactly as Stripe signs them: `Stripe-Signature: t=<unix seconds>,v1=<hex
 * HMAC-SHA256 of "<t>.<raw body>" under the endpoint's signing secret>`.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeCheckoutSession {
  id: string;
  object: 'checkout.session';
  amount_subtotal: number;
  amount_total: number;
  currency: string;
  mode: string;
  status: 'open' | 'complete' | 'expired';
  payment_status: 'unpaid' | 'paid' | 'no_payment_required';
  payment_intent: string | null;
  client_reference_id: string | null;
  customer_email: string | null;
  metadata: Record<string, string>;
  success_url: string;
  cancel_url: string;
  url: string | null;
  created: number;
  expires_at: number;
  livemode: false;
  line_items_seen: Array<{ name: string; unit_amount: number; quantity: number }>;
}

export interface FakeEvent {
  id: string;
  object: 'event';
  api_version: string;
  created: number;
  data: { object: Record<string, unknown> };
  livemode: false;
  pending_webhooks: number;
  request: { id: string | null; idempotency_key: string | null };
  type: string;
}

export interface Delivery {
  status: number;
  body: Record<string, unknown>;
}

const API_VERSION = '2026-10-28.endive';

function randomId(prefix: string): string {
  return `${prefix}_test_${randomBytes(12).toString('hex')}`;
}

/** Stripe's signature of a payload at a timestamp. */
export function stripeSignature(payload: string, secret: string, timestamp: number): string {
  const v1 = createHmac('sha256', secret).update(`${timestamp}.${payload}`, 'utf8').digest('hex');
  return `t=${timestamp},v1=${v1}`;
}

/** `line_items[0][price_data][unit_amount]=500` → nested objects and arrays, as Stripe's form encoding means them. */
function parseForm(text: string): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const path = key.replace(/\]/g, '').split('[');
    let node: Record<string, unknown> = root;
    path.forEach((segment, index) => {
      if (index === path.length - 1) {
        node[segment] = value;
        return;
      }
      node[segment] ??= {};
      node = node[segment] as Record<string, unknown>;
    });
  }
  return root;
}

export class FakeStripe {
  readonly secretKey = `sk_test_${randomBytes(12).toString('hex')}`;
  readonly webhookSecret = `whsec_${randomBytes(24).toString('base64url')}`;
  readonly sessions = new Map<string, FakeCheckoutSession>();
  /** Every API call received, for assertions on what the gateway asked. */
  readonly calls: Array<{ method: string; path: string; form: Record<string, unknown>; idempotencyKey: string | undefined }> = [];
  /** The next session creations answer this HTTP error (Stripe's error shape). */
  failNextCreate: { status: number; message: string } | null = null;
  #server: Server | null = null;
  #url = '';
  #refunded = new Map<string, number>();

  get url(): string {
    return this.#url;
  }

  /** The gateway's environment for this stand-in. */
  env(): Record<string, string> {
    return { STRIPE_SECRET_KEY: this.secretKey, STRIPE_WEBHOOK_SECRET: this.webhookSecret, STRIPE_API_BASE: this.#url };
  }

  async start(): Promise<void> {
    const server = createServer((request, response) => {
      this.#handle(request, response).catch(() => {
        response.statusCode = 500;
        response.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.#server = server;
    this.#url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = null;
    if (server !== null) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request as AsyncIterable<Buffer>) chunks.push(chunk);
    const form = parseForm(Buffer.concat(chunks).toString('utf8'));
    const path = (request.url ?? '/').split('?')[0] ?? '/';
    const idempotencyKey = request.headers['idempotency-key'] as string | undefined;
    this.calls.push({ method: request.method ?? 'GET', path, form, idempotencyKey });
    const send = (status: number, body: unknown): void => {
      response.statusCode = status;
      response.setHeader('content-type', 'application/json');
      response.setHeader('request-id', randomId('req'));
      response.end(JSON.stringify(body));
    };
    const error = (status: number, type: string, message: string): void => send(status, { error: { type, message } });
    if (request.headers.authorization !== `Bearer ${this.secretKey}`) {
      error(401, 'invalid_request_error', 'Invalid API Key provided.');
      return;
    }
    if (request.method === 'POST' && path === '/v1/checkout/sessions') {
      if (this.failNextCreate !== null) {
        const failure = this.failNextCreate;
        this.failNextCreate = null;
        error(failure.status, 'api_error', failure.message);
        return;
      }
      send(200, this.#createSession(form));
      return;
    }
    const retrieve = /^\/v1\/checkout\/sessions\/([^/]+)$/.exec(path);
    if (request.method === 'GET' && retrieve !== null) {
      const session = this.sessions.get(decodeURIComponent(retrieve[1] ?? ''));
      if (session === undefined) error(404, 'invalid_request_error', `No such checkout.session: '${retrieve[1] ?? ''}'`);
      else send(200, this.#public(session));
      return;
    }
    error(404, 'invalid_request_error', `Unrecognized request URL (${request.method ?? 'GET'}: ${path}).`);
  }

  #createSession(form: Record<string, unknown>): Record<string, unknown> {
    if (form.mode !== 'payment') throw new Error('only payment mode is faked');
    const items = Object.values((form.line_items ?? {}) as Record<string, Record<string, unknown>>).map((item) => {
      const price = item.price_data as Record<string, unknown>;
      const product = price.product_data as Record<string, string>;
      return { name: product.name ?? '', unit_amount: Number(price.unit_amount), quantity: Number(item.quantity ?? 1), currency: String(price.currency) };
    });
    const total = items.reduce((sum, item) => sum + item.unit_amount * item.quantity, 0);
    const id = randomId('cs');
    const now = Math.floor(Date.now() / 1000);
    const session: FakeCheckoutSession = {
      id,
      object: 'checkout.session',
      amount_subtotal: total,
      amount_total: total,
      currency: items[0]?.currency ?? 'usd',
      mode: 'payment',
      status: 'open',
      payment_status: 'unpaid',
      payment_intent: null,
      client_reference_id: (form.client_reference_id as string | undefined) ?? null,
      customer_email: (form.customer_email as string | undefined) ?? null,
      metadata: (form.metadata ?? {}) as Record<string, string>,
      success_url: String(form.success_url),
      cancel_url: String(form.cancel_url),
      url: `https://checkout.stripe.com/c/pay/${id}`,
      created: now,
      expires_at: now + 24 * 3600,
      livemode: false,
      line_items_seen: items.map(({ name, unit_amount, quantity }) => ({ name, unit_amount, quantity })),
    };
    this.sessions.set(id, session);
    return this.#public(session);
  }

  #public(session: FakeCheckoutSession): Record<string, unknown> {
    const { line_items_seen: _seen, ...rest } = session;
    return rest;
  }

  /** The card holder paid on Stripe's page: the session is complete and paid, with a PaymentIntent. */
  pay(sessionId: string): FakeCheckoutSession {
    const session = this.#session(sessionId);
    session.status = 'complete';
    session.payment_status = 'paid';
    session.payment_intent ??= randomId('pi');
    return session;
  }

  #session(sessionId: string): FakeCheckoutSession {
    const session = this.sessions.get(sessionId);
    if (session === undefined) throw new Error(`no fake session ${sessionId}`);
    return session;
  }

  event(type: string, object: Record<string, unknown>): FakeEvent {
    return {
      id: randomId('evt'), object: 'event', api_version: API_VERSION, created: Math.floor(Date.now() / 1000),
      data: { object }, livemode: false, pending_webhooks: 1, request: { id: null, idempotency_key: null }, type,
    };
  }

  completedEvent(sessionId: string): FakeEvent {
    return this.event('checkout.session.completed', this.#public(this.#session(sessionId)));
  }

  /** A refund of `amountCents` more on the session's charge: `charge.refunded` carries the cumulative amount refunded. */
  refundEvent(sessionId: string, amountCents: number): FakeEvent {
    const session = this.#session(sessionId);
    const chargeId = `ch_for_${session.payment_intent ?? 'none'}`;
    const refunded = (this.#refunded.get(chargeId) ?? 0) + amountCents;
    this.#refunded.set(chargeId, refunded);
    return this.event('charge.refunded', {
      id: chargeId, object: 'charge', amount: session.amount_total, amount_captured: session.amount_total, amount_refunded: refunded,
      currency: session.currency, paid: true, refunded: refunded >= session.amount_total, payment_intent: session.payment_intent, status: 'succeeded', livemode: false,
    });
  }

  disputeEvent(sessionId: string, amountCents: number): FakeEvent {
    const session = this.#session(sessionId);
    return this.event('charge.dispute.created', {
      id: randomId('dp'), object: 'dispute', amount: amountCents, currency: session.currency, charge: `ch_for_${session.payment_intent ?? 'none'}`,
      payment_intent: session.payment_intent, reason: 'fraudulent', status: 'needs_response', livemode: false,
    });
  }

  /** Posts the event to the webhook endpoint, signed with the endpoint's secret (or `secret`) at `timestamp` (now). */
  async deliver(endpoint: string, event: FakeEvent, options: { secret?: string; timestamp?: number; tamper?: (payload: string) => string } = {}): Promise<Delivery> {
    const payload = JSON.stringify(event, null, 2);
    const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
    const signature = stripeSignature(payload, options.secret ?? this.webhookSecret, timestamp);
    const body = options.tamper === undefined ? payload : options.tamper(payload);
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': signature, 'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)' },
      body,
      signal: AbortSignal.timeout(15_000),
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
  }
}
