/**
 * Card top-ups over the wire: the console opens a Stripe Checkout Session through the official stripe package
 * (pointed at a local fake Stripe), the fake delivers webhooks signed as Stripe signs them, and only a verified
 * `checkout.session.completed` credits the account — once, whatever is duplicated, replayed, reordered, forged or
 * late. Refunds and disputes debit it (below zero too), a negative balance refuses billed requests through the
 * OpenAI SDK, every paid top-up has an invoice (PDF read back with pdftotext) and every refund a credit note; the
 * ledger check passes after every scenario. Runs on SQLite, and on PostgreSQL with TEST_DATABASE_URL.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConsoleActorIdentity } from '../../../src/console-billing/console-actor.js';
import { startConsoleTestServer, type ConsoleTestServer } from '../../support/console-test-auth.js';
import { describeStartup } from '../../../src/gateway.js';
import { FakeStripe } from '../../support/fake-stripe.js';
import { addRoutedModel, flushWrites, startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { admin, call, expectError, uniqueName } from '../admin/helpers.js';
import { balanceOf, consoleCall, expectLedgerBalanced, ledgerOf, newAccount, pdfText } from './helpers.js';

const MODEL = 'topup-model';
let stripe: FakeStripe;
let gateway: TestGateway;
let consoleServer: ConsoleTestServer;
let upstream: MockOpenAIUpstream;
let webhookUrl: string;

interface CheckoutJson { id: string; url: string; status: string; amount_usd: number; tax_usd: number; total_usd: number; invoice_id: string | null }
interface InvoiceJson {
  id: string; object: string; number: string; total_usd: number; subtotal_usd: number; tax_usd: number; corrects_invoice_id: string | null;
  buyer: { name: string; tax_id: string | null; address_lines: string[] }; seller: { name: string; tax_id: string | null };
  lines: Array<{ description: string; amount_usd: number }>; tax: { label: string; rate_percent: number } | null;
}

beforeAll(async () => {
  stripe = new FakeStripe();
  await stripe.start();
  upstream = await startMockOpenAIUpstream();
  gateway = await startTestGateway({
    env: {
      ...stripe.env(),
      TOPUP_MIN_USD: '5',
      TOPUP_MAX_USD: '500',
      TOPUP_PRESETS_USD: '10,20,50',
      TAX_RATE_PERCENT: '20',
      TAX_LABEL: 'VAT',
      SELLER_NAME: 'Example Gateway Ltd',
      SELLER_ADDRESS: '1 Market Street|London EC1A 1AA|United Kingdom',
      SELLER_TAX_ID: 'GB123456789',
      INVOICE_SERIES: 'UG',
      CONSOLE_URL: 'https://console.example.com',
    },
  });
  webhookUrl = `${gateway.consoleUrl}/api/webhooks/stripe`;
  consoleServer = await startConsoleTestServer(gateway.gateway.services);
  await addRoutedModel(gateway, {
    model: MODEL,
    pricing: { input_per_mtok: 1000, output_per_mtok: 1000 },
    channel: { name: 'topup-openai', type: 'openai', base_url: upstream.url, api_key: 'sk-upstream-test', models: { [MODEL]: 'gpt-4o-mini' } },
  });
});

afterAll(async () => {
  await consoleServer?.close();
  await gateway?.close();
  await upstream?.close();
  await stripe?.stop();
});

async function newActor(role: ConsoleActorIdentity['role'] = 'owner'): Promise<ConsoleActorIdentity> {
  const email = `${uniqueName('payer')}@example.com`;
  return { accountId: await newAccount(gateway, email), userId: uniqueName('user'), role, email };
}

async function openCheckout(actor: ConsoleActorIdentity, amountUsd: number | string): Promise<CheckoutJson> {
  const opened = await consoleCall<CheckoutJson>(consoleServer.url, actor, 'POST', '/api/console/billing/checkout', { amount_usd: amountUsd });
  expect(opened.status, opened.text).toBe(201);
  return opened.body;
}

/** Opens a session, pays it on the fake Stripe and delivers the completion; returns the session id. */
async function paidTopUp(actor: ConsoleActorIdentity, amountUsd: number): Promise<string> {
  const opened = await openCheckout(actor, amountUsd);
  stripe.pay(opened.id);
  const delivery = await stripe.deliver(webhookUrl, stripe.completedEvent(opened.id));
  expect(delivery.status, JSON.stringify(delivery.body)).toBe(200);
  expect(delivery.body.outcome).toBe('credited');
  return opened.id;
}

