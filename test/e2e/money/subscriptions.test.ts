/**
 * Subscriptions with an injected clock: quota consumed before the wallet, each overage policy (deny, limit, payg),
 * rollover at the period's end, plan change and cancellation (admin), plan RPM, and the credit_grants balance
 * query read through the official OpenAI SDK. The ledger check passes after every step.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/shared/clock.js';
import { flushWrites, startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { addSimulatorModel, admin, expectError, uniqueName, type HttpAnswer } from '../admin/helpers.js';
import { call } from '../admin/helpers.js';

const DAY = 86_400_000;
const MODEL = 'subs-model';
const START = Date.UTC(2030, 0, 1, 0, 0, 0);

interface SubscriptionJson {
  id: string;
  status: string;
  used_usd: number;
  remaining_usd: number;
  plan_id: string;
  cancel_at: string | null;
  current_period: { start: string; end: string } | null;
  overage: { policy: string; limit_usd: number | null; used_usd: number };
}

let gateway: TestGateway;
const clock = new ManualClock(START);

beforeAll(async () => {
  gateway = await startTestGateway({ clock });
  // One token costs 0.001 USD; a request with max_tokens 10 holds about 0.02 USD and costs about 0.015.
  await addSimulatorModel(gateway, MODEL, { input_per_mtok: 1000, output_per_mtok: 1000 }, { settings: { output_tokens: 10 } });
});

afterAll(async () => {
  await gateway?.close();
});

async function setUp(plan: Record<string, unknown>, walletUsd: number): Promise<{ accountId: string; key: string; subscription: SubscriptionJson; planId: string }> {
  const created = await admin<{ id: string }>(gateway, 'POST', '/admin/plans', { name: uniqueName('plan'), period: 'day', ...plan });
  expect(created.status, created.text).toBe(201);
  const account = await admin<{ id: string }>(gateway, 'POST', '/admin/accounts', { email: `${uniqueName('subs')}@example.com` });
  if (walletUsd > 0) expect((await admin(gateway, 'POST', `/admin/accounts/${account.body.id}/credits`, { amount_usd: walletUsd })).status).toBe(200);
  const key = await admin<{ key: string }>(gateway, 'POST', `/admin/accounts/${account.body.id}/keys`, {});
  const subscription = await admin<SubscriptionJson>(gateway, 'POST', `/admin/accounts/${account.body.id}/subscriptions`, { plan_id: created.body.id });
  expect(subscription.status, subscription.text).toBe(201);
  return { accountId: account.body.id, key: key.body.key, subscription: subscription.body, planId: created.body.id };
}

function ask(key: string): Promise<HttpAnswer> {
  return call(gateway.url, 'POST', '/v1/chat/completions', { token: key, body: { model: MODEL, messages: [{ role: 'user', content: 'quota please' }], max_tokens: 10 } });
}

/** Sends until the first refusal (bounded); returns how many were answered and the refusal. */
async function exhaust(key: string, limit = 40): Promise<{ answered: number; refusal: HttpAnswer | null }> {
  for (let answered = 0; answered < limit; answered += 1) {
    const answer = await ask(key);
    if (answer.status !== 200) return { answered, refusal: answer };
  }
  return { answered: limit, refusal: null };
}

async function balance(accountId: string): Promise<number> {
  return (await admin<{ balance_usd: number }>(gateway, 'GET', `/admin/accounts/${accountId}`)).body.balance_usd;
}

async function subscription(id: string): Promise<SubscriptionJson> {
  const answer = await admin<SubscriptionJson>(gateway, 'GET', `/admin/subscriptions/${id}`);
  expect(answer.status, answer.text).toBe(200);
  return answer.body;
}

async function expectBooksBalance(accountId: string): Promise<void> {
  await flushWrites(gateway);
  const check = await admin<{ ok: boolean; problems: unknown[] }>(gateway, 'GET', `/admin/ledger/check?account_id=${accountId}`);
  expect(check.body.problems, JSON.stringify(check.body.problems)).toEqual([]);
  expect(check.body.ok).toBe(true);
}

