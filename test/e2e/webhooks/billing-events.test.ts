/**
 * Money facts become webhook events in the transaction that stores them: a card top-up credited through the Stripe
 * webhook (fake Stripe, signed as Stripe signs) sends `topup.succeeded` and `invoice.issued`; a refund sends
 * `refund.created` and the credit note's `invoice.issued`; a duplicated Stripe event sends nothing more. Amounts
 * are exact strings (USD decimal and integer nano-USD) and integer cents. Verified by the `standardwebhooks` package.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConsoleActorIdentity } from '../../../src/console-billing/console-actor.js';
import { WebhookManagement } from '../../../src/webhooks/webhook-management.js';
import { startConsoleTestServer, type ConsoleTestServer } from '../../support/console-test-auth.js';
import { FakeStripe } from '../../support/fake-stripe.js';
import { startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { WebhookReceiver } from '../../support/webhook-receiver.js';
import { uniqueName } from '../admin/helpers.js';
import { waitUntil } from '../cli/cli-process.js';
import { consoleCall, newAccount } from '../payments/helpers.js';

let stripe: FakeStripe;
let gateway: TestGateway;
let consoleServer: ConsoleTestServer;
let receiver: WebhookReceiver;

beforeAll(async () => {
  stripe = new FakeStripe();
  await stripe.start();
  gateway = await startTestGateway({
    env: { ...stripe.env(), TOPUP_MIN_USD: '5', TOPUP_MAX_USD: '500', TAX_RATE_PERCENT: '20', TAX_LABEL: 'VAT', SELLER_NAME: 'Example Ltd', INVOICE_SERIES: 'WH', WEBHOOK_ALLOW_HTTP_LOOPBACK: 'true', WEBHOOK_CHECK_MS: '100' },
  });
  consoleServer = await startConsoleTestServer(gateway.gateway.services);
  receiver = new WebhookReceiver();
});

afterAll(async () => {
  await consoleServer?.close();
  await gateway?.close();
  await stripe?.stop();
  await receiver?.stop();
});

type Received = { type: string; data: Record<string, unknown> };

describe('billing events', () => {
  it('a top-up and its refund send their events once, with exact amounts', async () => {
    const url = await receiver.start();
    const email = `${uniqueName('hooks')}@example.com`;
    const actor: ConsoleActorIdentity = { accountId: await newAccount(gateway, email), userId: uniqueName('user'), role: 'owner', email };
    const { services } = gateway.gateway;
    const management = new WebhookManagement(services.storage.webhooks, services.clock, services.config.webhooks, services.limiter);
    const endpoint = await management.create(actor.accountId, { url, event_types: ['topup.succeeded', 'refund.created', 'invoice.issued'] });
    receiver.secrets = [endpoint.secret as string];
    const webhookUrl = `${gateway.consoleUrl}/api/webhooks/stripe`;

    const opened = await consoleCall<{ id: string }>(consoleServer.url, actor, 'POST', '/api/console/billing/checkout', { amount_usd: '12.34' });
    expect(opened.status, opened.text).toBe(201);
    stripe.pay(opened.body.id);
    const completed = stripe.completedEvent(opened.body.id);
    expect((await stripe.deliver(webhookUrl, completed)).body.outcome).toBe('credited');
    // Stripe delivering the same event again changes nothing, and records no second event.
    expect((await stripe.deliver(webhookUrl, completed)).body.outcome).toBe('duplicate');
    await waitUntil(() => receiver.processed.size >= 2, 10_000, 'the top-up events');

    const byType = () => new Map([...receiver.processed.values()].map((event) => [(event as Received).type, (event as Received).data]));
    expect(byType().get('topup.succeeded')).toEqual({
      top_up_id: opened.body.id, ledger_entry_id: `led_topup_${opened.body.id}`, invoice_id: expect.stringMatching(/^inv_/),
      amount_usd: '12.34', amount_nano: '12340000000', total_cents: 1481, currency: 'usd',
    });
    expect(byType().get('invoice.issued')).toMatchObject({ number: 'WH-000001', kind: 'invoice', currency: 'usd', subtotal_cents: 1234, tax_cents: 247, total_cents: 1481, corrects_invoice_id: null });

    const refunded = await stripe.deliver(webhookUrl, stripe.refundEvent(opened.body.id, 740));
    expect(refunded.body.outcome).toBe('reversed');
    await waitUntil(() => receiver.processed.size >= 4, 10_000, 'the refund events');
    const events = [...receiver.processed.values()] as Received[];
    expect(events.map((event) => event.type).sort()).toEqual(['invoice.issued', 'invoice.issued', 'refund.created', 'topup.succeeded']);
    // 740 of the 1481 cents paid: the same share of the 1234 cents of credit, rounded down (616 cents), taken back exactly.
    expect(events.find((event) => event.type === 'refund.created')?.data).toMatchObject({ top_up_id: opened.body.id, reason: 'refund', amount_usd: '6.16', amount_nano: '6160000000' });
    expect(events.filter((event) => event.type === 'invoice.issued').map((event) => event.data.kind).sort()).toEqual(['credit_note', 'invoice']);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.requests).toHaveLength(4);
    expect(receiver.requests.every((request) => request.verifiedBy.length === 1)).toBe(true);
  });
});
