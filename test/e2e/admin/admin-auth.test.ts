/**
 * Every /admin/* route wants `Authorization: Bearer <ADMIN_TOKEN>`; a missing or wrong token
 * answers 401 with the gateway's error object and changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { admin, call, expectError } from './helpers.js';

let gateway: TestGateway;
let seeded: SeededAccount;

beforeAll(async () => {
  gateway = await startTestGateway();
  seeded = await seedAccount(gateway, { balanceUsd: 5 });
});

afterAll(async () => {
  await gateway?.close();
});

/** One route of each admin family, with a body where the route takes one. */
function adminRoutes(): Array<[string, string, unknown?]> {
  return [
    ['GET', '/admin/channels'],
    ['POST', '/admin/channels', { name: 'auth-probe', type: 'simulator', models: ['x'] }],
    ['GET', '/admin/channels/ch_unknown'],
    ['PATCH', '/admin/channels/ch_unknown', { enabled: false }],
    ['DELETE', '/admin/channels/ch_unknown'],
    ['GET', '/admin/models'],
    ['POST', '/admin/models', { id: 'auth-probe-model', pricing: {} }],
    ['GET', '/admin/models/gpt-4o'],
    ['PATCH', '/admin/models/gpt-4o', { public: false }],
    ['DELETE', '/admin/models/gpt-4o'],
    ['GET', '/admin/accounts'],
    ['POST', '/admin/accounts', { email: 'auth-probe@example.com' }],
    ['GET', `/admin/accounts/${seeded.accountId}`],
    ['PATCH', `/admin/accounts/${seeded.accountId}`, { tier: 'gold' }],
    ['POST', `/admin/accounts/${seeded.accountId}/credits`, { amount_usd: 1000 }],
    ['GET', `/admin/accounts/${seeded.accountId}/ledger`],
    ['POST', `/admin/accounts/${seeded.accountId}/keys`, {}],
    ['GET', `/admin/accounts/${seeded.accountId}/keys`],
    ['POST', `/admin/accounts/${seeded.accountId}/subscriptions`, { plan_id: 'plan_x' }],
    ['GET', `/admin/keys/${seeded.keyId}`],
    ['PATCH', `/admin/keys/${seeded.keyId}`, { status: 'revoked' }],
    ['GET', '/admin/plans'],
    ['POST', '/admin/plans', { name: 'auth-probe', period: 'month', quota_usd: 1, overage: { policy: 'deny' } }],
    ['GET', '/admin/plans/plan_x'],
    ['PATCH', '/admin/plans/plan_x', { quota_usd: 2 }],
    ['GET', '/admin/usage'],
    ['GET', '/admin/announcements'],
    ['POST', '/admin/announcements', { title: 'auth probe' }],
    ['DELETE', '/admin/announcements/ann_x'],
    ['PUT', '/admin/fx', { rates: { JPY: 1, CNY: 1, EUR: 1 } }],
  ];
}

describe('admin authentication', () => {
  const badCredentials: Array<[string, Record<string, string>]> = [
    ['no Authorization header', {}],
    ['a wrong bearer token', { authorization: 'Bearer adm_wrong_token_0123456789' }],
    ['an empty bearer token', { authorization: 'Bearer ' }],
    ['the admin token in another scheme', { authorization: 'Basic PLACEHOLDER' }],
    ['the admin token as x-api-key', { 'x-api-key': 'PLACEHOLDER' }],
  ];

  it.each(badCredentials)('refuses %s on every admin route family with 401 and the error object', async (_label, template) => {
    const headers = Object.fromEntries(Object.entries(template).map(([name, value]) => [name, value.replace('PLACEHOLDER', gateway.adminToken)]));
    for (const [method, route, body] of adminRoutes()) {
      const answer = await call(gateway.url, method, route, { headers, ...(body === undefined ? {} : { body }) });
      const error = expectError(answer, { status: 401 });
      expect(error.type, `${method} ${route}`).toBe('authentication_error');
      expect(error.message).not.toContain(gateway.adminToken);
    }
  });

  it('refuses a client API key as admin token', async () => {
    const answer = await call(gateway.url, 'GET', '/admin/channels', { token: seeded.key });
    expectError(answer, { status: 401 });
  });

  it('refuses a token that only differs in case or has extra characters', async () => {
    for (const token of [gateway.adminToken.toUpperCase(), `${gateway.adminToken}x`, gateway.adminToken.slice(0, -1)]) {
      expectError(await call(gateway.url, 'GET', '/admin/accounts', { token }), { status: 401 });
    }
  });

  it('changes nothing when the token is wrong', async () => {
    const token = 'adm_wrong_token_0123456789';
    for (const [method, route, body] of adminRoutes()) {
      await call(gateway.url, method, route, { token, ...(body === undefined ? {} : { body }) });
    }
    const channels = await admin<{ data: Array<{ name: string }> }>(gateway, 'GET', '/admin/channels');
    expect(channels.body.data.map((channel) => channel.name)).not.toContain('auth-probe');
    const account = await admin<{ balance_usd: number; tier: string }>(gateway, 'GET', `/admin/accounts/${seeded.accountId}`);
    expect(account.body.balance_usd).toBe(5);
    expect(account.body.tier).toBe('default');
    const key = await admin<{ status: string }>(gateway, 'GET', `/admin/keys/${seeded.keyId}`);
    expect(key.body.status).toBe('enabled');
    const plans = await admin<{ data: unknown[] }>(gateway, 'GET', '/admin/plans');
    expect(plans.body.data).toEqual([]);
    expectError(await call(gateway.url, 'GET', '/api/fx/latest'), { status: 503 });
  });

  it('accepts the admin token (any case of "Bearer")', async () => {
    const answer = await call(gateway.url, 'GET', '/admin/channels', { headers: { authorization: `bearer ${gateway.adminToken}` } });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ object: 'list', data: [] });
  });

  it('answers unknown admin paths with an error object, not a stack trace', async () => {
    const answer = await admin(gateway, 'GET', '/admin/no-such-thing');
    expectError(answer, { status: 404 });
  });
});
