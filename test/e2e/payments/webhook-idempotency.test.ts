/**
 * Property over the wire: whatever order Stripe delivers a top-up's events in — the completion announced under
 * several event ids, cumulative partial refunds, every event possibly duplicated — and however often it has to
 * retry the ones that arrived too early, the account ends with the payment credited once, minus the largest
 * refunded total, with one invoice, and the ledger check passing.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ConsoleActorIdentity } from '../../../src/console-billing/console-actor.js';
import { startConsoleTestServer, type ConsoleTestServer } from '../../support/console-test-auth.js';
import { FakeStripe, type FakeEvent } from '../../support/fake-stripe.js';
import { startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { uniqueName } from '../admin/helpers.js';
import { balanceOf, consoleCall, expectLedgerBalanced, ledgerOf, newAccount } from './helpers.js';

let stripe: FakeStripe;
let gateway: TestGateway;
let consoleServer: ConsoleTestServer;
let webhookUrl: string;

beforeAll(async () => {
  stripe = new FakeStripe();
  await stripe.start();
  gateway = await startTestGateway({ env: stripe.env() });
  webhookUrl = `${gateway.consoleUrl}/api/webhooks/stripe`;
  consoleServer = await startConsoleTestServer(gateway.gateway.services);
});

afterAll(async () => {
  await consoleServer?.close();
  await gateway?.close();
  await stripe?.stop();
});

const scenario = fc.record({
  amountUsd: fc.integer({ min: 5, max: 200 }),
  completions: fc.integer({ min: 1, max: 3 }),
  /** Refund steps as shares of what is left, in percent. */
  refundSteps: fc.array(fc.integer({ min: 1, max: 100 }), { maxLength: 3 }),
  duplicates: fc.array(fc.nat(), { maxLength: 6 }),
  order: fc.array(fc.nat(), { minLength: 12, maxLength: 12 }),
});

it('credits once and debits the largest refunded total, whatever the delivery order and duplication', async () => {
  await fc.assert(fc.asyncProperty(scenario, async ({ amountUsd, completions, refundSteps, duplicates, order }) => {
    const email = `${uniqueName('prop')}@example.com`;
    const actor: ConsoleActorIdentity = { accountId: await newAccount(gateway, email), userId: 'u', role: 'owner', email };
    const opened = await consoleCall<{ id: string }>(consoleServer.url, actor, 'POST', '/api/console/billing/checkout', { amount_usd: amountUsd });
    expect(opened.status, opened.text).toBe(201);
    stripe.pay(opened.body.id);
    const events: FakeEvent[] = Array.from({ length: completions }, () => stripe.completedEvent(opened.body.id));
    let refunded = 0;
    for (const step of refundSteps) {
      const cents = Math.floor(((amountUsd * 100 - refunded) * step) / 100);
      if (cents <= 0) continue;
      refunded += cents;
      events.push(stripe.refundEvent(opened.body.id, cents));
    }
    for (const index of duplicates) events.push(events[index % events.length] as FakeEvent);
    // A deterministic shuffle drawn from the scenario.
    const queue = events.map((event, index) => ({ event, rank: order[index % order.length] ?? 0, index }))
      .sort((left, right) => left.rank - right.rank || left.index - right.index).map((entry) => entry.event);

    let credited = 0;
    for (let round = 0; round < 5 && queue.length > 0; round += 1) {
      const retry: FakeEvent[] = [];
      for (const event of queue) {
        const delivery = await stripe.deliver(webhookUrl, event);
        if (delivery.status === 409) retry.push(event);
        else expect(delivery.status, JSON.stringify(delivery.body)).toBe(200);
        if (delivery.body.outcome === 'credited') credited += 1;
      }
      queue.splice(0, queue.length, ...retry);
    }
    expect(queue).toEqual([]);
    expect(credited).toBe(1);
    expect(await balanceOf(gateway, actor.accountId)).toBe((amountUsd * 100 - refunded) / 100);
    const entries = await ledgerOf(gateway, actor.accountId);
    expect(entries.filter((entry) => entry.kind === 'topup')).toHaveLength(1);
    const invoices = await consoleCall<{ data: Array<{ object: string }> }>(consoleServer.url, actor, 'GET', '/api/console/billing/invoices');
    expect(invoices.body.data.filter((invoice) => invoice.object === 'invoice')).toHaveLength(1);
    await expectLedgerBalanced(gateway);
  }), { numRuns: 20 });
}, 120_000);
