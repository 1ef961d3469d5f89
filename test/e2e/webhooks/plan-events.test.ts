/**
 * Plan renewals and ends become webhook events in the renewal's transaction: a plan bought in the console and
 * renewed from the balance records `invoice.issued` for each period and `plan.renewed` once; when the balance is
 * short at the end of the paid period, `plan.ended` once. The gateway's clock is moved by weeks, so the outbox
 * (the account's deliveries) is read rather than a receiver's verified requests (their timestamps are weeks off).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUpUser, startConsoleGateway, type ConsoleGateway } from '../console/console-gateway.js';

const DAY_MS = 86_400_000;
let setup: ConsoleGateway;

beforeAll(async () => {
  setup = await startConsoleGateway({ SELLER_NAME: 'Unigate Test Seller', INVOICE_SERIES: 'WPL', WEBHOOK_ALLOW_HTTP_LOOPBACK: 'true' });
});

afterAll(async () => {
  await setup?.close();
});

describe('plan events', () => {
  it('records plan.renewed and plan.ended once each, and an invoice.issued per bought period', async () => {
    const plan = await setup.gateway.admin<{ id: string }>('POST', '/admin/plans', {
      name: `Weekly ${Date.now()}`, period: 'week', quota_usd: 3, price_usd: 2.5, self_service: true, overage: { policy: 'payg' },
    });
    expect(plan.status).toBe(201);
    const user = await signUpUser(setup);
    expect((await setup.gateway.admin('POST', `/admin/accounts/${user.accountId}/credits`, { amount_usd: 6 })).status).toBe(200);
    // An endpoint nobody listens on: the outbox is what is checked.
    const endpoint = await user.client.request<{ id: string }>('POST', '/api/console/webhooks', { url: 'http://127.0.0.1:9/unused', event_types: ['plan.renewed', 'plan.ended', 'invoice.issued'] });
    expect(endpoint.status, endpoint.text).toBe(201);
    const chosen = await user.client.request<{ subscription: { id: string; current_period: { end: string } } }>('POST', `/api/console/plans/${plan.body.id}/choose`);
    expect(chosen.status, chosen.text).toBe(200);
    const firstEnd = Date.parse(chosen.body.subscription.current_period.end);
    const { services } = setup.gateway.gateway;
    const renewals = services.commerce.plans;
    const events = async () => (await services.storage.webhooks.listDeliveries(user.accountId, endpoint.body.id, 50)).map((delivery) => delivery.eventType).sort();
    try {
      setup.shift.offset = firstEnd - 30 * 60_000 - Date.now();
      await renewals.renewDue();
      await renewals.renewDue();
      expect(await events()).toEqual(['invoice.issued', 'invoice.issued', 'plan.renewed']);
      setup.shift.offset = firstEnd + 7 * DAY_MS - 10 * 60_000 - Date.now();
      await renewals.renewDue();
      setup.shift.offset = firstEnd + 7 * DAY_MS + 60_000 - Date.now();
      await renewals.renewDue();
      await renewals.renewDue();
      expect(await events()).toEqual(['invoice.issued', 'invoice.issued', 'plan.ended', 'plan.renewed']);
    } finally {
      setup.shift.offset = 0;
    }
  });
});
