/**
 * Self-service plans over real HTTP with signed-in console sessions: the operator offers a plan with a price; the
 * owner chooses it and pays from the prepaid balance (a `subscription` ledger entry with its source and an invoice
 * with its PDF); a change of plan follows the admin API's plan-change rule; a short balance is refused and changes
 * nothing; a developer is refused by the API; each renewal buys the next period with its own invoice, and a
 * balance too short lets the subscription stop at the end of its paid period. The ledger check passes after each.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkToken, strongPassword, uniqueEmail, waitForMail } from '../../support/console-client.js';
import { balanceOf, expectLedgerBalanced, ledgerOf, pdfText } from '../payments/helpers.js';
import { signUpUser, startConsoleGateway, type ConsoleGateway, type SignedUpUser } from './console-gateway.js';

const DAY_MS = 86_400_000;

let setup: ConsoleGateway;

beforeAll(async () => {
  setup = await startConsoleGateway({ SELLER_NAME: 'Unigate Test Seller', INVOICE_SERIES: 'PLN' });
});

afterAll(async () => {
  await setup?.close();
});

interface OfferedPlan { id: string; name: string; price_usd: number; current: boolean }
interface PlansAnswer { data: Array<Record<string, unknown>>; offered: OfferedPlan[]; can_choose: boolean }
interface Invoice { id: string; number: string; total_usd: number; lines: Array<{ description: string; amount_usd: number }>; pdf_url: string }

async function createPlan(body: Record<string, unknown>): Promise<string> {
  const plan = await setup.gateway.admin<{ id: string }>('POST', '/admin/plans', { overage: { policy: 'payg' }, ...body });
  expect(plan.status, JSON.stringify(plan.body)).toBe(201);
  return plan.body.id;
}

async function credit(accountId: string, amountUsd: number): Promise<void> {
  expect((await setup.gateway.admin('POST', `/admin/accounts/${accountId}/credits`, { amount_usd: amountUsd })).status).toBe(200);
}

async function invoicesOf(user: SignedUpUser): Promise<Invoice[]> {
  const answer = await user.client.request<{ data: Invoice[] }>('GET', '/api/console/billing/invoices');
  expect(answer.status, answer.text).toBe(200);
  return answer.body.data;
}

/** Read through the admin API: a clock moved by weeks outlives the console session. */
async function adminInvoicesOf(accountId: string): Promise<Invoice[]> {
  const answer = await setup.gateway.admin<{ data: Invoice[] }>('GET', `/admin/accounts/${accountId}/invoices`);
  expect(answer.status).toBe(200);
  return answer.body.data;
}

const suffix = (): string => `${Date.now()}-${Math.random().toString(36).slice(2, 6)}`;

