/** /admin/plans and /admin/accounts/:id/subscriptions. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { admin, collectPages, expectError, uniqueName } from './helpers.js';

interface PlanJson {
  id: string;
  name: string;
  period: string;
  quota_usd: number;
  overage: { policy: string; limit_usd: number | null };
  rpm: number | null;
  tpm: number | null;
}

interface SubscriptionJson {
  id: string;
  account_id: string;
  plan_id: string;
  status: string;
  starts_at: string;
  current_period: { start: string; end: string };
  quota_usd: number;
  used_usd: number;
  remaining_usd: number;
}

const DAY_MS = 86_400_000;

let gateway: TestGateway;

beforeAll(async () => {
  gateway = await startTestGateway();
});

afterAll(async () => {
  await gateway?.close();
});

async function createPlan(body: Record<string, unknown>): Promise<PlanJson> {
  const answer = await admin<PlanJson>(gateway, 'POST', '/admin/plans', { name: uniqueName('plan'), ...body });
  expect(answer.status, answer.text).toBe(201);
  return answer.body;
}

async function createAccount(): Promise<string> {
  const answer = await admin<{ id: string }>(gateway, 'POST', '/admin/accounts', { email: `${uniqueName('sub')}@example.com` });
  expect(answer.status).toBe(201);
  return answer.body.id;
}

describe('plans', () => {
  it('creates plans with each overage policy, lists, gets and patches them', async () => {
    const deny = await createPlan({ period: 'month', quota_usd: 20, overage: { policy: 'deny' }, rpm: 60, tpm: 100000 });
    expect(deny).toMatchObject({ period: 'month', quota_usd: 20, overage: { policy: 'deny' }, rpm: 60, tpm: 100000 });
    expect(typeof deny.id).toBe('string');
    const limit = await createPlan({ period: 'week', quota_usd: 4.99, overage: { policy: 'limit', limit_usd: 2.5 } });
    expect(limit).toMatchObject({ period: 'week', quota_usd: 4.99, overage: { policy: 'limit', limit_usd: 2.5 } });
    const payg = await createPlan({ period: 'day', quota_usd: 0.1, overage: { policy: 'payg' } });
    expect(payg).toMatchObject({ period: 'day', quota_usd: 0.1, overage: { policy: 'payg' } });

    const { items } = await collectPages<PlanJson>(gateway, '/admin/plans', 2);
    const ids = items.map((plan) => plan.id);
    for (const plan of [deny, limit, payg]) expect(ids).toContain(plan.id);
    expect(new Set(ids).size).toBe(ids.length);

    const got = await admin<PlanJson>(gateway, 'GET', `/admin/plans/${limit.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id: limit.id, name: limit.name, quota_usd: 4.99, overage: { policy: 'limit', limit_usd: 2.5 } });

    const patched = await admin<PlanJson>(gateway, 'PATCH', `/admin/plans/${limit.id}`, { quota_usd: 0.3, overage: { policy: 'payg' }, rpm: 10 });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ id: limit.id, quota_usd: 0.3, overage: { policy: 'payg' }, rpm: 10, period: 'week' });
    const regot = await admin<PlanJson>(gateway, 'GET', `/admin/plans/${limit.id}`);
    expect(regot.body).toMatchObject({ quota_usd: 0.3, overage: { policy: 'payg' }, rpm: 10 });
  });

  it('validates plans (400 naming the field)', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ period: 'month', quota_usd: 5, overage: { policy: 'limit' } }, 'overage.limit_usd'],
      [{ period: 'year', quota_usd: 5, overage: { policy: 'deny' } }, 'period'],
      [{ quota_usd: 5, overage: { policy: 'deny' } }, 'period'],
      [{ period: 'month', quota_usd: -5, overage: { policy: 'deny' } }, 'quota_usd'],
      [{ period: 'month', overage: { policy: 'deny' } }, 'quota_usd'],
      [{ period: 'month', quota_usd: 5, overage: { policy: 'forgive' } }, 'overage.policy'],
      [{ period: 'month', quota_usd: 5 }, 'overage'],
      [{ period: 'month', quota_usd: 5, overage: { policy: 'limit', limit_usd: -1 } }, 'overage.limit_usd'],
      [{ period: 'month', quota_usd: 5, overage: { policy: 'deny' }, rpm: 0 }, 'rpm'],
    ];
    for (const [body, param] of cases) {
      expectError(await admin(gateway, 'POST', '/admin/plans', { name: uniqueName('invalid'), ...body }), { status: 400, param });
    }
    expectError(await admin(gateway, 'POST', '/admin/plans', { period: 'month', quota_usd: 5, overage: { policy: 'deny' } }), { status: 400, param: 'name' });
    const plan = await createPlan({ period: 'month', quota_usd: 1, overage: { policy: 'deny' } });
    expectError(await admin(gateway, 'PATCH', `/admin/plans/${plan.id}`, { overage: { policy: 'limit' } }), { status: 400, param: 'overage.limit_usd' });
    expect((await admin<PlanJson>(gateway, 'GET', `/admin/plans/${plan.id}`)).body.overage.policy).toBe('deny');
  });

  it('refuses a duplicate plan name (409) and unknown plan ids (404)', async () => {
    const plan = await createPlan({ period: 'month', quota_usd: 1, overage: { policy: 'deny' } });
    expectError(await admin(gateway, 'POST', '/admin/plans', { name: plan.name, period: 'day', quota_usd: 2, overage: { policy: 'payg' } }), { status: 409 });
    expectError(await admin(gateway, 'GET', '/admin/plans/plan_doesnotexist'), { status: 404 });
    expectError(await admin(gateway, 'PATCH', '/admin/plans/plan_doesnotexist', { quota_usd: 1 }), { status: 404 });
  });
});

describe('subscriptions', () => {
  it('subscribing answers the current period and the remaining quota; GET account shows it', async () => {
    const plan = await createPlan({ period: 'month', quota_usd: 25.5, overage: { policy: 'payg' } });
    const accountId = await createAccount();
    const before = Date.now();
    const answer = await admin<SubscriptionJson>(gateway, 'POST', `/admin/accounts/${accountId}/subscriptions`, { plan_id: plan.id });
    expect(answer.status, answer.text).toBe(201);
    const subscription = answer.body;
    expect(subscription).toMatchObject({ account_id: accountId, plan_id: plan.id, status: 'active', quota_usd: 25.5, used_usd: 0, remaining_usd: 25.5 });
    const start = Date.parse(subscription.current_period.start);
    const end = Date.parse(subscription.current_period.end);
    expect(start).toBeLessThanOrEqual(Date.now());
    expect(start).toBeGreaterThanOrEqual(before - 1000);
    expect(end).toBeGreaterThan(Date.now());
    // A calendar month is 28 to 31 days.
    expect(end - start).toBeGreaterThanOrEqual(28 * DAY_MS);
    expect(end - start).toBeLessThanOrEqual(31 * DAY_MS);

    const account = await admin<{ subscriptions: SubscriptionJson[] }>(gateway, 'GET', `/admin/accounts/${accountId}`);
    expect(account.status).toBe(200);
    expect(account.body.subscriptions).toHaveLength(1);
    expect(account.body.subscriptions[0]).toMatchObject({
      id: subscription.id, plan_id: plan.id, remaining_usd: 25.5, current_period: subscription.current_period,
    });
  });

  it('a subscription that started in the past is in the period that contains now', async () => {
    const weekly = await createPlan({ period: 'week', quota_usd: 3, overage: { policy: 'deny' } });
    const daily = await createPlan({ period: 'day', quota_usd: 0.5, overage: { policy: 'limit', limit_usd: 0.25 } });
    const accountId = await createAccount();
    const startsAt = Math.floor(Date.now() / 1000) - 17 * 86_400 - 3600;

    const week = await admin<SubscriptionJson>(gateway, 'POST', `/admin/accounts/${accountId}/subscriptions`, { plan_id: weekly.id, starts_at: startsAt });
    expect(week.status, week.text).toBe(201);
    expect(Date.parse(week.body.starts_at)).toBe(startsAt * 1000);
    const weekStart = Date.parse(week.body.current_period.start);
    const weekEnd = Date.parse(week.body.current_period.end);
    expect(weekEnd - weekStart).toBe(7 * DAY_MS);
    expect(weekStart).toBeLessThanOrEqual(Date.now());
    expect(weekEnd).toBeGreaterThan(Date.now());
    expect((weekStart - startsAt * 1000) % (7 * DAY_MS)).toBe(0);

    const day = await admin<SubscriptionJson>(gateway, 'POST', `/admin/accounts/${accountId}/subscriptions`, { plan_id: daily.id, starts_at: new Date(startsAt * 1000).toISOString() });
    expect(day.status, day.text).toBe(201);
    const dayStart = Date.parse(day.body.current_period.start);
    const dayEnd = Date.parse(day.body.current_period.end);
    expect(dayEnd - dayStart).toBe(DAY_MS);
    expect(dayStart).toBeLessThanOrEqual(Date.now());
    expect(dayEnd).toBeGreaterThan(Date.now());
    expect(day.body.remaining_usd).toBe(0.5);

    const account = await admin<{ subscriptions: SubscriptionJson[] }>(gateway, 'GET', `/admin/accounts/${accountId}`);
    expect(account.body.subscriptions.map((item) => item.plan_id).sort()).toEqual([weekly.id, daily.id].sort());
  });

  it('refuses an unknown plan (400 plan_id), an unknown account (404) and a missing plan_id (400)', async () => {
    const plan = await createPlan({ period: 'month', quota_usd: 1, overage: { policy: 'deny' } });
    const accountId = await createAccount();
    expectError(await admin(gateway, 'POST', `/admin/accounts/${accountId}/subscriptions`, { plan_id: 'plan_doesnotexist' }), { status: 400, param: 'plan_id' });
    expectError(await admin(gateway, 'POST', `/admin/accounts/${accountId}/subscriptions`, {}), { status: 400, param: 'plan_id' });
    expectError(await admin(gateway, 'POST', `/admin/accounts/${accountId}/subscriptions`, { plan_id: plan.id, starts_at: 'soon' }), { status: 400, param: 'starts_at' });
    expectError(await admin(gateway, 'POST', '/admin/accounts/acct_doesnotexist/subscriptions', { plan_id: plan.id }), { status: 404 });
    expect((await admin<{ subscriptions: unknown[] }>(gateway, 'GET', `/admin/accounts/${accountId}`)).body.subscriptions).toEqual([]);
  });
});
