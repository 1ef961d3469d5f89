/**
 * Redemption codes over the wire: the admin creates a batch (plaintext shown only then), an
 * account redeems with its API key through the openai-style endpoint, reuse is refused, wrong/expired/disabled codes
 * answer their own errors, failed attempts are limited per key (429), the admin can redeem for an account, and
 * balance, ledger and code list agree. Runs on SQLite, and on PostgreSQL with TEST_DATABASE_URL.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { admin, call, collectPages, expectError, uniqueName } from '../admin/helpers.js';

interface CodeJson {
  id: string;
  code?: string;
  hint: string;
  name: string;
  amount_usd: number;
  state: string;
  expires_at: string | null;
  redeemed_by: string | null;
  redeemed_at: string | null;
  ledger_entry_id: string | null;
}

interface LedgerEntryJson {
  id: string;
  kind: string;
  amount_usd: number;
  reason: string | null;
}

let gateway: TestGateway;
/** Each test calls from its own address (X-Forwarded-For behind TRUST_PROXY), so per-IP failure counts stay apart. */
let testNumber = 0;
let clientIp = '';

beforeAll(async () => {
  gateway = await startTestGateway({ env: { TRUST_PROXY: 'all' } });
});

beforeEach(() => {
  testNumber += 1;
  clientIp = `198.51.100.${testNumber}`;
});

afterAll(async () => {
  await gateway?.close();
});

async function newAccount(balanceUsd = 0): Promise<{ id: string; key: string }> {
  const account = await admin<{ id: string }>(gateway, 'POST', '/admin/accounts', { email: `${uniqueName('redeem')}@example.com` });
  expect(account.status, account.text).toBe(201);
  if (balanceUsd !== 0) expect((await admin(gateway, 'POST', `/admin/accounts/${account.body.id}/credits`, { amount_usd: balanceUsd })).status).toBe(200);
  const key = await admin<{ key: string }>(gateway, 'POST', `/admin/accounts/${account.body.id}/keys`, {});
  expect(key.status, key.text).toBe(201);
  return { id: account.body.id, key: key.body.key };
}

async function createCodes(body: Record<string, unknown>): Promise<CodeJson[]> {
  const created = await admin<{ object: string; data: CodeJson[] }>(gateway, 'POST', '/admin/redemption-codes', body);
  expect(created.status, created.text).toBe(201);
  expect(created.body.object).toBe('list');
  return created.body.data;
}

function redeem(key: string | null, code: unknown, headers: Record<string, string> = {}) {
  return call<{ object: string; code_id: string; amount_usd: number; balance_usd: number }>(gateway.url, 'POST', '/v1/dashboard/billing/redeem', { token: key, body: { code }, headers: { 'x-forwarded-for': clientIp, ...headers } });
}

async function balanceOf(accountId: string): Promise<number> {
  const account = await admin<{ balance_usd: number }>(gateway, 'GET', `/admin/accounts/${accountId}`);
  return account.body.balance_usd;
}

async function ledgerOf(accountId: string): Promise<LedgerEntryJson[]> {
  return (await collectPages<LedgerEntryJson>(gateway, `/admin/accounts/${accountId}/ledger`, 100)).items;
}

