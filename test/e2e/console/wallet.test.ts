/**
 * The billing page's console routes over real HTTP: redeeming a redemption code (once; a used code and a viewer are
 * refused) and the published exchange rates on the console origin.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUpUser, startConsoleGateway, type ConsoleGateway } from './console-gateway.js';

let setup: ConsoleGateway;

beforeAll(async () => {
  setup = await startConsoleGateway();
});

afterAll(async () => {
  await setup?.close();
});

describe('console wallet routes', () => {
  it('redeems a code once into the session\'s account', async () => {
    const user = await signUpUser(setup);
    const created = await setup.gateway.admin('POST', '/admin/redemption-codes', { amount_usd: 7.5 });
    expect(created.status).toBe(201);
    const code = (created.body as { data: Array<{ code: string }> }).data[0]?.code ?? '';
    const redeemed = await user.client.request('POST', '/api/console/billing/redeem', { code: ` ${code} ` });
    expect(redeemed.status, redeemed.text).toBe(200);
    expect(redeemed.body).toMatchObject({ amount_usd: 7.5, balance_usd: 7.5 });
    const again = await user.client.request('POST', '/api/console/billing/redeem', { code });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ error: { code: 'redemption_code_redeemed' } });
    const billing = await user.client.request('GET', '/api/console/billing');
    expect(billing.body).toMatchObject({ balance_usd: 7.5 });
  });

  it('keeps the alert thresholds the owner sets, the same the admin API reads', async () => {
    const user = await signUpUser(setup);
    const saved = await user.client.request('PUT', '/api/console/alerts', { alert_balance_usd: 2.5, alert_quota_percent: 80 });
    expect(saved.status, saved.text).toBe(200);
    expect(saved.body).toMatchObject({ alert_balance_usd: 2.5, alert_quota_percent: 80, alerts: [] });
    const admin = await setup.gateway.admin('GET', `/admin/accounts/${user.accountId}/alerts`);
    expect(admin.body).toMatchObject({ alert_balance_usd: 2.5, alert_quota_percent: 80 });
    const bad = await user.client.request('PUT', '/api/console/alerts', { alert_quota_percent: 150 });
    expect(bad.status).toBe(400);
    expect((await user.client.request('PUT', '/api/console/alerts', { alert_balance_usd: null })).body).toMatchObject({ alert_balance_usd: null, alert_quota_percent: 80 });
  });

  it('shows the account\'s plan with its period, quota left and overage policy', async () => {
    const user = await signUpUser(setup, { verify: false });
    expect((await user.client.request('GET', '/api/console/plans')).body).toMatchObject({ data: [] });
    const plan = await setup.gateway.admin('POST', '/admin/plans', { name: `Team ${Date.now()}`, period: 'month', quota_usd: 40, overage: { policy: 'limit', limit_usd: 10 } });
    expect(plan.status).toBe(201);
    const planId = (plan.body as { id: string }).id;
    expect((await setup.gateway.admin('POST', `/admin/accounts/${user.accountId}/subscriptions`, { plan_id: planId })).status).toBe(201);
    const plans = await user.client.request('GET', '/api/console/plans');
    expect(plans.body).toMatchObject({ data: [{ plan_id: planId, status: 'active', quota_usd: 40, remaining_usd: 40, overage: { policy: 'limit', limit_usd: 10 } }] });
  });

  it('shows the published exchange rates, or none yet', async () => {
    const user = await signUpUser(setup, { verify: false });
    expect((await user.client.request('GET', '/api/console/fx')).body).toMatchObject({ rates: null });
    const now = Date.now();
    await setup.gateway.gateway.services.storage.fx.set({ base: 'USD', rates: { JPY: '151.2', CNY: '7.21', EUR: '0.92' }, asOf: now, source: 'test', updatedAt: now });
    const fx = await user.client.request('GET', '/api/console/fx');
    expect(fx.body).toMatchObject({ base: 'USD', rates: { JPY: 151.2, CNY: 7.21, EUR: 0.92 }, as_of: new Date(now).toISOString() });
    expect((await setup.client().request('GET', '/api/console/fx')).status).toBe(401);
  });
});