describe('subscriptions', () => {
  it('deny: the quota pays, the wallet never does; 429 quota_exhausted when used; a new period starts afresh', async () => {
    const { accountId, key, subscription: created } = await setUp({ quota_usd: 0.1, overage: { policy: 'deny' } }, 1);
    const { answered, refusal } = await exhaust(key);
    expect(answered).toBeGreaterThan(2);
    expect(refusal).not.toBeNull();
    expectError(refusal as HttpAnswer, { status: 429, type: 'rate_limit_error', code: 'quota_exhausted' });
    await flushWrites(gateway);
    expect(await balance(accountId)).toBe(1);
    const used = await subscription(created.id);
    const periodEnd = Date.parse(used.current_period?.end ?? '');
    // Retry-After is the wait until the period resets, whether storage or this instance's cached facts refused it.
    expect(refusal?.headers.get('retry-after')).toBe(String(Math.ceil((periodEnd - clock.now()) / 1000)));
    const again = await ask(key);
    expectError(again, { status: 429, code: 'quota_exhausted' });
    expect(again.headers.get('retry-after')).toBe(String(Math.ceil((periodEnd - clock.now()) / 1000)));
    expect(used.used_usd).toBeGreaterThan(0.08);
    expect(used.used_usd).toBeLessThanOrEqual(0.1);
    await expectBooksBalance(accountId);

    // Still the same day: refused until the period ends, a second from now. The next day: a new period with nothing used.
    clock.advance(periodEnd - 1000 - clock.now());
    const lastSecond = await ask(key);
    expectError(lastSecond, { status: 429, code: 'quota_exhausted' });
    expect(lastSecond.headers.get('retry-after')).toBe('1');
    clock.advance(1000);
    expect((await subscription(created.id)).used_usd).toBe(0);
    expect((await ask(key)).status).toBe(200);
    await flushWrites(gateway);
    const rolled = await subscription(created.id);
    expect(rolled.used_usd).toBeGreaterThan(0);
    expect(rolled.used_usd).toBeLessThan(0.05);
    expect(rolled.current_period?.start).toBe(new Date(Date.parse(used.current_period?.start ?? '') + DAY).toISOString());
    expect(await balance(accountId)).toBe(1);
    await expectBooksBalance(accountId);
  });

  it('limit: the wallet pays overage up to the limit, then 429 quota_exhausted', async () => {
    const { accountId, key, subscription: created } = await setUp({ quota_usd: 0.05, overage: { policy: 'limit', limit_usd: 0.05 } }, 1);
    const { answered, refusal } = await exhaust(key);
    expect(answered).toBeGreaterThan(4);
    expectError(refusal as HttpAnswer, { status: 429, code: 'quota_exhausted' });
    await flushWrites(gateway);
    const state = await subscription(created.id);
    expect(refusal?.headers.get('retry-after')).toBe(String(Math.ceil((Date.parse(state.current_period?.end ?? '') - clock.now()) / 1000)));
    expect(state.used_usd).toBeLessThanOrEqual(0.05);
    expect(state.overage.used_usd).toBeGreaterThan(0.02);
    expect(state.overage.used_usd).toBeLessThanOrEqual(0.05);
    // The overage is exactly what left the wallet.
    expect(Math.round((1 - (await balance(accountId))) * 1e9)).toBe(Math.round(state.overage.used_usd * 1e9));
    await expectBooksBalance(accountId);
  });

  it('payg: after the quota the wallet pays until it is empty (402 insufficient_balance)', async () => {
    const { accountId, key, subscription: created } = await setUp({ quota_usd: 0.05, overage: { policy: 'payg' } }, 0.05);
    const { answered, refusal } = await exhaust(key);
    expect(answered).toBeGreaterThan(4);
    expectError(refusal as HttpAnswer, { status: 402, code: 'insufficient_balance' });
    await flushWrites(gateway);
    expect((await subscription(created.id)).used_usd).toBeGreaterThan(0.03);
    const left = await balance(accountId);
    expect(left).toBeGreaterThanOrEqual(0);
    expect(left).toBeLessThan(0.03);
    await expectBooksBalance(accountId);
  });

  it('plan change keeps the period and its usage (same length) or starts a new one; cancellation at period end or now', async () => {
    const { accountId, key, subscription: created } = await setUp({ quota_usd: 0.05, overage: { policy: 'deny' } }, 1);
    await exhaust(key);
    await flushWrites(gateway);
    const before = await subscription(created.id);
    const bigger = await admin<{ id: string }>(gateway, 'POST', '/admin/plans', { name: uniqueName('plan'), period: 'day', quota_usd: 0.2, overage: { policy: 'deny' } });
    const upgraded = await admin<SubscriptionJson>(gateway, 'PATCH', `/admin/subscriptions/${created.id}`, { plan_id: bigger.body.id });
    expect(upgraded.status, upgraded.text).toBe(200);
    expect(upgraded.body).toMatchObject({ plan_id: bigger.body.id, used_usd: before.used_usd, current_period: before.current_period });
    expect((await ask(key)).status).toBe(200);

    clock.advance(1000);
    const weekly = await admin<{ id: string }>(gateway, 'POST', '/admin/plans', { name: uniqueName('plan'), period: 'week', quota_usd: 0.2, overage: { policy: 'deny' } });
    const switched = await admin<SubscriptionJson>(gateway, 'PATCH', `/admin/subscriptions/${created.id}`, { plan_id: weekly.body.id });
    expect(switched.body.used_usd).toBe(0);
    expect(switched.body.current_period?.start).toBe(new Date(clock.now()).toISOString());
    expectError(await admin(gateway, 'PATCH', `/admin/subscriptions/${created.id}`, { plan_id: 'plan_missing' }), { status: 400, param: 'plan_id' });
    expectError(await admin(gateway, 'PATCH', `/admin/subscriptions/sub_missing`, { plan_id: weekly.body.id }), { status: 404 });

    const scheduled = await admin<SubscriptionJson>(gateway, 'POST', `/admin/subscriptions/${created.id}/cancel`, { at: 'period_end' });
    expect(scheduled.body).toMatchObject({ status: 'active', cancel_at: switched.body.current_period?.end });
    const walletBefore = await balance(accountId);
    expect((await ask(key)).status).toBe(200);
    await flushWrites(gateway);
    expect(await balance(accountId)).toBe(walletBefore);
    clock.advance(7 * DAY);
    expect((await subscription(created.id)).status).toBe('cancelled');
    // No subscription left: the wallet pays.
    expect((await ask(key)).status).toBe(200);
    await flushWrites(gateway);
    expect(await balance(accountId)).toBeLessThan(walletBefore);
    expectError(await admin(gateway, 'POST', `/admin/subscriptions/${created.id}/cancel`, {}), { status: 409 });
    await expectBooksBalance(accountId);

    const again = await setUp({ quota_usd: 1, overage: { policy: 'deny' } }, 0);
    const now = await admin<SubscriptionJson>(gateway, 'POST', `/admin/subscriptions/${again.subscription.id}/cancel`);
    expect(now.body.status).toBe('cancelled');
    expectError(await ask(again.key), { status: 402, code: 'insufficient_balance' });
  });

  it('plan RPM applies as its own limit dimension', async () => {
    const { key } = await setUp({ quota_usd: 1, overage: { policy: 'deny' }, rpm: 2 }, 0);
    expect((await ask(key)).status).toBe(200);
    expect((await ask(key)).status).toBe(200);
    const limited = await ask(key);
    expectError(limited, { status: 429, code: 'rate_limit_exceeded' });
    expect(limited.headers.get('x-ratelimit-dimension')).toBe('plan-rpm');
    clock.advance(60_000);
  });

  it('credit_grants: wallet and subscription grants in the legacy balance shape, read with the OpenAI SDK', async () => {
    const { accountId, key, subscription: created } = await setUp({ quota_usd: 0.5, overage: { policy: 'deny' } }, 2);
    expect((await ask(key)).status).toBe(200);
    await flushWrites(gateway);
    const client = new OpenAI({ apiKey: key, baseURL: gateway.baseURL, maxRetries: 0 });
    const summary = await client.get<{
      object: string; total_granted: number; total_used: number; total_available: number;
      grants: { object: string; data: Array<{ object: string; id: string; grant_amount: number; used_amount: number; effective_at: number; expires_at: number | null }> };
    }>('/dashboard/billing/credit_grants');
    const state = await subscription(created.id);
    expect(summary.object).toBe('credit_summary');
    expect(summary.grants.object).toBe('list');
    expect(summary.grants.data).toHaveLength(2);
    const [wallet, plan] = summary.grants.data;
    expect(wallet).toMatchObject({ object: 'credit_grant', grant_amount: 2, used_amount: 0, expires_at: null });
    expect(plan).toMatchObject({ object: 'credit_grant', id: created.id, grant_amount: 0.5, used_amount: state.used_usd });
    expect(plan?.expires_at).toBe(Date.parse(state.current_period?.end ?? '') / 1000);
    expect(summary.total_granted).toBe(2.5);
    expect(summary.total_used).toBe(state.used_usd);
    // Under `deny` the wallet pays for nothing while the subscription runs: only what is left of the quota is available.
    expect(Math.round(summary.total_available * 1e9)).toBe(Math.round((0.5 - state.used_usd) * 1e9));
    expect(await balance(accountId)).toBe(2);
    // Without a key: the spec's 401.
    expectError(await call(gateway.url, 'GET', '/v1/dashboard/billing/credit_grants'), { status: 401 });
  });

  it.each([
    ['payg', { policy: 'payg' }, 2],
    ['limit', { policy: 'limit', limit_usd: 0.25 }, 0.25],
    ['limit above the balance', { policy: 'limit', limit_usd: 5 }, 2],
  ] as const)('credit_grants counts of the wallet what the overage policy lets the account spend (%s)', async (_name, overage, walletAvailable) => {
    const { key, subscription: created } = await setUp({ quota_usd: 0.5, overage }, 2);
    expect((await ask(key)).status).toBe(200);
    await flushWrites(gateway);
    const summary = (await call<{ total_available: number }>(gateway.url, 'GET', '/v1/dashboard/billing/credit_grants', { token: key })).body;
    const state = await subscription(created.id);
    expect(Math.round(summary.total_available * 1e9)).toBe(Math.round((walletAvailable + 0.5 - state.used_usd) * 1e9));
  });
});
