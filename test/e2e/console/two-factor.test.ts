/**
 * Two-factor sign-in over real HTTP: TOTP enrolment (QR code and secret as text) confirmed by a first code, the
 * second step of sign-in, replayed codes refused within their step, backup codes that work once, regenerated
 * backup codes, and disabling with a current code. The gateway's clock runs ahead on demand to reach new steps.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../../support/console-client.js';
import { signUpUser, startConsoleGateway, type ConsoleGateway, type SignedUpUser } from './console-gateway.js';

let setup: ConsoleGateway;
let user: SignedUpUser;
let secret: string;
let backupCodes: string[];

const STEP_MS = 30_000;
/** The gateway's time. */
const now = (): number => Date.now() + setup.shift.offset;
/** Moves the gateway one TOTP step on, so the next code is one it has not seen. */
const nextStep = (): void => {
  setup.shift.offset += STEP_MS;
};

beforeAll(async () => {
  setup = await startConsoleGateway();
  user = await signUpUser(setup);
});

afterAll(async () => {
  await setup?.close();
});

async function startSignIn(): Promise<{ client: ReturnType<ConsoleGateway['client']>; challenge: string }> {
  const client = setup.client();
  const first = await client.signIn(user.email, user.password);
  expect(first.status, first.text).toBe(200);
  expect(first.body).toMatchObject({ status: 'two_factor_required' });
  expect(first.body).not.toHaveProperty('user');
  expect(first.setCookies.some((line) => line.startsWith('unigate_session='))).toBe(false);
  return { client, challenge: (first.body as { challenge: string }).challenge };
}

