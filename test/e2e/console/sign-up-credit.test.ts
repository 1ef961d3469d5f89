/**
 * The sign-up credit over real HTTP: a console sign-up gets SIGNUP_CREDIT_USD through the ledger once its email is
 * verified (not before, so an unverified account's first call is still 402), and never twice for one person: not
 * for the same mailbox after the account is deleted (nor its `+tag` twin), not for a second account from the same
 * address (also when two verify at the same moment), not for accounts the admin API makes. A tier sets its own
 * amount or turns it off; at expiry the unused part is taken back, money paid in later untouched.
 */
import { randomBytes } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignUpCreditExpiry } from '../../../src/sign-up-credit/sign-up-credit-expiry.js';
import { ConsoleClient, linkToken, strongPassword, uniqueEmail, waitForMail } from '../../support/console-client.js';
import { addRoutedModel, flushWrites } from '../../support/gateway-harness.js';
import { startConsoleGateway, type ConsoleGateway } from './console-gateway.js';

const MODEL = 'credit-first-model';
const DAY_MS = 86_400_000;
let setup: ConsoleGateway;

beforeAll(async () => {
  setup = await startConsoleGateway({ SIGNUP_CREDIT_USD: '1.25', SIGNUP_CREDIT_DAYS: '7' });
  await addRoutedModel(setup.gateway, { model: MODEL, pricing: { input_per_mtok: 10, output_per_mtok: 10 }, channel: { name: 'credit-sim', type: 'simulator', models: [MODEL], settings: { output_tokens: 5 } } });
}, 60_000);

afterAll(async () => {
  await setup?.close();
});

interface Person { client: ConsoleClient; email: string; accountId: string }

async function signUp(options: { ip?: string; email?: string } = {}): Promise<Person> {
  const client = new ConsoleClient(setup.gateway.consoleUrl, options.ip === undefined ? {} : { ip: options.ip });
  const email = options.email ?? uniqueEmail('credit');
  const answer = await client.signUp(email, strongPassword());
  expect(answer.status, answer.text).toBe(201);
  return { client, email, accountId: (answer.body as { account: { id: string } }).account.id };
}

async function verifyToken(person: Person, count = 1): Promise<string> {
  return linkToken(await waitForMail(setup.mail, person.email, /confirm your email/i, count));
}

async function verify(person: Person, count = 1): Promise<void> {
  const answer = await person.client.request('POST', '/api/auth/verify-email', { token: await verifyToken(person, count) });
  expect(answer.status, answer.text).toBe(200);
}

async function sessionAccount(person: Person): Promise<{ balance_usd: number; sign_up_credit: Record<string, unknown> | null }> {
  const session = await person.client.request<{ account: { balance_usd: number; sign_up_credit: Record<string, unknown> | null } }>('GET', '/api/session');
  return session.body.account;
}

async function ledger(accountId: string): Promise<Array<{ kind: string; amount_usd: number; reason: string | null }>> {
  const answer = await setup.gateway.admin<{ data: Array<{ kind: string; amount_usd: number; reason: string | null }> }>('GET', `/admin/accounts/${accountId}/ledger?limit=100`);
  return answer.body.data;
}

function ip(): string {
  const bytes = randomBytes(3);
  return `10.${bytes[0]}.${bytes[1]}.${bytes[2]}`;
}

