/** /admin/accounts, credits (exact decimal money) and the ledger. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { addSimulatorModel, admin, chat, collectPages, expectError, uniqueName } from './helpers.js';

interface AccountJson {
  id: string;
  email: string;
  tier: string;
  balance_usd: number;
  credit_line_usd: number;
  subscriptions: unknown[];
}

interface LedgerEntryJson {
  id: string;
  kind: string;
  amount_usd: number;
  reason: string | null;
  created_at: string;
}

const MODEL = 'accounts-sim-model';

let gateway: TestGateway;

beforeAll(async () => {
  gateway = await startTestGateway();
  await addSimulatorModel(gateway, MODEL);
});

afterAll(async () => {
  await gateway?.close();
});

async function createAccount(email = `${uniqueName('acct')}@example.com`): Promise<AccountJson> {
  const created = await admin<AccountJson>(gateway, 'POST', '/admin/accounts', { email });
  expect(created.status, created.text).toBe(201);
  return created.body;
}

async function credit(accountId: string, amount: unknown, reason?: string): Promise<{ status: number; balance: number; text: string }> {
  const answer = await admin<{ balance_usd: number }>(gateway, 'POST', `/admin/accounts/${accountId}/credits`, { amount_usd: amount, ...(reason === undefined ? {} : { reason }) });
  return { status: answer.status, balance: answer.body.balance_usd, text: answer.text };
}

describe('accounts', () => {
  it('creates an account with the email lowercased, zero balance and no subscriptions', async () => {
    expect((await admin(gateway, 'POST', '/admin/tiers', { name: 'pro' })).status).toBe(201);
    const local = uniqueName('Mixed.Case');
    const created = await admin<AccountJson>(gateway, 'POST', '/admin/accounts', { email: `${local}@Example.COM`, password: 'correct horse battery', tier: 'pro' });
    expect(created.status, created.text).toBe(201);
    expect(typeof created.body.id).toBe('string');
    expect(created.body).toMatchObject({ email: `${local.toLowerCase()}@example.com`, tier: 'pro', balance_usd: 0, subscriptions: [] });
    expect(created.text).not.toContain('correct horse battery');

    const got = await admin<AccountJson>(gateway, 'GET', `/admin/accounts/${created.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id: created.body.id, email: `${local.toLowerCase()}@example.com`, balance_usd: 0, tier: 'pro' });
    expect(Array.isArray(got.body.subscriptions)).toBe(true);
    expect(got.text).not.toContain('correct horse battery');
  });

  it('refuses a duplicate email (in any case) with 409', async () => {
    const email = `${uniqueName('dup')}@example.com`;
    await createAccount(email);
    expectError(await admin(gateway, 'POST', '/admin/accounts', { email }), { status: 409 });
    expectError(await admin(gateway, 'POST', '/admin/accounts', { email: email.toUpperCase() }), { status: 409 });
    const other = await createAccount();
    expectError(await admin(gateway, 'PATCH', `/admin/accounts/${other.id}`, { email: email.toUpperCase() }), { status: 409 });
  });

  it('validates the body (400 naming the field)', async () => {
    expectError(await admin(gateway, 'POST', '/admin/accounts', {}), { status: 400, param: 'email' });
    expectError(await admin(gateway, 'POST', '/admin/accounts', { email: 'not-an-email' }), { status: 400, param: 'email' });
    expectError(await admin(gateway, 'POST', '/admin/accounts', { email: `${uniqueName('pw')}@example.com`, password: 'short' }), { status: 400, param: 'password' });
    expectError(await admin(gateway, 'POST', '/admin/accounts', { email: `${uniqueName('tier')}@example.com`, tier: 'Gold Tier!' }), { status: 400, param: 'tier' });
  });

  it('refuses a tier that does not exist, naming the tiers there are (create and patch)', async () => {
    const missing = await admin<{ error: { message: string } }>(gateway, 'POST', '/admin/accounts', { email: `${uniqueName('tier')}@example.com`, tier: 'platinum' });
    expectError(missing, { status: 400, code: 'bad_request', param: 'tier' });
    expect(missing.body.error.message).toContain("no tier named 'platinum'");
    expect(missing.body.error.message).toMatch(/Tiers: .*default/);
    const account = await createAccount();
    expectError(await admin(gateway, 'PATCH', `/admin/accounts/${account.id}`, { tier: 'platinum' }), { status: 400, param: 'tier' });
    expect((await admin<AccountJson>(gateway, 'GET', `/admin/accounts/${account.id}`)).body.tier).toBe('default');
    expect((await admin(gateway, 'POST', '/admin/tiers', { name: 'platinum', rpm: 100 })).status).toBe(201);
    expect((await admin<AccountJson>(gateway, 'PATCH', `/admin/accounts/${account.id}`, { tier: 'platinum' })).body.tier).toBe('platinum');
  });

  it('patches tier and credit line, and GET shows them', async () => {
    expect((await admin(gateway, 'POST', '/admin/tiers', { name: 'gold' })).status).toBe(201);
    const account = await createAccount();
    const patched = await admin<AccountJson>(gateway, 'PATCH', `/admin/accounts/${account.id}`, { tier: 'gold', credit_line_usd: 12.34 });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ id: account.id, tier: 'gold', credit_line_usd: 12.34, balance_usd: 0 });
    const got = await admin<AccountJson>(gateway, 'GET', `/admin/accounts/${account.id}`);
    expect(got.body).toMatchObject({ tier: 'gold', credit_line_usd: 12.34 });
    expectError(await admin(gateway, 'PATCH', `/admin/accounts/${account.id}`, { credit_line_usd: -1 }), { status: 400, param: 'credit_line_usd' });
    expectError(await admin(gateway, 'PATCH', `/admin/accounts/${account.id}`, { tier: '' }), { status: 400, param: 'tier' });
  });

  it('answers 404 for unknown accounts on every account route', async () => {
    const unknown = 'acct_doesnotexist';
    expectError(await admin(gateway, 'GET', `/admin/accounts/${unknown}`), { status: 404, code: 'not_found' });
    expectError(await admin(gateway, 'PATCH', `/admin/accounts/${unknown}`, { tier: 'gold' }), { status: 404 });
    expectError(await admin(gateway, 'POST', `/admin/accounts/${unknown}/credits`, { amount_usd: 1 }), { status: 404 });
    expectError(await admin(gateway, 'GET', `/admin/accounts/${unknown}/ledger`), { status: 404 });
    expectError(await admin(gateway, 'POST', `/admin/accounts/${unknown}/keys`, {}), { status: 404 });
    expectError(await admin(gateway, 'GET', `/admin/accounts/${unknown}/keys`), { status: 404 });
  });

  it('pages the account list', async () => {
    for (let index = 0; index < 4; index += 1) await createAccount();
    const all = await admin<{ data: AccountJson[] }>(gateway, 'GET', '/admin/accounts?limit=200');
    expect(all.status).toBe(200);
    const { items } = await collectPages<AccountJson>(gateway, '/admin/accounts', 2);
    const ids = items.map((account) => account.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.sort()).toEqual(all.body.data.map((account) => account.id).sort());
    for (const account of items) expect(typeof account.balance_usd).toBe('number');
  });
});

describe('credits and balance', () => {
  it('adds exactly: 0.1 + 0.2 = 0.3, and negative corrections subtract exactly', async () => {
    const account = await createAccount();
    expect(await credit(account.id, 0.1)).toMatchObject({ status: 200, balance: 0.1 });
    expect(await credit(account.id, 0.2)).toMatchObject({ status: 200, balance: 0.3 });
    const got = await admin<AccountJson>(gateway, 'GET', `/admin/accounts/${account.id}`);
    expect(got.body.balance_usd).toBe(0.3);

    expect(await credit(account.id, -0.05, 'correction of a double top-up')).toMatchObject({ status: 200, balance: 0.25 });
    expect(await credit(account.id, 10.123456789)).toMatchObject({ status: 200, balance: 10.373456789 });
    expect(await credit(account.id, '0.000000001')).toMatchObject({ status: 200, balance: 10.37345679 });
    expect(await credit(account.id, -10.37345679)).toMatchObject({ status: 200, balance: 0 });
    // Negative balances are representable (a correction larger than the balance).
    expect(await credit(account.id, -1.1)).toMatchObject({ status: 200, balance: -1.1 });
    expect(await credit(account.id, 3.3)).toMatchObject({ status: 200, balance: 2.2 });
    expect((await admin<AccountJson>(gateway, 'GET', `/admin/accounts/${account.id}`)).body.balance_usd).toBe(2.2);
  });

  it('keeps many small credits exact (ten times 0.1 is 1)', async () => {
    const account = await createAccount();
    let last = 0;
    for (let index = 0; index < 10; index += 1) last = (await credit(account.id, 0.1)).balance;
    expect(last).toBe(1);
    expect((await admin<AccountJson>(gateway, 'GET', `/admin/accounts/${account.id}`)).body.balance_usd).toBe(1);
  });

  it('refuses a zero amount, a non-number and an amount finer than the stored unit, and leaves the balance alone', async () => {
    const account = await createAccount();
    await credit(account.id, 5);
    for (const amount of [0, '0', -0, 'ten', null, 0.0000000001]) {
      const answer = await admin(gateway, 'POST', `/admin/accounts/${account.id}/credits`, { amount_usd: amount });
      expectError(answer, { status: 400, param: 'amount_usd' });
    }
    expectError(await admin(gateway, 'POST', `/admin/accounts/${account.id}/credits`, {}), { status: 400, param: 'amount_usd' });
    expect((await admin<AccountJson>(gateway, 'GET', `/admin/accounts/${account.id}`)).body.balance_usd).toBe(5);
  });

  it('lists every credit in the ledger with its kind, amount and reason, paged', async () => {
    const account = await createAccount();
    await credit(account.id, 20, 'invoice 1001');
    await credit(account.id, 0.7);
    await credit(account.id, -2.5, 'refund adjustment');
    const ledger = await admin<{ object: string; data: LedgerEntryJson[]; has_more: boolean }>(gateway, 'GET', `/admin/accounts/${account.id}/ledger`);
    expect(ledger.status, ledger.text).toBe(200);
    expect(ledger.body.object).toBe('list');
    expect(ledger.body.data).toHaveLength(3);
    const amounts = ledger.body.data.map((entry) => entry.amount_usd).sort((a, b) => a - b);
    expect(amounts).toEqual([-2.5, 0.7, 20]);
    const byAmount = new Map(ledger.body.data.map((entry) => [entry.amount_usd, entry]));
    expect(byAmount.get(20)?.reason).toBe('invoice 1001');
    expect(byAmount.get(-2.5)?.reason).toBe('refund adjustment');
    expect(byAmount.get(20)?.kind).not.toBe(byAmount.get(-2.5)?.kind);
    for (const entry of ledger.body.data) {
      expect(typeof entry.id).toBe('string');
      expect(Number.isNaN(Date.parse(entry.created_at))).toBe(false);
    }
    const { items, pages } = await collectPages<LedgerEntryJson>(gateway, `/admin/accounts/${account.id}/ledger`, 1);
    expect(pages).toBe(3);
    expect(items.map((entry) => entry.id).sort()).toEqual(ledger.body.data.map((entry) => entry.id).sort());
    // The ledger sums to the balance.
    const total = items.reduce((sum, entry) => sum + Math.round(entry.amount_usd * 1e9), 0) / 1e9;
    expect((await admin<AccountJson>(gateway, 'GET', `/admin/accounts/${account.id}`)).body.balance_usd).toBe(total);
  });
});

describe('balance and credit line decide admission', () => {
  it('an empty account is refused (insufficient_balance); a credit line or a top-up lets it through', async () => {
    const account = await createAccount();
    const key = await admin<{ key: string }>(gateway, 'POST', `/admin/accounts/${account.id}/keys`, {});
    expect(key.status).toBe(201);

    const refused = await chat(gateway, key.body.key, MODEL);
    expect([402, 429], refused.text).toContain(refused.status);
    expectError(refused, { code: 'insufficient_balance' });

    expect((await admin(gateway, 'PATCH', `/admin/accounts/${account.id}`, { credit_line_usd: 1 })).status).toBe(200);
    const allowed = await chat(gateway, key.body.key, MODEL);
    expect(allowed.status, allowed.text).toBe(200);

    expect((await admin(gateway, 'PATCH', `/admin/accounts/${account.id}`, { credit_line_usd: 0 })).status).toBe(200);
    const again = await chat(gateway, key.body.key, MODEL);
    expectError(again, { code: 'insufficient_balance' });

    expect((await credit(account.id, 1)).status).toBe(200);
    const topped = await chat(gateway, key.body.key, MODEL);
    expect(topped.status, topped.text).toBe(200);
  });
});
