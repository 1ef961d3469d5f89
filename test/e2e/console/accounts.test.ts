/**
 * Console accounts over real HTTP: sign-up with a mailed verification link, sign-in and sign-out, the sessions
 * list, signing out everywhere, the password reset link (one use, expiry), password change, and accounts made
 * through the admin API signing in with their password.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleClient, linkToken, strongPassword, uniqueEmail, waitForMail } from '../../support/console-client.js';
import { startTestGateway } from '../../support/gateway-harness.js';
import { signUpUser, startConsoleGateway, type ConsoleGateway } from './console-gateway.js';

let setup: ConsoleGateway;

beforeAll(async () => {
  setup = await startConsoleGateway();
});

afterAll(async () => {
  await setup?.close();
});

describe('sign-up and email verification', () => {
  it('creates an account and its owner, signs in, and mails a one-time link that verifies the email', async () => {
    const client = setup.client();
    const email = uniqueEmail('Mixed.Case');
    const password = strongPassword();
    const answer = await client.signUp(email.toUpperCase(), password);
    expect(answer.status, answer.text).toBe(201);
    expect(answer.body).toMatchObject({ user: { email: email.toLowerCase(), email_verified: false, two_factor_enabled: false }, account: { email: email.toLowerCase(), balance_usd: 0, status: 'enabled' }, role: 'owner' });
    expect(answer.text).not.toContain(password);

    const session = await client.request('GET', '/api/session');
    expect(session.body).toMatchObject({ user: { email: email.toLowerCase(), email_verified: false }, role: 'owner' });

    // The account is a real gateway account: the admin API sees it.
    const accountId = (answer.body as { account: { id: string } }).account.id;
    const admin = await setup.gateway.admin('GET', `/admin/accounts/${accountId}`);
    expect(admin.status).toBe(200);

    const mail = await waitForMail(setup.mail, email.toLowerCase(), /confirm your email/i);
    expect(mail.text).toContain(`${setup.gateway.consoleUrl}/verify-email?token=`);
    const token = linkToken(mail);
    const verified = await client.request('POST', '/api/auth/verify-email', { token });
    expect(verified.status, verified.text).toBe(200);
    expect(verified.body).toMatchObject({ user: { email_verified: true } });

    const again = await client.request('POST', '/api/auth/verify-email', { token });
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ error: { code: 'invalid_token' } });
  });

  it('refuses weak passwords and a taken email', async () => {
    const email = uniqueEmail();
    for (const weak of ['short1!', 'password123!', 'P@ssw0rd2024', '1234567890', 'qwertyuiop', `${email.split('@')[0]}-xyz!`]) {
      // A visitor each: sign-up allows 5 tries an hour per IP.
      const answer = await setup.client().signUp(email, weak);
      expect(answer.status, weak).toBe(400);
      expect(answer.body, weak).toMatchObject({ error: { code: 'weak_password', param: 'password' } });
    }
    const first = await setup.client().signUp(email, strongPassword());
    expect(first.status).toBe(201);
    const taken = await setup.client().signUp(email, strongPassword());
    expect(taken.status).toBe(409);
    expect(taken.body).toMatchObject({ error: { code: 'email_taken' } });
    // An account the admin API made counts as taken too.
    const adminEmail = uniqueEmail();
    await setup.gateway.admin('POST', '/admin/accounts', { email: adminEmail });
    expect((await setup.client().signUp(adminEmail, strongPassword())).status).toBe(409);
  });

  it('needs a verified email before keys can be created', async () => {
    const user = await signUpUser(setup, { verify: false });
    const refused = await user.client.request('POST', '/api/keys', { name: 'early' });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error: { code: 'email_unverified' } });
    const resent = await user.client.request('POST', '/api/auth/verify-email/resend');
    expect(resent.status).toBe(202);
    const token = linkToken(await waitForMail(setup.mail, user.email, /confirm your email/i, 2));
    expect((await user.client.request('POST', '/api/auth/verify-email', { token })).status).toBe(200);
    expect((await user.client.request('POST', '/api/keys', { name: 'now' })).status).toBe(201);
  });
});

describe('sign-in, sessions and sign-out', () => {
  it('signs in with the right password only, and answers alike for unknown emails', async () => {
    const user = await signUpUser(setup);
    const browser = setup.client();
    const wrong = await browser.signIn(user.email, `${user.password}x`);
    expect(wrong.status).toBe(401);
    expect(wrong.body).toMatchObject({ error: { code: 'invalid_credentials' } });
    const unknown = await browser.signIn(uniqueEmail(), user.password);
    expect(unknown.status).toBe(401);
    expect(unknown.body).toEqual(wrong.body);
    const ok = await browser.signIn(user.email.toUpperCase(), user.password);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toMatchObject({ status: 'signed_in', user: { email: user.email }, account: { id: user.accountId } });
    expect((await browser.request('GET', '/api/session')).body).toMatchObject({ user: { id: user.userId } });
  });

  it('lists sessions with device and IP, revokes one, and signs out everywhere', async () => {
    const user = await signUpUser(setup);
    const phone = new ConsoleClient(setup.gateway.consoleUrl, { userAgent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Version/17.0 Mobile/15E148 Safari/604.1' });
    expect((await phone.signIn(user.email, user.password)).status).toBe(200);
    const laptop = setup.client();
    expect((await laptop.signIn(user.email, user.password)).status).toBe(200);

    const listed = await user.client.request<{ data: Array<{ id: string; device: string; ip: string; current: boolean; last_seen_at: string }> }>('GET', '/api/me/sessions');
    expect(listed.status).toBe(200);
    expect(listed.body.data).toHaveLength(3);
    const phoneSession = listed.body.data.find((session) => session.ip === phone.ip);
    expect(phoneSession).toMatchObject({ device: 'Safari on iOS', current: false });
    expect(listed.body.data.filter((session) => session.current)).toHaveLength(1);
    expect(listed.body.data.find((session) => session.current)?.ip).toBe(user.client.ip);

    const revoked = await user.client.request('DELETE', `/api/me/sessions/${phoneSession?.id}`);
    expect(revoked.status).toBe(204);
    expect((await phone.request('GET', '/api/keys')).status).toBe(401);
    expect((await laptop.request('GET', '/api/keys')).status).toBe(200);

    const everywhere = await laptop.request('POST', '/api/auth/sign-out-everywhere');
    expect(everywhere.status).toBe(204);
    expect((await laptop.request('GET', '/api/keys')).status).toBe(401);
    expect((await user.client.request('GET', '/api/keys')).status).toBe(401);
  });

  it('signs out this browser only', async () => {
    const user = await signUpUser(setup);
    const other = setup.client();
    expect((await other.signIn(user.email, user.password)).status).toBe(200);
    const out = await user.client.request('POST', '/api/auth/sign-out');
    expect(out.status).toBe(204);
    expect(out.setCookies.some((line) => /^unigate_session=;.*Max-Age=0/.test(line))).toBe(true);
    expect((await user.client.request('GET', '/api/session')).body).toMatchObject({ user: null });
    expect((await other.request('GET', '/api/session')).body).toMatchObject({ user: { id: user.userId } });
  });
});

describe('password reset and change', () => {
  it('mails a reset link that works once, ends every session and keeps API keys', async () => {
    const user = await signUpUser(setup);
    const created = await user.client.request<{ secret: string }>('POST', '/api/keys', { name: 'server' });
    expect(created.status).toBe(201);

    const stranger = setup.client();
    const unknown = await stranger.request('POST', '/api/auth/password-reset', { email: uniqueEmail() });
    expect(unknown.status).toBe(202);
    const asked = await stranger.request('POST', '/api/auth/password-reset', { email: user.email });
    expect(asked.status).toBe(202);
    const mail = await waitForMail(setup.mail, user.email, /reset your console password/i);
    expect(mail.text).toContain(`${setup.gateway.consoleUrl}/reset-password?token=`);
    const token = linkToken(mail);

    const weak = await stranger.request('POST', '/api/auth/password-reset/confirm', { token, password: 'password1234' });
    expect(weak.status).toBe(400);
    const newPassword = strongPassword();
    const reset = await stranger.request('POST', '/api/auth/password-reset/confirm', { token, password: newPassword });
    expect(reset.status, reset.text).toBe(204);
    const reused = await stranger.request('POST', '/api/auth/password-reset/confirm', { token, password: strongPassword() });
    expect(reused.status).toBe(400);
    expect(reused.body).toMatchObject({ error: { code: 'invalid_token' } });

    expect((await user.client.request('GET', '/api/keys')).status).toBe(401);
    expect((await setup.client().signIn(user.email, user.password)).status).toBe(401);
    expect((await setup.client().signIn(user.email, newPassword)).status).toBe(200);
    // The key made before the reset still works on the API.
    const models = await fetch(`${setup.gateway.baseURL}/models`, { headers: { authorization: `Bearer ${created.body.secret}` } });
    expect(models.status).toBe(200);
  });

  it('refuses a reset link after 30 minutes', async () => {
    const user = await signUpUser(setup);
    const stranger = setup.client();
    expect((await stranger.request('POST', '/api/auth/password-reset', { email: user.email })).status).toBe(202);
    const token = linkToken(await waitForMail(setup.mail, user.email, /reset your console password/i));
    setup.shift.offset += 31 * 60_000;
    try {
      const late = await stranger.request('POST', '/api/auth/password-reset/confirm', { token, password: strongPassword() });
      expect(late.status).toBe(400);
      expect(late.body).toMatchObject({ error: { code: 'invalid_token' } });
    } finally {
      setup.shift.offset -= 31 * 60_000;
    }
  });

  it('changes the password with the current one; other sessions end, this one stays', async () => {
    const user = await signUpUser(setup);
    const other = setup.client();
    expect((await other.signIn(user.email, user.password)).status).toBe(200);
    const wrong = await user.client.request('POST', '/api/me/password', { current_password: 'not it at all 123', new_password: strongPassword() });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toMatchObject({ error: { code: 'invalid_credentials', param: 'current_password' } });
    const newPassword = strongPassword();
    expect((await user.client.request('POST', '/api/me/password', { current_password: user.password, new_password: newPassword })).status).toBe(204);
    expect((await user.client.request('GET', '/api/keys')).status).toBe(200);
    expect((await other.request('GET', '/api/keys')).status).toBe(401);
    expect((await setup.client().signIn(user.email, newPassword)).status).toBe(200);
  });
});

describe('accounts made through the admin API', () => {
  it('sign in with the password the operator set, as the owner, and keep working after the rehash', async () => {
    const email = uniqueEmail('operator-made');
    const password = strongPassword();
    const account = await setup.gateway.admin<{ id: string }>('POST', '/admin/accounts', { email, password });
    expect(account.status).toBe(201);
    const browser = setup.client();
    expect((await browser.signIn(email, 'wrong password 42x')).status).toBe(401);
    const first = await browser.signIn(email, password);
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({ account: { id: account.body.id }, role: 'owner', user: { email_verified: true } });
    const second = await setup.client().signIn(email, password);
    expect(second.status).toBe(200);
  });

  it('without a password, get one through the reset link and then sign in', async () => {
    const email = uniqueEmail('api-only');
    const account = await setup.gateway.admin<{ id: string }>('POST', '/admin/accounts', { email });
    const browser = setup.client();
    expect((await browser.signIn(email, 'anything at all 9')).status).toBe(401);
    expect((await browser.request('POST', '/api/auth/password-reset', { email })).status).toBe(202);
    const token = linkToken(await waitForMail(setup.mail, email, /reset your console password/i));
    const password = strongPassword();
    expect((await browser.request('POST', '/api/auth/password-reset/confirm', { token, password })).status).toBe(204);
    const signedIn = await setup.client().signIn(email, password);
    expect(signedIn.status, signedIn.text).toBe(200);
    expect(signedIn.body).toMatchObject({ account: { id: account.body.id }, role: 'owner' });
  });
});

describe('without SMTP_URL', () => {
  it('writes the one-time link to the log line instead of mailing it, and never the password', async () => {
    const gateway = await startTestGateway({ env: { TRUST_PROXY: 'all' } });
    try {
      const client = new ConsoleClient(gateway.consoleUrl);
      const email = uniqueEmail();
      const password = strongPassword();
      expect((await client.signUp(email, password)).status).toBe(201);
      const deadline = Date.now() + 5000;
      let line: string | undefined;
      while (line === undefined && Date.now() < deadline) {
        line = gateway.logs.find((entry) => entry.includes('console mail not sent') && entry.includes(email));
        if (line === undefined) await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(line).toBeDefined();
      const token = /verify-email\?token=([A-Za-z0-9_-]+)/.exec(line ?? '')?.[1];
      expect(token).toBeDefined();
      expect((await client.request('POST', '/api/auth/verify-email', { token })).status).toBe(200);
      expect(gateway.logs.join('\n')).not.toContain(password);
      expect((await client.request('GET', '/api/config')).body).toMatchObject({ mail_configured: false, api_base_url: gateway.url, console_url: gateway.consoleUrl });
    } finally {
      await gateway.close();
    }
  });
});

describe('with CONSOLE_SIGN_UP=false', () => {
  it('refuses sign-up and says so in the config, while existing accounts still sign in', async () => {
    const gateway = await startTestGateway({ env: { TRUST_PROXY: 'all', CONSOLE_SIGN_UP: 'false' } });
    try {
      const client = new ConsoleClient(gateway.consoleUrl);
      expect((await client.request('GET', '/api/config')).body).toMatchObject({ features: { sign_up: false } });
      const refused = await client.signUp(uniqueEmail(), strongPassword());
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ error: { code: 'forbidden' } });
      const email = uniqueEmail();
      const password = strongPassword();
      expect((await gateway.admin('POST', '/admin/accounts', { email, password })).status).toBe(201);
      expect((await client.signIn(email, password)).status).toBe(200);
    } finally {
      await gateway.close();
    }
  });
});
