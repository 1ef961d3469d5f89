/**
 * Sign-in locks that no stranger can use to lock someone out, over real HTTP. Failures are counted per email and
 * address: five wrong passwords from one address refuse that address for that email, while the right password from
 * anywhere else signs in. Failures spread over many addresses lock the email: the right password alone is then
 * refused, but with a second factor it goes through. A completed password reset clears every lock of the email.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIGN_IN_FROM_ADDRESS_WINDOWS, SIGN_IN_LOCK_WINDOWS } from '../../../src/console/auth-limits.js';
import { ConsoleClient, linkToken, strongPassword, totpCode, waitForMail } from '../../support/console-client.js';
import { awayFromWindowEdge, signUpUser, startConsoleGateway, type ConsoleGateway, type SignedUpUser } from './console-gateway.js';

const FIVE_MINUTES = 5 * 60_000;
const HOUR = 3_600_000;

let setup: ConsoleGateway;

beforeAll(async () => {
  setup = await startConsoleGateway();
});

afterAll(async () => {
  await setup?.close();
});

const perAddress = SIGN_IN_FROM_ADDRESS_WINDOWS[0]!.limit;
const lockAfter = SIGN_IN_LOCK_WINDOWS[0]!.limit;

/** `count` wrong passwords for `email`, from as many addresses as the per-address limit needs. */
async function failEverywhere(email: string, count: number): Promise<void> {
  let client = setup.client();
  for (let index = 0; index < count; index += 1) {
    if (index % perAddress === 0) client = setup.client();
    const answer = await client.signIn(email, `wrong password number ${index}`);
    expect(answer.status, answer.text).toBe(401);
  }
}

async function resetPassword(user: SignedUpUser, from: ConsoleClient): Promise<string> {
  const earlier = setup.mail.to(user.email).filter((mail) => /reset your console password/i.test(mail.subject)).length;
  expect((await from.request('POST', '/api/auth/password-reset', { email: user.email })).status).toBe(202);
  const token = linkToken(await waitForMail(setup.mail, user.email, /reset your console password/i, earlier + 1));
  const password = strongPassword();
  const confirmed = await from.request('POST', '/api/auth/password-reset/confirm', { token, password });
  expect(confirmed.status, confirmed.text).toBe(204);
  return password;
}

// A test may first wait out a window's edge (up to its margin: 20 s or a minute) and then signs in a few dozen times
// with a memory-hard password hash: the default 20 s cannot hold both on a loaded machine.
const WAIT_AND_SIGN_INS = { timeout: 150_000 };

describe('failures from one address', WAIT_AND_SIGN_INS, () => {
  it('refuse that address for that email only; the right password from any other address signs in', async () => {
    await awayFromWindowEdge(FIVE_MINUTES, 20_000);
    const victim = await signUpUser(setup);
    const attacker = setup.client();
    for (let index = 0; index < perAddress; index += 1) expect((await attacker.signIn(victim.email, `guess ${index} of many`)).status).toBe(401);
    const refused = await attacker.signIn(victim.email, victim.password);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ error: { code: 'rate_limit_exceeded', type: 'rate_limit_error' } });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // The victim, from their own address, is not locked out.
    expect((await setup.client().signIn(victim.email, victim.password)).body).toMatchObject({ status: 'signed_in' });
    // Another email from the attacker's address is not affected either.
    const other = await signUpUser(setup);
    const sameAddress = new ConsoleClient(setup.gateway.consoleUrl, { ip: attacker.ip });
    expect((await sameAddress.signIn(other.email, other.password)).body).toMatchObject({ status: 'signed_in' });
  });

  it('are cleared by a completed password reset (the person behind that address mistyped)', async () => {
    await awayFromWindowEdge(FIVE_MINUTES, 20_000);
    const user = await signUpUser(setup);
    const typist = setup.client();
    for (let index = 0; index < perAddress; index += 1) await typist.signIn(user.email, `forgotten ${index} password`);
    expect((await typist.signIn(user.email, user.password)).status).toBe(429);
    const password = await resetPassword(user, typist);
    expect((await typist.signIn(user.email, password)).body).toMatchObject({ status: 'signed_in' });
  });
});

describe('failures spread over many addresses', WAIT_AND_SIGN_INS, () => {
  it('lock the email: the right password alone is refused everywhere until a reset clears the lock', async () => {
    await awayFromWindowEdge(HOUR, 60_000);
    const user = await signUpUser(setup);
    await failEverywhere(user.email, lockAfter);
    const refused = await setup.client().signIn(user.email, user.password);
    expect(refused.status, refused.text).toBe(429);
    expect(refused.body).toMatchObject({ error: { code: 'rate_limit_exceeded', message: expect.stringMatching(/second factor|reset your password/) } });
    // A wrong password answers the same as the right one: the lock tells nothing about the password.
    expect((await setup.client().signIn(user.email, 'yet another wrong one')).status).toBe(429);
    const fresh = setup.client();
    const password = await resetPassword(user, fresh);
    expect((await setup.client().signIn(user.email, password)).body).toMatchObject({ status: 'signed_in' });
  });

  it('let the right password and a second factor through', async () => {
    await awayFromWindowEdge(HOUR, 60_000);
    const user = await signUpUser(setup);
    const enrolment = await user.client.request<{ secret: string }>('POST', '/api/me/two-factor/setup');
    expect(enrolment.status, enrolment.text).toBe(200);
    expect((await user.client.request('POST', '/api/me/two-factor/enable', { code: totpCode(enrolment.body.secret) })).status).toBe(200);
    setup.shift.offset += 30_000;
    await failEverywhere(user.email, lockAfter);
    const client = setup.client();
    const first = await client.signIn(user.email, user.password);
    expect(first.body, first.text).toMatchObject({ status: 'two_factor_required' });
    const second = await client.request('POST', '/api/auth/sign-in/two-factor', { challenge: (first.body as { challenge: string }).challenge, code: totpCode(enrolment.body.secret, Date.now() + setup.shift.offset) });
    expect(second.body, second.text).toMatchObject({ status: 'signed_in' });
    // A wrong password is still refused as locked.
    expect((await setup.client().signIn(user.email, 'not the password at all')).status).toBe(429);
  });
});
