/**
 * PATCH /admin/accounts/:id limits and status, DELETE /admin/accounts/:id, and `unigate accounts …`: per-account
 * RPM/TPM/concurrency over the tier's (null returns to it) with the effective limits and their source; a disabled
 * account's keys answer 403 and a stream already admitted ends with that error, billed for what it delivered;
 * enabling restores everything; deleting revokes keys, erases personal data, keeps the books balancing and is safe to repeat. SQLite by default,
 * PostgreSQL with TEST_DATABASE_URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkLedger } from '../../../src/billing/ledger-check.js';
import type { AccountLifecycleEvent } from '../../../src/management/account-lifecycle.js';
import { ManualClock } from '../../../src/shared/clock.js';
import { DEFAULT_TIER_RPM, DEFAULT_TIER_TPM } from '../../../src/storage/migrations/0007-account-lifecycle-and-key-budgets.js';
import { flushWrites, seedAccount, startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { chatWith, expectOk, expectRateLimited, MINUTE, nextWindow, rateLimitHeadersOf } from '../limits/limits-support.js';
import { addSimulatorModel, admin, call, expectError } from './helpers.js';

const FAST = 'lifecycle-fast';
const STREAMY = 'lifecycle-streamy';

let gateway: TestGateway;
const clock = new ManualClock(Math.floor(Date.now() / MINUTE) * MINUTE);
const events: Array<[AccountLifecycleEvent, string]> = [];

beforeAll(async () => {
  gateway = await startTestGateway({ clock });
  await addSimulatorModel(gateway, FAST, undefined, { settings: { output_tokens: 8 } });
  await addSimulatorModel(gateway, STREAMY, undefined, { settings: { output_tokens: 40, chunk_delay_ms: 40 } });
  gateway.gateway.services.accountLifecycle.onChange((event, account) => {
    events.push([event, account.id]);
  });
});

afterAll(async () => {
  await gateway?.close();
});

interface AccountJson {
  id: string;
  email: string;
  status: string;
  rpm: number | null;
  tpm: number | null;
  concurrency: number | null;
  deleted_at: string | null;
  effective_limits: Record<'rpm' | 'tpm' | 'concurrency', { value: number | null; source: string }>;
}

async function patchAccount(accountId: string, body: Record<string, unknown>): Promise<AccountJson> {
  const answer = await admin<AccountJson>(gateway, 'PATCH', `/admin/accounts/${accountId}`, body);
  expect(answer.status, answer.text).toBe(200);
  return answer.body;
}

describe('per-account limits', () => {
  it('override the tier\'s, show where each effective limit comes from, and null returns to the tier', async () => {
    const { accountId, key } = await seedAccount(gateway);
    const fresh = (await admin<AccountJson>(gateway, 'GET', `/admin/accounts/${accountId}`)).body;
    expect(fresh.effective_limits).toEqual({
      rpm: { value: DEFAULT_TIER_RPM, source: 'tier' }, tpm: { value: DEFAULT_TIER_TPM, source: 'tier' }, concurrency: { value: null, source: 'none' },
    });
    const patched = await patchAccount(accountId, { rpm: 2, tpm: 50_000, concurrency: 3 });
    expect(patched).toMatchObject({ rpm: 2, tpm: 50_000, concurrency: 3 });
    expect(patched.effective_limits).toEqual({ rpm: { value: 2, source: 'account' }, tpm: { value: 50_000, source: 'account' }, concurrency: { value: 3, source: 'account' } });

    const start = nextWindow(clock, 1000);
    const first = await chatWith(gateway, key, { model: FAST });
    expectOk(first);
    expect(rateLimitHeadersOf(first)).toEqual({ limit: 2, remaining: 1, reset: (start + MINUTE) / 1000, dimension: 'account-rpm' });
    expectOk(await chatWith(gateway, key, { model: FAST }));
    expectRateLimited(await chatWith(gateway, key, { model: FAST }), 'account-rpm');

    const back = await patchAccount(accountId, { rpm: null, tpm: null, concurrency: null });
    expect(back.effective_limits.rpm).toEqual({ value: DEFAULT_TIER_RPM, source: 'tier' });
    expect(back.effective_limits.concurrency).toEqual({ value: null, source: 'none' });
    expectOk(await chatWith(gateway, key, { model: FAST }));
  });

  it('account concurrency counts requests in flight across all its keys', async () => {
    const { accountId, key } = await seedAccount(gateway);
    const other = await admin<{ key: string }>(gateway, 'POST', `/admin/accounts/${accountId}/keys`, {});
    await patchAccount(accountId, { concurrency: 1 });
    nextWindow(clock, 1000);
    const streaming = await fetch(`${gateway.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: STREAMY, stream: true, messages: [{ role: 'user', content: 'long' }] }),
    });
    expect(streaming.status).toBe(200);
    const refused = await chatWith(gateway, other.body.key, { model: FAST });
    expect(expectError(refused, { status: 429, code: 'rate_limit_exceeded' }).message).toContain('account');
    await streaming.text();
    expectOk(await chatWith(gateway, other.body.key, { model: FAST }));
  });

  it('takes the alert thresholds', async () => {
    const { accountId } = await seedAccount(gateway);
    await patchAccount(accountId, { alert_balance_usd: 2.5, alert_quota_percent: 80 });
    const alerts = await admin(gateway, 'GET', `/admin/accounts/${accountId}/alerts`);
    expect(alerts.body).toMatchObject({ alert_balance_usd: 2.5, alert_quota_percent: 80 });
  });
});

describe('disabling', () => {
  it('refuses every key with 403, ends an admitted stream with its error event and bills what it delivered, and enabling restores everything', async () => {
    const { accountId, key, keyId } = await seedAccount(gateway);
    nextWindow(clock, 1000);
    const streaming = await fetch(`${gateway.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: STREAMY, stream: true, messages: [{ role: 'user', content: 'keep going' }] }),
    });
    expect(streaming.status).toBe(200);
    const requestId = streaming.headers.get('x-request-id');

    expect((await patchAccount(accountId, { status: 'disabled' })).status).toBe('disabled');
    expect(events).toContainEqual(['disabled', accountId]);
    const refused = await chatWith(gateway, key, { model: FAST });
    expect(expectError(refused, { status: 403, type: 'permission_error', code: 'account_disabled' }).message).toMatch(/account .* is disabled/);
    const messages = await call(gateway.url, 'POST', '/v1/messages', {
      headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' },
      body: { model: FAST, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(messages.status).toBe(403);
    expect((await admin<{ status: string }>(gateway, 'GET', `/admin/keys/${keyId}`)).body.status).toBe('disabled');

    // The stream admitted before the change ends at once with the refusal as its error event, billed for what it
    // delivered (test/e2e/resilience/stream-stop.test.ts times it).
    const body = await streaming.text();
    expect(body).not.toContain('[DONE]');
    expect(body).toContain('"code":"account_disabled"');
    await flushWrites(gateway);
    const ledger = await admin<{ data: Array<{ request_id: string | null; amount_usd: number }> }>(gateway, 'GET', `/admin/accounts/${accountId}/ledger`);
    const charge = ledger.body.data.find((entry) => entry.request_id === requestId);
    expect(charge?.amount_usd).toBeLessThan(0);

    expect((await patchAccount(accountId, { status: 'enabled' })).status).toBe('enabled');
    expectOk(await chatWith(gateway, key, { model: FAST }));
    expect((await admin<{ status: string }>(gateway, 'GET', `/admin/keys/${keyId}`)).body.status).toBe('enabled');
    // Repeating a status change is harmless.
    expect((await patchAccount(accountId, { status: 'enabled' })).status).toBe('enabled');
  });
});

describe('deleting', () => {
  it('revokes keys, erases personal data, keeps the books balancing, and is safe to repeat', async () => {
    const email = `to-delete-${Date.now()}@example.com`;
    const { accountId, key, keyId } = await seedAccount(gateway, { email, balanceUsd: 5 });
    await patchAccount(accountId, { alert_balance_usd: 1, password: 'correct horse battery' });
    nextWindow(clock, 1000);
    const used = await chatWith(gateway, key, { model: FAST });
    expectOk(used);
    await flushWrites(gateway);

    const deleted = await admin<AccountJson>(gateway, 'DELETE', `/admin/accounts/${accountId}`);
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body).toMatchObject({ id: accountId, status: 'deleted' });
    expect(deleted.body.email).not.toContain('to-delete');
    expect(deleted.body.deleted_at).not.toBeNull();
    expect(events).toContainEqual(['deleted', accountId]);

    expectError(await chatWith(gateway, key, { model: FAST }), { status: 401, code: 'revoked_api_key' });
    expect((await admin<{ status: string }>(gateway, 'GET', `/admin/keys/${keyId}`)).body.status).toBe('revoked');

    // In the database: the row stays with a pseudonym and no personal data; keys revoked; ledger and usage kept.
    const storage = gateway.gateway.services.storage;
    const row = await storage.accounts.getById(accountId);
    expect(row).toMatchObject({ status: 'deleted', passwordHash: null, alertBalanceNano: null });
    expect(row?.email).toBe(`deleted+${accountId}@deleted.invalid`);
    expect(await storage.accounts.getByEmail(email)).toBeNull();
    const keys = await storage.keys.listByAccount(accountId, { limit: 10 });
    expect(keys.data.map((stored) => stored.status)).toEqual(['revoked']);
    const entries = await storage.ledger.listByAccount(accountId, { limit: 10 });
    expect(entries.data.map((entry) => entry.kind).sort()).toEqual(['topup', 'usage']);
    const usage = await admin<{ data: Array<{ request_id: string }> }>(gateway, 'GET', `/admin/usage?account_id=${accountId}`);
    expect(usage.body.data.map((entry) => entry.request_id)).toContain(used.headers.get('x-request-id'));
    expect((await checkLedger(storage, accountId)).problems).toEqual([]);

    // Safe to repeat; nothing about it can be changed or funded any more; the email is free again.
    const again = await admin<AccountJson>(gateway, 'DELETE', `/admin/accounts/${accountId}`);
    expect(again.status).toBe(200);
    expect(again.body.deleted_at).toBe(deleted.body.deleted_at);
    expectError(await admin(gateway, 'PATCH', `/admin/accounts/${accountId}`, { status: 'enabled' }), { status: 409 });
    expectError(await admin(gateway, 'POST', `/admin/accounts/${accountId}/credits`, { amount_usd: 1 }), { status: 409 });
    expectError(await admin(gateway, 'POST', `/admin/accounts/${accountId}/keys`, {}), { status: 409 });
    expect((await admin(gateway, 'POST', '/admin/accounts', { email })).status).toBe(201);
    expectError(await admin(gateway, 'DELETE', '/admin/accounts/acct_missing'), { status: 404 });
  });
});