describe('enrolment', () => {
  it('gives the secret as text and as a QR code, and turns on only after a first valid code', async () => {
    const setupAnswer = await user.client.request<{ secret: string; otpauth_url: string; qr_svg: string }>('POST', '/api/me/two-factor/setup');
    expect(setupAnswer.status, setupAnswer.text).toBe(200);
    secret = setupAnswer.body.secret;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(setupAnswer.body.otpauth_url).toMatch(/^otpauth:\/\/totp\//);
    expect(setupAnswer.body.otpauth_url).toContain(`secret=${secret}`);
    expect(setupAnswer.body.qr_svg).toMatch(/^<svg[^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);

    // Not on yet: sign-in still needs no code.
    expect((await setup.client().signIn(user.email, user.password)).body).toMatchObject({ status: 'signed_in' });

    const wrong = await user.client.request('POST', '/api/me/two-factor/enable', { code: totpCode(secret, now() - 10 * STEP_MS) });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toMatchObject({ error: { code: 'invalid_code' } });

    const cookieBefore = user.client.cookies.get('unigate_session');
    const enabled = await user.client.request<{ backup_codes: string[]; csrf_token: string }>('POST', '/api/me/two-factor/enable', { code: totpCode(secret, now()) });
    expect(enabled.status, enabled.text).toBe(200);
    backupCodes = enabled.body.backup_codes;
    expect(backupCodes).toHaveLength(10);
    expect(new Set(backupCodes).size).toBe(10);
    for (const code of backupCodes) expect(code).toMatch(/^[a-z0-9]{5}-[a-z0-9]{5}$/);
    // The session was rotated: a new cookie; the old value signs nothing in.
    const cookieAfter = user.client.cookies.get('unigate_session');
    expect(cookieAfter).toBeDefined();
    expect(cookieAfter).not.toBe(cookieBefore);
    const stale = await fetch(`${setup.gateway.consoleUrl}/api/session`, { headers: { cookie: `unigate_session=${cookieBefore}` } });
    expect(await stale.json()).toMatchObject({ user: null });
    expect((await user.client.request('GET', '/api/session')).body).toMatchObject({ user: { two_factor_enabled: true } });
  });
});

describe('signing in with a second factor', () => {
  it('needs a code; a code already accepted in its step is refused', async () => {
    nextStep();
    const { client, challenge } = await startSignIn();
    const wrong = await client.request('POST', '/api/auth/sign-in/two-factor', { challenge, code: '000000' === totpCode(secret, now()) ? '111111' : '000000' });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toMatchObject({ error: { code: 'invalid_code' } });
    const code = totpCode(secret, now());
    const ok = await client.request('POST', '/api/auth/sign-in/two-factor', { challenge, code });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toMatchObject({ status: 'signed_in', user: { email: user.email, two_factor_enabled: true } });
    expect(ok.setCookies.some((line) => line.startsWith('unigate_session='))).toBe(true);
    expect((await client.request('GET', '/api/keys')).status).toBe(200);

    // The challenge is used up.
    expect((await client.request('POST', '/api/auth/sign-in/two-factor', { challenge, code })).body).toMatchObject({ error: { code: 'invalid_token' } });
    // The same code again, on a fresh sign-in within its step: refused.
    const replay = await startSignIn();
    const replayed = await replay.client.request('POST', '/api/auth/sign-in/two-factor', { challenge: replay.challenge, code });
    expect(replayed.status).toBe(400);
    expect(replayed.body).toMatchObject({ error: { code: 'invalid_code' } });
    expect((await replay.client.request('GET', '/api/session')).body).toMatchObject({ user: null });
  });

  it('accepts each backup code once', async () => {
    const backup = backupCodes[0] as string;
    const first = await startSignIn();
    const used = await first.client.request('POST', '/api/auth/sign-in/two-factor', { challenge: first.challenge, code: backup.toUpperCase() });
    expect(used.status, used.text).toBe(200);
    const second = await startSignIn();
    const again = await second.client.request('POST', '/api/auth/sign-in/two-factor', { challenge: second.challenge, code: backup });
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ error: { code: 'invalid_code' } });
    const other = await second.client.request('POST', '/api/auth/sign-in/two-factor', { challenge: second.challenge, code: backupCodes[1] });
    expect(other.status).toBe(200);
  });

  it('refuses a challenge after five minutes', async () => {
    nextStep();
    const { client, challenge } = await startSignIn();
    setup.shift.offset += 6 * 60_000;
    const late = await client.request('POST', '/api/auth/sign-in/two-factor', { challenge, code: totpCode(secret, now()) });
    expect(late.status).toBe(400);
    expect(late.body).toMatchObject({ error: { code: 'invalid_token' } });
  });
});

describe('managing the second factor', () => {
  it('replaces the backup codes with a current code; the old ones stop working', async () => {
    nextStep();
    const regenerated = await user.client.request<{ backup_codes: string[] }>('POST', '/api/me/two-factor/backup-codes', { code: totpCode(secret, now()) });
    expect(regenerated.status, regenerated.text).toBe(200);
    expect(regenerated.body.backup_codes).toHaveLength(10);
    const old = await startSignIn();
    expect((await old.client.request('POST', '/api/auth/sign-in/two-factor', { challenge: old.challenge, code: backupCodes[2] })).status).toBe(400);
    backupCodes = regenerated.body.backup_codes;
    expect((await old.client.request('POST', '/api/auth/sign-in/two-factor', { challenge: old.challenge, code: backupCodes[0] })).status).toBe(200);
  });

  it('turns off only with a current code', async () => {
    nextStep();
    const without = await user.client.request('POST', '/api/me/two-factor/disable', { code: '123456' === totpCode(secret, now()) ? '654321' : '123456' });
    expect(without.status).toBe(400);
    const off = await user.client.request('POST', '/api/me/two-factor/disable', { code: totpCode(secret, now()) });
    expect(off.status, off.text).toBe(204);
    expect((await user.client.request('GET', '/api/session')).body).toMatchObject({ user: { two_factor_enabled: false } });
    expect((await setup.client().signIn(user.email, user.password)).body).toMatchObject({ status: 'signed_in' });
  });
});