describe('self-service plans in the console', () => {
  let starter: string;
  let pro: string;
  let weekly: string;

  beforeAll(async () => {
    starter = await createPlan({ name: `Starter ${suffix()}`, period: 'month', quota_usd: 10, price_usd: 5, self_service: true });
    pro = await createPlan({ name: `Pro ${suffix()}`, period: 'month', quota_usd: 50, price_usd: 20, self_service: true });
    weekly = await createPlan({ name: `Weekly ${suffix()}`, period: 'week', quota_usd: 3, price_usd: 2.5, self_service: true });
    await createPlan({ name: `Internal ${suffix()}`, period: 'month', quota_usd: 1000, price_usd: 1 });
  });

  it('validates the price an operator sets: whole cents, not negative', async () => {
    const fraction = await setup.gateway.admin('POST', '/admin/plans', { name: `Odd ${suffix()}`, period: 'day', quota_usd: 1, overage: { policy: 'deny' }, price_usd: 0.001 });
    expect(fraction.status).toBe(400);
    const negative = await setup.gateway.admin('POST', '/admin/plans', { name: `Neg ${suffix()}`, period: 'day', quota_usd: 1, overage: { policy: 'deny' }, price_usd: -1 });
    expect(negative.status).toBe(400);
    const shown = await setup.gateway.admin('GET', `/admin/plans/${starter}`);
    expect(shown.body).toMatchObject({ self_service: true, price_usd: 5 });
  });

  it('lists only self-service plans, and a short balance is refused without any change', async () => {
    const user = await signUpUser(setup);
    const listed = await user.client.request<PlansAnswer>('GET', '/api/console/plans');
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.can_choose).toBe(true);
    expect(listed.body.offered.map((plan) => plan.id)).toEqual(expect.arrayContaining([starter, pro, weekly]));
    expect(listed.body.offered.every((plan) => plan.name.startsWith('Internal') === false)).toBe(true);

    await credit(user.accountId, 3);
    const refused = await user.client.request('POST', `/api/console/plans/${starter}/choose`);
    expect(refused.status, refused.text).toBe(402);
    expect(refused.body).toMatchObject({ error: { code: 'insufficient_balance' } });
    expect(refused.text).toMatch(/costs 5 USD.*only 3 USD/);
    expect(await balanceOf(setup.gateway, user.accountId)).toBe(3);
    expect((await user.client.request<PlansAnswer>('GET', '/api/console/plans')).body.data).toEqual([]);
    expect(await invoicesOf(user)).toEqual([]);

    const internal = listed.body.offered.length;
    expect(internal).toBeGreaterThanOrEqual(3);
    await expectLedgerBalanced(setup.gateway);
  });

  it('subscribes from the balance with a ledger entry and an invoice, then upgrades paying the difference', async () => {
    const user = await signUpUser(setup);
    await user.client.request('PUT', '/api/console/billing/profile', { name: 'Plan Buyer GmbH', address: 'Hauptstr. 1\n10115 Berlin', country: 'de', tax_id: 'DE123' });
    await credit(user.accountId, 30);

    const chosen = await user.client.request<{ subscription: Record<string, unknown>; charged_usd: number; invoice_id: string; balance_usd: number }>('POST', `/api/console/plans/${starter}/choose`);
    expect(chosen.status, chosen.text).toBe(200);
    expect(chosen.body).toMatchObject({ charged_usd: 5, balance_usd: 25, subscription: { plan_id: starter, status: 'active', quota_usd: 10, remaining_usd: 10, renews: true, price_usd: 5 } });
    const subscriptionId = chosen.body.subscription.id as string;
    expect(chosen.body.subscription.paid_through).toBe((chosen.body.subscription.current_period as { end: string }).end);

    const again = await user.client.request('POST', `/api/console/plans/${starter}/choose`);
    expect(again.status).toBe(409);

    const entries = await ledgerOf(setup.gateway, user.accountId);
    const payment = entries.filter((entry) => entry.kind === 'subscription');
    expect(payment).toHaveLength(1);
    expect(payment[0]).toMatchObject({ amount_usd: -5 });
    expect(payment[0]?.reason).toMatch(new RegExp(`^plan:${subscriptionId}:\\d+$`));

    let invoices = await invoicesOf(user);
    expect(invoices).toHaveLength(1);
    expect(invoices[0]).toMatchObject({ id: chosen.body.invoice_id, total_usd: 5, tax: null, buyer: { name: 'Plan Buyer GmbH', tax_id: 'DE123' } });
    expect(invoices[0]?.number).toMatch(/^PLN-\d{6}$/);
    const pdf = await user.client.raw('GET', invoices[0]?.pdf_url ?? '');
    expect(pdf.status).toBe(200);
    const text = await pdfText(Buffer.from(await pdf.arrayBuffer()), setup.gateway.dataDirectory);
    expect(text).toContain(invoices[0]?.number ?? 'missing');
    expect(text).toContain('Plan Buyer GmbH');
    expect(text).toMatch(/Plan Starter/);

    // Same period length: the period and its use carry over; the upgrade pays the price difference (15 USD).
    const upgraded = await user.client.request<{ subscription: Record<string, unknown>; charged_usd: number; balance_usd: number }>('POST', `/api/console/plans/${pro}/choose`);
    expect(upgraded.status, upgraded.text).toBe(200);
    expect(upgraded.body).toMatchObject({ charged_usd: 15, balance_usd: 10, subscription: { id: subscriptionId, plan_id: pro, quota_usd: 50 } });
    expect(upgraded.body.subscription.current_period).toEqual(chosen.body.subscription.current_period);
    invoices = await invoicesOf(user);
    expect(invoices.map((invoice) => invoice.total_usd).sort()).toEqual([15, 5]);
    expect(invoices.find((invoice) => invoice.total_usd === 15)?.lines[0]?.description).toMatch(/^Upgrade to plan Pro/);

    // A cheaper plan of the same length takes effect at once; nothing is refunded or charged.
    const downgraded = await user.client.request<{ charged_usd: number; balance_usd: number; invoice_id: string | null }>('POST', `/api/console/plans/${starter}/choose`);
    expect(downgraded.body).toMatchObject({ charged_usd: 0, balance_usd: 10, invoice_id: null });

    // Another period length: a new period starts now, paid in full.
    const toWeekly = await user.client.request<{ subscription: Record<string, unknown>; charged_usd: number; balance_usd: number }>('POST', `/api/console/plans/${weekly}/choose`);
    expect(toWeekly.status, toWeekly.text).toBe(200);
    expect(toWeekly.body).toMatchObject({ charged_usd: 2.5, balance_usd: 7.5, subscription: { id: subscriptionId, plan_id: weekly } });
    const period = toWeekly.body.subscription.current_period as { start: string; end: string };
    expect(Date.parse(period.end) - Date.parse(period.start)).toBe(7 * DAY_MS);
    expect(await invoicesOf(user)).toHaveLength(3);

    const plans = await user.client.request<PlansAnswer>('GET', '/api/console/plans');
    expect(plans.body.offered.find((plan) => plan.current)?.id).toBe(weekly);
    await expectLedgerBalanced(setup.gateway);
  }, 120_000);

  it('refuses members without a billing role over the wire', async () => {
    const owner = await signUpUser(setup);
    await credit(owner.accountId, 50);
    const email = uniqueEmail('developer');
    expect((await owner.client.request('POST', '/api/members/invitations', { email, role: 'developer' })).status).toBe(201);
    const token = linkToken(await waitForMail(setup.mail, email, /invited you/i));
    const developer = setup.client();
    expect((await developer.request('POST', '/api/invitations/accept', { token, password: strongPassword() })).status).toBe(200);
    const listed = await developer.request<PlansAnswer>('GET', '/api/console/plans');
    expect(listed.body.can_choose).toBe(false);
    const refused = await developer.request('POST', `/api/console/plans/${starter}/choose`);
    expect(refused.status).toBe(403);
    expect(await balanceOf(setup.gateway, owner.accountId)).toBe(50);
    const unknown = await owner.client.request('POST', '/api/console/plans/plan_missing/choose');
    expect(unknown.status).toBe(404);
  });

  it('renews each period from the balance with its own invoice, and stops at the paid end when the balance is short', async () => {
    const user = await signUpUser(setup);
    await credit(user.accountId, 6);
    const chosen = await user.client.request<{ subscription: { id: string; current_period: { end: string } } }>('POST', `/api/console/plans/${weekly}/choose`);
    expect(chosen.status, chosen.text).toBe(200);
    const firstEnd = Date.parse(chosen.body.subscription.current_period.end);
    const renewals = setup.gateway.gateway.services.commerce.plans;

    // Not due yet: nothing happens.
    expect((await renewals.renewDue()).renewed).toBe(0);
    try {
      // Half an hour before the paid week ends, the next one is bought.
      setup.shift.offset = firstEnd - 30 * 60_000 - Date.now();
      // Other tests' accounts may renew in the same run: this account's balance and invoices tell what it paid.
      expect((await renewals.renewDue()).renewed).toBeGreaterThanOrEqual(1);
      expect((await renewals.renewDue()).renewed).toBe(0);
      expect(await balanceOf(setup.gateway, user.accountId)).toBe(1);
      let invoices = await adminInvoicesOf(user.accountId);
      expect(invoices).toHaveLength(2);
      expect(invoices.every((invoice) => invoice.total_usd === 2.5)).toBe(true);
      const subscription = await setup.gateway.admin<{ paid_through: string; cancel_at: string; renews: boolean }>('GET', `/admin/subscriptions/${chosen.body.subscription.id}`);
      expect(Date.parse(subscription.body.paid_through)).toBe(firstEnd + 7 * DAY_MS);
      expect(subscription.body).toMatchObject({ renews: true, cancel_at: subscription.body.paid_through });

      // The third week: 1 USD left, the plan costs 2.5: refused, retried, and the subscription stops when the week ends.
      setup.shift.offset = firstEnd + 7 * DAY_MS - 10 * 60_000 - Date.now();
      expect((await renewals.renewDue()).refused).toBeGreaterThanOrEqual(1);
      setup.shift.offset = firstEnd + 7 * DAY_MS + 60_000 - Date.now();
      expect((await renewals.renewDue()).lapsed).toBeGreaterThanOrEqual(1);
      expect(await balanceOf(setup.gateway, user.accountId)).toBe(1);
      invoices = await adminInvoicesOf(user.accountId);
      expect(invoices).toHaveLength(2);
      const lapsed = await setup.gateway.admin('GET', `/admin/subscriptions/${chosen.body.subscription.id}`);
      expect(lapsed.body).toMatchObject({ status: 'cancelled', renews: false });
      await expectLedgerBalanced(setup.gateway);
    } finally {
      setup.shift.offset = 0;
    }
    // Back at the real time, the console (a new session) shows the plan stopped and offers it again.
    const plans = await user.client.request<PlansAnswer>('GET', '/api/console/plans');
    expect(plans.body.offered.some((plan) => plan.current)).toBe(false);
  });
});