describe('opening a top-up', () => {
  it('the start-up line names the webhook endpoint', () => {
    expect(describeStartup(gateway.gateway).card_payments).toBe(`stripe (webhook ${gateway.consoleUrl}/api/webhooks/stripe)`);
  });

  it('shows the card option with the operator\'s presets, bounds and tax', async () => {
    const actor = await newActor();
    const billing = await consoleCall<{ balance_usd: number; card: Record<string, unknown> }>(consoleServer.url, actor, 'GET', '/api/console/billing');
    expect(billing.status, billing.text).toBe(200);
    expect(billing.body.balance_usd).toBe(0);
    expect(billing.body.card).toEqual({ enabled: true, currency: 'usd', presets_usd: [10, 20, 50], min_usd: 5, max_usd: 500, tax: { label: 'VAT', rate_percent: 20 } });
  });

  it('creates a Checkout Session through the stripe package: credit and tax lines, the account, return URLs; nothing is credited yet', async () => {
    const actor = await newActor();
    const opened = await openCheckout(actor, '12.34');
    expect(opened).toMatchObject({ status: 'open', amount_usd: 12.34, tax_usd: 2.47, total_usd: 14.81 });
    expect(opened.url).toBe(`https://checkout.stripe.com/c/pay/${opened.id}`);
    const created = stripe.calls.filter((entry) => entry.method === 'POST' && entry.path === '/v1/checkout/sessions').at(-1);
    expect(created?.idempotencyKey).toMatch(/^checkout_/);
    expect(created?.form).toMatchObject({
      mode: 'payment',
      client_reference_id: actor.accountId,
      metadata: { account_id: actor.accountId, user_id: actor.userId, credit_cents: '1234' },
      success_url: 'https://console.example.com/billing?checkout=success&session_id={CHECKOUT_SESSION_ID}',
      cancel_url: 'https://console.example.com/billing?checkout=cancelled',
    });
    expect(stripe.sessions.get(opened.id)?.line_items_seen).toEqual([
      { name: 'Prepaid credit 12.34 USD', unit_amount: 1234, quantity: 1 },
      { name: 'VAT', unit_amount: 247, quantity: 1 },
    ]);
    // The browser coming back to the success URL is not a payment: only the webhook credits.
    expect(await balanceOf(gateway, actor.accountId)).toBe(0);
    const status = await consoleCall<CheckoutJson>(consoleServer.url, actor, 'GET', `/api/console/billing/checkout/${opened.id}`);
    expect(status.body.status).toBe('open');
  });

  it('lets only owners, admins and billing members edit the billing details, and validates them', async () => {
    const actor = await newActor();
    const details = { name: 'Team Ltd', address: '5 Road', country: 'gb', tax_id: 'GB5' };
    expectError(await consoleCall(consoleServer.url, { ...actor, role: 'viewer' }, 'PUT', '/api/console/billing/profile', details), { status: 403, code: 'forbidden' });
    expectError(await consoleCall(consoleServer.url, { ...actor, role: 'developer' }, 'GET', '/api/console/billing/profile'), { status: 403 });
    expectError(await consoleCall(consoleServer.url, actor, 'PUT', '/api/console/billing/profile', { ...details, country: 'Britain' }), { status: 400, param: 'country' });
    const saved = await consoleCall(consoleServer.url, { ...actor, role: 'billing' }, 'PUT', '/api/console/billing/profile', details);
    expect(saved.status, saved.text).toBe(200);
    const read = await consoleCall(consoleServer.url, { ...actor, role: 'viewer' }, 'GET', '/api/console/billing/profile');
    expect(read.body).toMatchObject({ name: 'Team Ltd', address: '5 Road', country: 'GB', tax_id: 'GB5', email: null });
  });

  it('refuses amounts outside the bounds, finer than a cent or not numbers, and roles that may not pay', async () => {
    const actor = await newActor();
    for (const amount of [4.99, 500.01, '10.001', 'ten', -5]) {
      const refused = await consoleCall(consoleServer.url, actor, 'POST', '/api/console/billing/checkout', { amount_usd: amount });
      expectError(refused, { status: 400, code: 'bad_request', param: 'amount_usd' });
    }
    const developer = { ...actor, role: 'developer' as const };
    expectError(await consoleCall(consoleServer.url, developer, 'POST', '/api/console/billing/checkout', { amount_usd: 10 }), { status: 403, code: 'forbidden' });
    expect(await consoleCall(consoleServer.url, { ...actor, role: 'billing' }, 'POST', '/api/console/billing/checkout', { amount_usd: 10 })).toMatchObject({ status: 201 });
  });

  it('answers a clear 502 when Stripe refuses, and stores no session', async () => {
    const actor = await newActor();
    stripe.failNextCreate = { status: 400, message: 'Your account cannot currently make live charges.' };
    const refused = await consoleCall(consoleServer.url, actor, 'POST', '/api/console/billing/checkout', { amount_usd: 10 });
    expectError(refused, { status: 502, code: 'upstream_error' });
    const billing = await consoleCall<{ recent_top_ups: unknown[] }>(consoleServer.url, actor, 'GET', '/api/console/billing');
    expect(billing.body.recent_top_ups).toEqual([]);
  });
});