describe('redemption codes', () => {
  it('are created in a batch, shown in plaintext once, and listed by hint only', async () => {
    const codes = await createCodes({ amount_usd: '2.5', count: 3, name: 'launch', expires_at: new Date(Date.now() + 86_400_000).toISOString() });
    expect(codes).toHaveLength(3);
    for (const code of codes) {
      expect(code.code).toMatch(/^UNIGATE(-[0-9A-HJKMNP-TV-Z]{5}){5}$/);
      expect(code).toMatchObject({ name: 'launch', amount_usd: 2.5, state: 'active', redeemed_by: null, hint: `UNIGATE-…${code.code?.slice(-4)}` });
    }
    expect(new Set(codes.map((code) => code.code)).size).toBe(3);

    const listed = await admin<{ data: CodeJson[] }>(gateway, 'GET', '/admin/redemption-codes?state=active&limit=200');
    expect(listed.status, listed.text).toBe(200);
    for (const code of codes) {
      expect(listed.text).not.toContain(code.code);
      expect(listed.body.data.map((entry) => entry.id)).toContain(code.id);
    }
    const one = await admin<CodeJson>(gateway, 'GET', `/admin/redemption-codes/${codes[0]?.id}`);
    expect(one.status).toBe(200);
    expect(one.body).not.toHaveProperty('code');
    expect(one.text).not.toContain(codes[0]?.code);
  });

  it('top an account up once through its API key; reuse is refused; ledger, balance and list agree', async () => {
    const account = await newAccount(1);
    const [code] = await createCodes({ amount_usd: 5 });
    if (code?.code === undefined) throw new Error('no code');
    // Typed sloppily: lower case and spaces instead of hyphens.
    const typed = code.code.toLowerCase().replace(/-/g, ' ');
    const first = await redeem(account.key, typed);
    expect(first.status, first.text).toBe(200);
    expect(first.body).toEqual({ object: 'redemption', code_id: code.id, amount_usd: 5, balance_usd: 6 });
    expect(await balanceOf(account.id)).toBe(6);

    expectError(await redeem(account.key, code.code), { status: 409, code: 'redemption_code_redeemed', param: 'code' });
    const other = await newAccount();
    expectError(await redeem(other.key, code.code), { status: 409, code: 'redemption_code_redeemed' });
    expect(await balanceOf(other.id)).toBe(0);

    const ledger = await ledgerOf(account.id);
    const topups = ledger.filter((entry) => entry.reason === `redemption code ${code.id}`);
    expect(topups).toEqual([expect.objectContaining({ kind: 'topup', amount_usd: 5 })]);
    expect(ledger.reduce((sum, entry) => sum + Math.round(entry.amount_usd * 1e9), 0)).toBe(6e9);
    expect(JSON.stringify(ledger)).not.toContain(code.code);

    const listed = await admin<CodeJson>(gateway, 'GET', `/admin/redemption-codes/${code.id}`);
    expect(listed.body).toMatchObject({ state: 'redeemed', redeemed_by: account.id, ledger_entry_id: topups[0]?.id });
    const byAccount = await admin<{ data: CodeJson[] }>(gateway, 'GET', `/admin/redemption-codes?account_id=${account.id}`);
    expect(byAccount.body.data.map((entry) => entry.id)).toEqual([code.id]);
    expect(gateway.logs.join('\n')).not.toContain(code.code);
  });

  it('answer wrong, unknown, expired and disabled codes with their own errors', async () => {
    const account = await newAccount();
    expectError(await redeem(account.key, 'not a code'), { status: 400, code: 'invalid_redemption_code', param: 'code' });
    expectError(await redeem(account.key, `UNIGATE-${'23456'.repeat(5)}`), { status: 404, code: 'redemption_code_not_found' });
    expectError(await redeem(account.key, 42), { status: 400, code: 'bad_request' });
    expectError(await call(gateway.url, 'POST', '/v1/dashboard/billing/redeem', { token: account.key, rawBody: '{', headers: { 'x-forwarded-for': clientIp } }), { status: 400, code: 'invalid_json' });
    expectError(await redeem(null, 'x'), { status: 401, code: 'missing_api_key' });
    expectError(await redeem('sk-not-a-real-key-000000000000000000000', 'x'), { status: 401 });

    const [expiring, disabled, deleted] = await createCodes({ amount_usd: 1, count: 3, expires_at: Math.floor(Date.now() / 1000) + 2 });
    expect((await admin(gateway, 'PATCH', `/admin/redemption-codes/${disabled?.id}`, { disabled: true })).body).toMatchObject({ state: 'disabled' });
    expect((await admin(gateway, 'DELETE', `/admin/redemption-codes/${deleted?.id}`)).body).toMatchObject({ state: 'disabled' });
    expectError(await redeem(account.key, disabled?.code), { status: 409, code: 'redemption_code_disabled' });
    expectError(await redeem(account.key, deleted?.code), { status: 409, code: 'redemption_code_disabled' });
    // Enabled again, it works.
    expect((await admin(gateway, 'PATCH', `/admin/redemption-codes/${disabled?.id}`, { disabled: false })).body).toMatchObject({ state: 'active' });
    expect((await redeem(account.key, disabled?.code)).status).toBe(200);
    // A redeemed code can no longer be disabled.
    expectError(await admin(gateway, 'DELETE', `/admin/redemption-codes/${disabled?.id}`), { status: 409, code: 'conflict' });

    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Date.parse(expiring?.expires_at ?? '') - Date.now() + 50)));
    expectError(await redeem(account.key, expiring?.code), { status: 409, code: 'redemption_code_expired' });
    expect(await balanceOf(account.id)).toBe(1);
  });

  it('validate what the admin sends', async () => {
    for (const body of [{}, { amount_usd: 0 }, { amount_usd: -1 }, { amount_usd: 1, count: 0 }, { amount_usd: 1, count: 1001 }, { amount_usd: '1.0000000001' },
      { amount_usd: 1, expires_at: 1 }, { amount_usd: 1, extra: true }]) {
      const answer = await admin(gateway, 'POST', '/admin/redemption-codes', body);
      expect(answer.status, `${JSON.stringify(body)} → ${answer.text}`).toBe(400);
    }
    expectError(await admin(gateway, 'GET', '/admin/redemption-codes?state=bogus'), { status: 400, param: 'state' });
    expectError(await admin(gateway, 'PATCH', '/admin/redemption-codes/rc_missing', { name: 'x' }), { status: 404 });
    expectError(await admin(gateway, 'PATCH', '/admin/redemption-codes/rc_missing', {}), { status: 400 });
    expectError(await call(gateway.url, 'POST', '/admin/redemption-codes', { body: { amount_usd: 1 } }), { status: 401 });
  });

  it('page through a large batch', async () => {
    const created = await createCodes({ amount_usd: 0.01, count: 120, name: 'paging' });
    const ids = new Set(created.map((code) => code.id));
    const { items, pages } = await collectPages<CodeJson>(gateway, '/admin/redemption-codes', 50);
    expect(pages).toBeGreaterThanOrEqual(3);
    expect(items.filter((code) => ids.has(code.id))).toHaveLength(120);
  });

  it('can be redeemed by the admin for an account (support)', async () => {
    const account = await newAccount();
    const [code] = await createCodes({ amount_usd: 3 });
    const answer = await admin(gateway, 'POST', `/admin/accounts/${account.id}/redeem`, { code: code?.code });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body).toEqual({ object: 'redemption', account_id: account.id, code_id: code?.id, amount_usd: 3, balance_usd: 3 });
    expectError(await admin(gateway, 'POST', `/admin/accounts/${account.id}/redeem`, { code: code?.code }), { status: 409, code: 'redemption_code_redeemed' });
    const [unused] = await createCodes({ amount_usd: 3 });
    expectError(await admin(gateway, 'POST', '/admin/accounts/acct_missing/redeem', { code: unused?.code }), { status: 404, code: 'not_found' });
    expect((await admin<CodeJson>(gateway, 'GET', `/admin/redemption-codes/${unused?.id}`)).body.state).toBe('active');
  });

  it('limit failed attempts per key (429 with Retry-After), while successes do not count', async () => {
    const account = await newAccount();
    const codes = await createCodes({ amount_usd: 0.5, count: 3 });
    for (const code of codes) expect((await redeem(account.key, code.code)).status).toBe(200);
    for (let attempt = 0; attempt < 10; attempt += 1) {
      expectError(await redeem(account.key, `UNIGATE-${'23456'.repeat(4)}${String(attempt).padStart(5, '7')}`), { status: 404 });
    }
    const [fresh] = await createCodes({ amount_usd: 1 });
    const refused = await redeem(account.key, fresh?.code);
    expectError(refused, { status: 429, code: 'rate_limit_exceeded' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // The refused attempt did not touch the code: another account can still redeem it.
    const other = await newAccount();
    expect((await redeem(other.key, fresh?.code)).status).toBe(200);
    expect(await balanceOf(account.id)).toBe(1.5);
  });

  it('limit failed attempts per caller IP across keys', async () => {
    const keys = await Promise.all([newAccount(), newAccount(), newAccount(), newAccount()]);
    for (let attempt = 0; attempt < 30; attempt += 1) {
      expectError(await redeem((keys[attempt % 3] as { key: string }).key, 'wrong'), { status: 400, code: 'invalid_redemption_code' });
    }
    const [code] = await createCodes({ amount_usd: 1 });
    // A fourth key, never used, is refused from this address…
    expectError(await redeem(keys[3]?.key ?? '', code?.code), { status: 429, code: 'rate_limit_exceeded' });
    // …and served from another.
    clientIp = '203.0.113.7';
    expect((await redeem(keys[3]?.key ?? '', code?.code)).status).toBe(200);
  });

  it('stay exact under many concurrent redemptions of one code', async () => {
    const accounts = await Promise.all([newAccount(1), newAccount(2)]);
    const [code] = await createCodes({ amount_usd: '7.123456789' });
    const answers = await Promise.all(Array.from({ length: 16 }, (_, index) => redeem((accounts[index % 2] as { key: string }).key, code?.code)));
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1);
    expect(answers.filter((answer) => answer.status === 409)).toHaveLength(15);
    const winner = (await admin<CodeJson>(gateway, 'GET', `/admin/redemption-codes/${code?.id}`)).body.redeemed_by;
    const balances = await Promise.all(accounts.map((account) => balanceOf(account.id)));
    expect(balances).toEqual(accounts.map((account, index) => (account.id === winner ? Number(`${index + 8}.123456789`) : index + 1)));
  });
});