describe('sign-up credit', () => {
  it('is given on verification, not before: the first call answers 402, then 200 without a card', async () => {
    const person = await signUp();
    expect(await sessionAccount(person)).toMatchObject({ balance_usd: 0, sign_up_credit: { state: 'offered', amount_usd: 1.25, days: 7 } });
    const key = await setup.gateway.admin<{ key: string }>('POST', `/admin/accounts/${person.accountId}/keys`, { name: 'first' });
    const sdk = new OpenAI({ apiKey: key.body.key, baseURL: setup.gateway.baseURL, maxRetries: 0 });
    const refused = await sdk.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }).catch((error: unknown) => error);
    expect((refused as { status?: number }).status).toBe(402);

    await verify(person);
    const account = await sessionAccount(person);
    expect(account.balance_usd).toBe(1.25);
    expect(account.sign_up_credit).toMatchObject({ state: 'granted', amount_usd: 1.25 });
    const expiresAt = Date.parse(String(account.sign_up_credit?.expires_at));
    expect(expiresAt - Date.now()).toBeGreaterThan(6.9 * DAY_MS);
    expect((await ledger(person.accountId)).filter((entry) => entry.kind === 'signup_credit')).toEqual([expect.objectContaining({ amount_usd: 1.25 })]);
    // Operators see it on the account too.
    expect((await setup.gateway.admin('GET', `/admin/accounts/${person.accountId}`)).body).toMatchObject({ sign_up_credit: { state: 'granted', amount_usd: 1.25 } });

    const answer = await sdk.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.choices[0]?.message.content).toBeTruthy();
    await flushWrites(setup.gateway);
    expect((await sessionAccount(person)).balance_usd).toBeLessThan(1.25);
  });

  it('is not given twice for one mailbox: not after deleting the account, not to its +tag twin', async () => {
    const first = await signUp();
    await verify(first);
    expect((await sessionAccount(first)).balance_usd).toBe(1.25);
    expect((await setup.gateway.admin('DELETE', `/admin/accounts/${first.accountId}`)).status).toBe(200);

    const again = await signUp({ email: first.email });
    await verify(again, 2);
    expect(await sessionAccount(again)).toMatchObject({ balance_usd: 0, sign_up_credit: { state: 'not_given', reason: 'email_used' } });
    expect((await ledger(again.accountId)).some((entry) => entry.kind === 'signup_credit')).toBe(false);

    const [local, domain] = first.email.split('@') as [string, string];
    const twin = await signUp({ email: `${local}+again@${domain}` });
    await verify(twin);
    expect(await sessionAccount(twin)).toMatchObject({ balance_usd: 0, sign_up_credit: { state: 'not_given', reason: 'email_used' } });
  });

  it('is not given to a second account from the same address, even when both verify at once', async () => {
    const shared = ip();
    const first = await signUp({ ip: shared });
    await verify(first);
    const second = await signUp({ ip: shared });
    await verify(second);
    expect(await sessionAccount(second)).toMatchObject({ balance_usd: 0, sign_up_credit: { state: 'not_given', reason: 'address_used' } });
    expect((await setup.gateway.admin('GET', `/admin/accounts/${second.accountId}`)).body).toMatchObject({ sign_up_credit: { state: 'not_given', reason: 'address_used' } });

    // Signed up from different addresses, verified from one, at the same moment: one credit between them.
    const together = ip();
    const a = await signUp();
    const b = await signUp();
    const [tokenA, tokenB] = await Promise.all([verifyToken(a), verifyToken(b)]);
    const verifier = new ConsoleClient(setup.gateway.consoleUrl, { ip: together });
    const answers = await Promise.all([
      verifier.request('POST', '/api/auth/verify-email', { token: tokenA }),
      verifier.request('POST', '/api/auth/verify-email', { token: tokenB }),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    const balances = await Promise.all([sessionAccount(a), sessionAccount(b)]);
    expect(balances.map((account) => account.balance_usd).sort()).toEqual([0, 1.25]);
  });

  it('is not given to accounts the admin API makes, and a tier sets its own amount or none', async () => {
    const made = await setup.gateway.admin<{ id: string; balance_usd: number }>('POST', '/admin/accounts', { email: uniqueEmail('admin-made') });
    expect(made.body.balance_usd).toBe(0);

    expect((await setup.gateway.admin('PATCH', '/admin/tiers/default', { signup_credit_usd: 0 })).status).toBe(200);
    const none = await signUp();
    expect((await sessionAccount(none)).sign_up_credit).toBeNull();
    await verify(none);
    expect((await sessionAccount(none)).balance_usd).toBe(0);

    const tier = await setup.gateway.admin<{ signup_credit_usd: number; signup_credit_days: number | null }>('PATCH', '/admin/tiers/default', { signup_credit_usd: 2.5, signup_credit_days: null });
    expect(tier.body).toMatchObject({ signup_credit_usd: 2.5, signup_credit_days: null });
    const more = await signUp();
    await verify(more);
    expect((await sessionAccount(more)).balance_usd).toBe(2.5);
    const bad = await setup.gateway.admin<{ error: { param: string } }>('PATCH', '/admin/tiers/default', { signup_credit_usd: -1 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('signup_credit_usd');
    expect((await setup.gateway.admin('PATCH', '/admin/tiers/default', { signup_credit_usd: null })).status).toBe(200);
  });

  it('takes back the unused part at expiry, once, leaving money paid in later alone', async () => {
    const person = await signUp();
    await verify(person);
    expect((await sessionAccount(person)).balance_usd).toBe(1.25);
    expect((await setup.gateway.admin('POST', `/admin/accounts/${person.accountId}/credits`, { amount_usd: 10, reason: 'paid' })).status).toBe(200);
    const key = await setup.gateway.admin<{ key: string }>('POST', `/admin/accounts/${person.accountId}/keys`, { name: 'spend' });
    const sdk = new OpenAI({ apiKey: key.body.key, baseURL: setup.gateway.baseURL, maxRetries: 0 });
    await sdk.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
    await flushWrites(setup.gateway);
    const before = (await sessionAccount(person)).balance_usd;
    const spent = 11.25 - before;
    expect(spent).toBeGreaterThan(0);

    const services = setup.gateway.gateway.services;
    const expiry = new SignUpCreditExpiry(services.storage, services.ledger, services.clock, services.logger);
    setup.shift.offset += 8 * DAY_MS;
    try {
      expect(await expiry.run()).toBeGreaterThanOrEqual(1);
      expect(await expiry.run()).toBe(0);
    } finally {
      setup.shift.offset -= 8 * DAY_MS;
    }
    const after = await sessionAccount(person);
    // Spent from the credit first: what is left of it goes, the 10 USD paid in stays.
    expect(after.balance_usd).toBeCloseTo(10, 9);
    expect(after.sign_up_credit).toMatchObject({ state: 'expired' });
    const taken = (await ledger(person.accountId)).filter((entry) => entry.kind === 'signup_credit' && entry.amount_usd < 0);
    expect(taken).toHaveLength(1);
    expect(taken[0]?.amount_usd).toBeCloseTo(-(1.25 - spent), 9);
  });
});