describe('the webhook credits once, and only when signed', () => {
  it('credits the paid session once with its source; the invoice carries seller, buyer, lines, tax and totals', async () => {
    const actor = await newActor();
    const profile = await consoleCall(consoleServer.url, actor, 'PUT', '/api/console/billing/profile', {
      name: 'Ada Buyer GmbH', address: 'Hauptstrasse 1\n10115 Berlin', country: 'de', tax_id: 'DE999999999', email: 'billing@ada.example',
    });
    expect(profile.status, profile.text).toBe(200);
    const sessionId = await paidTopUp(actor, 25);
    expect(await balanceOf(gateway, actor.accountId)).toBe(25);
    const entries = await ledgerOf(gateway, actor.accountId);
    expect(entries).toEqual([expect.objectContaining({ kind: 'topup', amount_usd: 25, reason: `stripe:${sessionId}` })]);

    const invoices = await consoleCall<{ data: InvoiceJson[] }>(consoleServer.url, actor, 'GET', '/api/console/billing/invoices');
    expect(invoices.body.data).toHaveLength(1);
    const invoice = invoices.body.data[0] as InvoiceJson;
    expect(invoice).toMatchObject({
      object: 'invoice', subtotal_usd: 25, tax_usd: 5, total_usd: 30, tax: { label: 'VAT', rate_percent: 20 },
      seller: { name: 'Example Gateway Ltd', tax_id: 'GB123456789' },
      buyer: { name: 'Ada Buyer GmbH', tax_id: 'DE999999999', address_lines: ['Hauptstrasse 1', '10115 Berlin'] },
      lines: [{ description: 'Prepaid account credit (25.00 USD)', amount_usd: 25 }],
    });
    expect(invoice.number).toMatch(/^UG-\d{6}$/);

    const pdf = await fetch(`${consoleServer.url}${`/api/console/billing/invoices/${invoice.id}/pdf`}`, { headers: { 'x-test-actor': `${actor.accountId}:${actor.userId}:viewer:${actor.email}` } });
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    const bytes = Buffer.from(await pdf.arrayBuffer());
    expect(bytes.subarray(0, 5).toString()).toBe('%PDF-');
    const text = await pdfText(bytes, gateway.dataDirectory);
    for (const expected of ['Invoice', invoice.number, 'Example Gateway Ltd', 'GB123456789', 'Ada Buyer GmbH', 'DE999999999', 'Hauptstrasse 1', 'Prepaid account credit', '25.00 USD', 'VAT (20 %)', '5.00 USD', '30.00 USD']) {
      expect(text).toContain(expected);
    }
    // Another account cannot read it; the operator can.
    const stranger = await newActor();
    expectError(await consoleCall(consoleServer.url, stranger, 'GET', `/api/console/billing/invoices/${invoice.id}`), { status: 404 });
    const operatorList = await admin<{ data: InvoiceJson[] }>(gateway, 'GET', `/admin/accounts/${actor.accountId}/invoices`);
    expect(operatorList.body.data.map((entry) => entry.number)).toEqual([invoice.number]);
    const operatorPdf = await fetch(`${gateway.url}/admin/invoices/${invoice.id}/pdf`, { headers: { authorization: `Bearer ${gateway.adminToken}` } });
    expect(operatorPdf.status).toBe(200);
    expect(Buffer.from(await operatorPdf.arrayBuffer()).equals(bytes)).toBe(true);
    expectError(await call(gateway.url, 'GET', `/admin/invoices/${invoice.id}`), { status: 401 });

    // Issued invoices never change: new billing details apply to later invoices only.
    const changed = await consoleCall(consoleServer.url, actor, 'PUT', '/api/console/billing/profile', { name: 'Ada Renamed AG', address: 'Elsewhere 2', country: 'AT' });
    expect(changed.status, changed.text).toBe(200);
    const again = await consoleCall<InvoiceJson>(consoleServer.url, actor, 'GET', `/api/console/billing/invoices/${invoice.id}`);
    expect(again.body).toEqual(invoice);
    await paidTopUp(actor, 10);
    const later = await consoleCall<{ data: InvoiceJson[] }>(consoleServer.url, actor, 'GET', '/api/console/billing/invoices');
    expect(later.body.data[0]?.buyer).toMatchObject({ name: 'Ada Renamed AG', address_lines: ['Elsewhere 2'], tax_id: null });
    await expectLedgerBalanced(gateway);
  });

  it('duplicated, replayed and concurrent deliveries of the completion credit once; so does a second event type for the same session', async () => {
    const actor = await newActor();
    const opened = await openCheckout(actor, 10);
    stripe.pay(opened.id);
    const event = stripe.completedEvent(opened.id);
    const concurrent = await Promise.all(Array.from({ length: 6 }, () => stripe.deliver(webhookUrl, event)));
    expect(concurrent.map((delivery) => delivery.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(concurrent.filter((delivery) => delivery.body.outcome === 'credited')).toHaveLength(1);
    // Stripe may announce the same payment again under another event id (and event type).
    const again = await stripe.deliver(webhookUrl, stripe.completedEvent(opened.id));
    expect(again.body.outcome).toBe('already_paid');
    const other = await stripe.deliver(webhookUrl, stripe.event('checkout.session.async_payment_succeeded', stripe.completedEvent(opened.id).data.object));
    expect(other.body.outcome).toBe('already_paid');
    expect(await balanceOf(gateway, actor.accountId)).toBe(10);
    expect((await ledgerOf(gateway, actor.accountId)).filter((entry) => entry.kind === 'topup')).toHaveLength(1);
    const invoices = await consoleCall<{ data: InvoiceJson[] }>(consoleServer.url, actor, 'GET', '/api/console/billing/invoices');
    expect(invoices.body.data).toHaveLength(1);
    await expectLedgerBalanced(gateway);
  });

  it('forged signatures, altered bodies, missing headers and late deliveries are refused and credit nothing', async () => {
    const actor = await newActor();
    const opened = await openCheckout(actor, 10);
    stripe.pay(opened.id);
    const event = stripe.completedEvent(opened.id);
    const forged = await stripe.deliver(webhookUrl, event, { secret: 'whsec_forged' });
    expect(forged.status).toBe(400);
    expect((forged.body.error as { code: string }).code).toBe('bad_request');
    const altered = await stripe.deliver(webhookUrl, event, { tamper: (payload) => payload.replace('"livemode": false', '"livemode": true') });
    expect(altered.status).toBe(400);
    const unsigned = await call(gateway.consoleUrl, 'POST', '/api/webhooks/stripe', { rawBody: JSON.stringify(event), headers: { 'content-type': 'application/json' } });
    expectError(unsigned, { status: 400, code: 'bad_request' });
    // Signed correctly, but six minutes ago: outside Stripe's five-minute tolerance (a replay or a late delivery).
    const late = await stripe.deliver(webhookUrl, event, { timestamp: Math.floor(Date.now() / 1000) - 360 });
    expect(late.status).toBe(400);
    // Dated six minutes ahead: a signature made for later (a clock-skew replay window) is refused the same way.
    const early = await stripe.deliver(webhookUrl, event, { timestamp: Math.floor(Date.now() / 1000) + 360 });
    expect(early.status).toBe(400);
    expect((early.body.error as { code: string }).code).toBe('bad_request');
    expect(await balanceOf(gateway, actor.accountId)).toBe(0);
    // Within the tolerance either way a delivery verifies: two minutes ahead, it still credits (the refused ones
    // recorded nothing).
    expect((await stripe.deliver(webhookUrl, event, { timestamp: Math.floor(Date.now() / 1000) + 120 })).body.outcome).toBe('credited');
    expect(await balanceOf(gateway, actor.accountId)).toBe(10);
    await expectLedgerBalanced(gateway);
  });

  it('an expired session is marked expired and credits nothing', async () => {
    const actor = await newActor();
    const opened = await openCheckout(actor, 10);
    const expired = await stripe.deliver(webhookUrl, stripe.event('checkout.session.expired', { ...stripe.completedEvent(opened.id).data.object, status: 'expired' }));
    expect(expired.body.outcome).toBe('expired');
    const status = await consoleCall<CheckoutJson>(consoleServer.url, actor, 'GET', `/api/console/billing/checkout/${opened.id}`);
    expect(status.body.status).toBe('expired');
    expect(await balanceOf(gateway, actor.accountId)).toBe(0);
  });

  it('a completion for a session still unpaid credits nothing; an unknown session is acknowledged and ignored', async () => {
    const actor = await newActor();
    const opened = await openCheckout(actor, 10);
    const unpaid = await stripe.deliver(webhookUrl, stripe.completedEvent(opened.id));
    expect(unpaid.body.outcome).toBe('awaiting_payment');
    const foreign = await stripe.deliver(webhookUrl, stripe.event('checkout.session.completed', { id: 'cs_test_not_ours', object: 'checkout.session' }));
    expect(foreign.status).toBe(200);
    expect(foreign.body.outcome).toBe('unknown_session');
    expect(await balanceOf(gateway, actor.accountId)).toBe(0);
    await expectLedgerBalanced(gateway);
  });
});

describe('refunds and disputes', () => {
  it('a refund that arrives before the payment\'s completion is answered with an error (Stripe retries) and applied after it', async () => {
    const actor = await newActor();
    const opened = await openCheckout(actor, 20);
    stripe.pay(opened.id);
    const refund = stripe.refundEvent(opened.id, 2400);
    const early = await stripe.deliver(webhookUrl, refund);
    expect(early.status).toBe(409);
    expect((await stripe.deliver(webhookUrl, stripe.completedEvent(opened.id))).body.outcome).toBe('credited');
    const retried = await stripe.deliver(webhookUrl, refund);
    expect(retried.status).toBe(200);
    expect(retried.body.outcome).toBe('reversed');
    expect(await balanceOf(gateway, actor.accountId)).toBe(0);
    await expectLedgerBalanced(gateway);
  });

  it('partial refunds debit their credit share once each (replays and reordering included) and issue credit notes', async () => {
    const actor = await newActor();
    const sessionId = await paidTopUp(actor, 50);
    const first = stripe.refundEvent(sessionId, 1200); // 10 USD credit + 2 USD VAT
    const second = stripe.refundEvent(sessionId, 1200); // cumulative 24 USD
    // The later cumulative event first, then the earlier one: the debit converges on the cumulative refund.
    expect((await stripe.deliver(webhookUrl, second)).body.outcome).toBe('reversed');
    expect((await stripe.deliver(webhookUrl, first)).body.outcome).toBe('nothing_to_reverse');
    expect((await stripe.deliver(webhookUrl, second)).body.outcome).toBe('duplicate');
    expect(await balanceOf(gateway, actor.accountId)).toBe(30);
    const refunds = (await ledgerOf(gateway, actor.accountId)).filter((entry) => entry.kind === 'refund');
    expect(refunds).toEqual([expect.objectContaining({ amount_usd: -20, reason: expect.stringMatching(/^stripe-refund:ch_/) as unknown })]);
    const invoices = await consoleCall<{ data: InvoiceJson[] }>(consoleServer.url, actor, 'GET', '/api/console/billing/invoices');
    const [note, original] = invoices.body.data as [InvoiceJson, InvoiceJson];
    expect(original.object).toBe('invoice');
    expect(note).toMatchObject({ object: 'credit_note', corrects_invoice_id: original.id, subtotal_usd: -20, tax_usd: -4, total_usd: -24 });
    expect(note.number).toMatch(/^UG-CN-\d{6}$/);
    const text = await pdfText(Buffer.from(await (await fetch(`${consoleServer.url}/api/console/billing/invoices/${note.id}/pdf`, { headers: { 'x-test-actor': `${actor.accountId}:${actor.userId}:owner:${actor.email}` } })).arrayBuffer()), gateway.dataDirectory);
    expect(text).toContain('Credit note');
    expect(text).toContain(original.number);
    expect(text).toContain('-24.00 USD');
    await expectLedgerBalanced(gateway);
  });

  it('a dispute after spending takes the balance below zero; billed requests are refused until a top-up makes it positive', async () => {
    const actor = await newActor();
    const sessionId = await paidTopUp(actor, 10);
    const key = await admin<{ key: string }>(gateway, 'POST', `/admin/accounts/${actor.accountId}/keys`, {});
    expect(key.status, key.text).toBe(201);
    const client = new OpenAI({ apiKey: key.body.key, baseURL: gateway.baseURL, maxRetries: 0 });
    const answer = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'spend some of it' }] });
    expect(answer.choices[0]?.message.content).toBeTruthy();
    await flushWrites(gateway);
    const afterSpend = await balanceOf(gateway, actor.accountId);
    expect(afterSpend).toBeLessThan(10);
    expect(afterSpend).toBeGreaterThan(0);

    const dispute = stripe.disputeEvent(sessionId, 1200);
    expect((await stripe.deliver(webhookUrl, dispute)).body.outcome).toBe('reversed');
    expect((await stripe.deliver(webhookUrl, dispute)).body.outcome).toBe('duplicate');
    const negative = await balanceOf(gateway, actor.accountId);
    expect(negative).toBeCloseTo(afterSpend - 10, 9);
    expect(negative).toBeLessThan(0);
    const billing = await consoleCall<{ balance_usd: number; can_spend: boolean }>(consoleServer.url, actor, 'GET', '/api/console/billing');
    expect(billing.body).toMatchObject({ can_spend: false });

    const refused = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'more' }] }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
    await expectLedgerBalanced(gateway);

    await paidTopUp(actor, 20);
    const again = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'back in credit' }] });
    expect(again.choices[0]?.message.content).toBeTruthy();
    await flushWrites(gateway);
    await expectLedgerBalanced(gateway);
  });
});

describe('without Stripe configured', () => {
  it('hides the card option, says how to enable it, and has no webhook', async () => {
    const bare = await startTestGateway();
    const server = await startConsoleTestServer(bare.gateway.services);
    try {
      const accountId = (await bare.admin<{ id: string }>('POST', '/admin/accounts', { email: `${uniqueName('bare')}@example.com` })).body.id;
      const actor: ConsoleActorIdentity = { accountId, userId: 'u1', role: 'owner', email: 'owner@example.com' };
      const billing = await consoleCall<{ card: { enabled: boolean; how_to_enable: string } }>(server.url, actor, 'GET', '/api/console/billing');
      expect(billing.body.card.enabled).toBe(false);
      expect(billing.body.card.how_to_enable).toContain('STRIPE_SECRET_KEY');
      expect(describeStartup(bare.gateway).card_payments).toContain('off');
      expectError(await consoleCall(server.url, actor, 'POST', '/api/console/billing/checkout', { amount_usd: 10 }), { status: 409, code: 'conflict' });
      expectError(await call(bare.consoleUrl, 'POST', '/api/webhooks/stripe', { body: {} }), { status: 404 });
    } finally {
      await server.close();
      await bare.close();
    }
  });
});
