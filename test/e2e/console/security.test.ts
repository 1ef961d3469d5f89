/**
 * The console API's defences over the wire: CSRF (token and Origin), one account never reaching another's keys,
 * usage or sessions (IDOR), session fixation, brute force answered with 429 and Retry-After per IP and per
 * account, cookie flags over HTTP and for a TLS console, and the security headers of API answers.
 */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleClient, strongPassword, uniqueEmail } from '../../support/console-client.js';
import { awayFromWindowEdge, signUpUser, startConsoleGateway, type ConsoleGateway, type SignedUpUser } from './console-gateway.js';

let setup: ConsoleGateway;
let alice: SignedUpUser;
let bob: SignedUpUser;

beforeAll(async () => {
  setup = await startConsoleGateway();
  alice = await signUpUser(setup);
  bob = await signUpUser(setup);
});

afterAll(async () => {
  await setup?.close();
});

describe('CSRF', () => {
  it('refuses state changes without the token, with a wrong one, or from another origin', async () => {
    const missing = await alice.client.request('POST', '/api/keys', { name: 'csrf' }, { csrf: false });
    expect(missing.status).toBe(403);
    expect(missing.body).toMatchObject({ error: { code: 'csrf_failed' } });
    const wrong = await alice.client.request('POST', '/api/keys', { name: 'csrf' }, { csrf: 'x'.repeat(43) });
    expect(wrong.status).toBe(403);
    // Bob's token is no good for Alice's session.
    const crossed = await alice.client.request('POST', '/api/keys', { name: 'csrf' }, { csrf: bob.client.csrfToken ?? '' });
    expect(crossed.status).toBe(403);
    const foreign = await alice.client.request('POST', '/api/keys', { name: 'csrf' }, { headers: { origin: 'https://evil.example' } });
    expect(foreign.status).toBe(403);
    expect(foreign.body).toMatchObject({ error: { code: 'csrf_failed' } });
    const crossSite = await alice.client.request('POST', '/api/keys', { name: 'csrf' }, { headers: { 'sec-fetch-site': 'cross-site' } });
    expect(crossSite.status).toBe(403);
    const ownOrigin = await alice.client.request('POST', '/api/keys', { name: 'csrf' }, { headers: { origin: setup.gateway.consoleUrl, 'sec-fetch-site': 'same-origin' } });
    expect(ownOrigin.status, ownOrigin.text).toBe(201);
    // Without CONSOLE_URL, the origin of the address the browser used is the console's (any name of the machine).
    const port = new URL(setup.gateway.consoleUrl).port;
    const byName = await request(`${setup.gateway.consoleUrl}/api/keys`, {
      method: 'POST',
      headers: {
        host: `localhost:${port}`, origin: `http://localhost:${port}`, cookie: alice.client.cookieHeader(), 'x-csrf-token': alice.client.csrfToken ?? '',
        'x-forwarded-for': alice.client.ip, 'content-type': 'application/json',
      },
      body: JSON.stringify({ name: 'csrf' }),
    });
    expect(byName.statusCode, await byName.body.text()).toBe(201);
    const spoofed = await alice.client.request('POST', '/api/keys', { name: 'csrf' }, { headers: { origin: `http://evil.example:${port}` } });
    expect(spoofed.status).toBe(403);
    // Revoking, deleting sessions and signing out are state changes too.
    expect((await alice.client.request('POST', '/api/auth/sign-out-everywhere', undefined, { csrf: false })).status).toBe(403);
    expect((await alice.client.request('GET', '/api/session')).body).toMatchObject({ user: { id: alice.userId } });
  });

  it('protects sign-in and sign-up of visitors without a session through the pre-session cookie', async () => {
    const visitor = setup.client();
    const noToken = await visitor.request('POST', '/api/auth/sign-in', { email: alice.email, password: alice.password }, { csrf: false });
    expect(noToken.status).toBe(403);
    // A token read by another browser is bound to that browser's cookie.
    const other = setup.client();
    const otherToken = await other.refreshCsrf();
    const borrowed = await visitor.request('POST', '/api/auth/sign-in', { email: alice.email, password: alice.password }, { csrf: otherToken });
    expect(borrowed.status).toBe(403);
    const own = await visitor.request('POST', '/api/auth/sign-in', { email: alice.email, password: alice.password });
    expect(own.status, own.text).toBe(200);
  });
});

describe('one account never reaches another', () => {
  it('cannot read, change or revoke another account\'s key', async () => {
    const created = await alice.client.request<{ key: { id: string } }>('POST', '/api/keys', { name: 'alice-only' });
    const keyId = created.body.key.id;
    for (const [method, path, body] of [
      ['GET', `/api/keys/${keyId}`, undefined],
      ['PATCH', `/api/keys/${keyId}`, { name: 'stolen' }],
      ['PATCH', `/api/keys/${keyId}`, { status: 'disabled' }],
      ['POST', `/api/keys/${keyId}/revoke`, undefined],
    ] as const) {
      const answer = await bob.client.request(method, path, body);
      expect(answer.status, `${method} ${path}`).toBe(404);
      expect(answer.text).not.toContain('alice-only');
    }
    const listed = await bob.client.request<{ data: Array<{ id: string }> }>('GET', '/api/keys');
    expect(listed.body.data.some((key) => key.id === keyId)).toBe(false);
    const still = await alice.client.request<{ key: { name: string; status: string } }>('GET', `/api/keys/${keyId}`);
    expect(still.body.key).toMatchObject({ name: 'alice-only', status: 'enabled' });
  });

  it('cannot read another account\'s usage, even by naming its key or account', async () => {
    const created = await alice.client.request<{ key: { id: string }; secret: string }>('POST', '/api/keys', { name: 'usage-owner' });
    const models = await fetch(`${setup.gateway.baseURL}/models`, { headers: { authorization: `Bearer ${created.body.secret}` } });
    expect(models.status).toBe(200);
    // A refused call is logged under Alice's account.
    await fetch(`${setup.gateway.baseURL}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${created.body.secret}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'none', messages: [{ role: 'user', content: 'x' }] }) });
    await setup.gateway.gateway.services.usageLog.flush();
    const aliceSees = await alice.client.request<{ data: unknown[] }>('GET', `/api/usage?key_id=${created.body.key.id}`);
    expect(aliceSees.body.data.length).toBeGreaterThan(0);
    const byKey = await bob.client.request<{ data: unknown[] }>('GET', `/api/usage?key_id=${created.body.key.id}`);
    expect(byKey.body.data).toEqual([]);
    const byAccount = await bob.client.request<{ data: unknown[] }>('GET', `/api/usage?account_id=${alice.accountId}`);
    expect(byAccount.body.data).toEqual([]);
    const csv = await bob.client.raw('GET', `/api/usage.csv?account_id=${alice.accountId}&key_id=${created.body.key.id}`);
    expect((await csv.text()).trim().split('\r\n')).toHaveLength(1);
    const daily = await bob.client.request<{ data: unknown[] }>('GET', '/api/usage/daily');
    expect(daily.body.data).toEqual([]);
  });

  it('cannot list or end another user\'s sessions', async () => {
    const aliceSessions = await alice.client.request<{ data: Array<{ id: string }> }>('GET', '/api/me/sessions');
    const target = aliceSessions.body.data[0]?.id ?? '';
    const bobSessions = await bob.client.request<{ data: Array<{ id: string }> }>('GET', '/api/me/sessions');
    expect(bobSessions.body.data.some((session) => session.id === target)).toBe(false);
    const ended = await bob.client.request('DELETE', `/api/me/sessions/${target}`);
    expect(ended.status).toBe(404);
    expect((await alice.client.request('GET', '/api/session')).body).toMatchObject({ user: { id: alice.userId } });
  });
});

describe('session fixation', () => {
  it('never adopts a session id the browser brought; sign-in issues a new one', async () => {
    const planted = 'attacker-chosen-session-value-0123456789abcdef';
    const victim = setup.client();
    victim.cookies.set('unigate_session', planted);
    const signedIn = await victim.signIn(alice.email, alice.password);
    expect(signedIn.status, signedIn.text).toBe(200);
    const issued = victim.cookies.get('unigate_session');
    expect(issued).toBeDefined();
    expect(issued).not.toBe(planted);
    const attacker = await fetch(`${setup.gateway.consoleUrl}/api/session`, { headers: { cookie: `unigate_session=${planted}` } });
    expect(await attacker.json()).toMatchObject({ user: null });

    // A session the attacker holds and plants is replaced (and ended) by the victim's sign-in.
    const attackerClient = setup.client();
    expect((await attackerClient.signIn(bob.email, bob.password)).status).toBe(200);
    const attackerToken = attackerClient.cookies.get('unigate_session') ?? '';
    const victim2 = setup.client();
    victim2.cookies.set('unigate_session', attackerToken);
    victim2.csrfToken = attackerClient.csrfToken;
    expect((await victim2.signIn(alice.email, alice.password)).status).toBe(200);
    expect(victim2.cookies.get('unigate_session')).not.toBe(attackerToken);
    expect((await attackerClient.request('GET', '/api/session')).body).toMatchObject({ user: null });
  });
});

// A test may first wait out a window's edge (up to 20 s), then does its work: more than the default 20 s allows.
describe('brute force', { timeout: 90_000 }, () => {
  it('limits sign-in per IP with 429 and Retry-After', async () => {
    await awayFromWindowEdge(60_000, 8000);
    const guesser = setup.client();
    let last = await guesser.signIn(uniqueEmail(), 'guess number 0');
    for (let attempt = 1; attempt <= 12 && last.status !== 429; attempt += 1) last = await guesser.signIn(uniqueEmail(), `guess number ${attempt}`);
    expect(last.status).toBe(429);
    expect(last.body).toMatchObject({ error: { code: 'rate_limit_exceeded', type: 'rate_limit_error' } });
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another visitor is not affected.
    expect((await setup.client().signIn(bob.email, bob.password)).status).toBe(200);
  });

  it('limits guesses at one account from one IP, where the right password waits too, without locking it out elsewhere', async () => {
    await awayFromWindowEdge(5 * 60_000, 10_000);
    const target = await signUpUser(setup);
    const guesser = setup.client();
    let last = await guesser.signIn(target.email, 'wrong password 0 x');
    for (let attempt = 1; attempt <= 6 && last.status !== 429; attempt += 1) last = await guesser.signIn(target.email, `wrong password ${attempt} x`);
    expect(last.status).toBe(429);
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await guesser.signIn(target.email, target.password)).status).toBe(429);
    // The account's owner, elsewhere, signs in (test/e2e/console/sign-in-locks.test.ts has the rest of the rules).
    expect((await setup.client().signIn(target.email, target.password)).status).toBe(200);
    expect((await setup.client().signIn(alice.email, alice.password)).status).toBe(200);
  });

  it('limits password reset requests and sign-ups per IP', async () => {
    await awayFromWindowEdge(3_600_000, 15_000);
    const asker = setup.client();
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 7; attempt += 1) statuses.push((await asker.request('POST', '/api/auth/password-reset', { email: uniqueEmail() })).status);
    expect(statuses.slice(0, 5)).toEqual([202, 202, 202, 202, 202]);
    expect(statuses.at(-1)).toBe(429);
    const joiner = setup.client();
    const signUps: number[] = [];
    for (let attempt = 0; attempt < 6; attempt += 1) signUps.push((await joiner.request('POST', '/api/auth/sign-up', { email: uniqueEmail(), password: strongPassword() })).status);
    expect(signUps.slice(0, 5)).toEqual([201, 201, 201, 201, 201]);
    expect(signUps[5]).toBe(429);
  });

  it('limits second-factor guesses per user', async () => {
    await awayFromWindowEdge(5 * 60_000, 10_000);
    const user = await signUpUser(setup);
    const enrolment = await user.client.request<{ secret: string }>('POST', '/api/me/two-factor/setup');
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 6; attempt += 1) statuses.push((await user.client.request('POST', '/api/me/two-factor/enable', { code: '000000' })).status);
    expect(enrolment.status).toBe(200);
    expect(statuses.filter((status) => status === 400).length).toBeLessThanOrEqual(5);
    expect(statuses.at(-1)).toBe(429);
  });
});

describe('CSV export', () => {
  it('keeps what callers typed from running as a spreadsheet formula, after leading spaces or a carriage return too', async () => {
    const created = await alice.client.request<{ key: { id: string }; secret: string }>('POST', '/api/keys', { name: 'csv' });
    const models = ['  =HYPERLINK("http://evil.example","open")', '\r+cmd|calc', '@SUM(A1)'];
    for (const model of models) {
      await fetch(`${setup.gateway.baseURL}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${created.body.secret}`, 'content-type': 'application/json' }, body: JSON.stringify({ model, messages: [{ role: 'user', content: 'x' }] }) });
    }
    await setup.gateway.gateway.services.usageLog.flush();
    const csv = await (await alice.client.raw('GET', `/api/usage.csv?key_id=${created.body.key.id}`)).text();
    const modelCells = csv.trim().split('\r\n').slice(1).map((line) => /^[^,]*,[^,]*,[^,]*,("(?:[^"]|"")*"|[^,]*)/.exec(line)?.[1] ?? '');
    expect(modelCells.sort()).toEqual(["\"'  =HYPERLINK(\"\"http://evil.example\"\",\"\"open\"\")\"", "\"'\r+cmd|calc\"", "'@SUM(A1)"].sort());
  });
});

describe('the Host a request names (DNS rebinding)', () => {
  /** A request to the console listener naming `host`, as a browser on a rebound name would send it. */
  async function asHost(host: string, path: string, client: ConsoleClient = alice.client): Promise<{ status: number; body: Record<string, unknown> }> {
    const answer = await request(`${setup.gateway.consoleUrl}${path}`, { headers: { host, cookie: client.cookieHeader(), 'x-forwarded-for': client.ip } });
    const text = await answer.body.text();
    return { status: answer.statusCode, body: text.startsWith('{') ? JSON.parse(text) as Record<string, unknown> : {} };
  }

  it('without CONSOLE_URL, answers only the names it listens on, with its port', async () => {
    const port = new URL(setup.gateway.consoleUrl).port;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`]) expect((await asHost(host, '/api/session')).status, host).toBe(200);
    for (const host of [`rebound.evil.example:${port}`, 'rebound.evil.example', `localhost:${Number(port) + 1}`, `127.0.0.1.evil.example:${port}`]) {
      for (const path of ['/api/session', '/api/keys', '/api/console/referrals', '/']) {
        const answer = await asHost(host, path);
        expect(answer.status, `${host} ${path}`).toBe(421);
        if (path !== '/') expect(answer.body).toMatchObject({ error: { code: 'misdirected_request' } });
      }
    }
    // The load balancer's probe answers whatever name it uses.
    expect((await asHost('10.1.2.3:8081', '/healthz')).status).toBe(200);
  });

  it('builds its links from the name the browser used only when that name is one it listens on', async () => {
    const port = new URL(setup.gateway.consoleUrl).port;
    const referrals = await asHost(`localhost:${port}`, '/api/console/referrals');
    expect(referrals.status).toBe(200);
    expect(referrals.body.link).toMatch(new RegExp(`^http://localhost:${port}/sign-up\\?ref=`));
    expect((await asHost(`attacker.example:${port}`, '/api/console/referrals')).status).toBe(421);
  });
});

describe('cookies and headers', () => {
  it('sets HttpOnly, SameSite=Strict, Path=/ cookies without Secure over plain HTTP', async () => {
    const client = setup.client();
    const anonymous = await client.request('GET', '/api/session');
    const pre = anonymous.setCookies.find((line) => line.startsWith('unigate_csrf='));
    expect(pre).toMatch(/; Path=\/; HttpOnly; SameSite=Strict$/);
    const signedIn = await client.signIn(alice.email, alice.password);
    const session = signedIn.setCookies.find((line) => line.startsWith('unigate_session='));
    expect(session).toMatch(/^unigate_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+$/);
    expect(session).not.toMatch(/Secure/);
  });

  it('answers API requests with no-store, nosniff, frame and referrer denials and a deny-all CSP', async () => {
    const answer = await alice.client.request('GET', '/api/keys');
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
    expect(answer.headers.get('x-frame-options')).toBe('DENY');
    expect(answer.headers.get('referrer-policy')).toBe('no-referrer');
    expect(answer.headers.get('content-security-policy')).toContain("default-src 'none'");
    const unknown = await alice.client.request('GET', '/api/nothing-here');
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toMatch(/application\/json/);
    expect((await setup.client().request('GET', '/api/keys')).status).toBe(401);
  });

  it('uses __Host- cookies with Secure and HSTS when the console is served over TLS', async () => {
    const tls = await startConsoleGateway({ CONSOLE_URL: 'https://console.example.test' });
    try {
      const client = new ConsoleClient(tls.gateway.consoleUrl);
      const anonymous = await client.request('GET', '/api/session');
      expect(anonymous.setCookies.find((line) => line.startsWith('__Host-unigate_csrf='))).toMatch(/; Path=\/; HttpOnly; SameSite=Strict; Secure$/);
      const email = uniqueEmail();
      const signedUp = await client.request('POST', '/api/auth/sign-up', { email, password: strongPassword() }, { headers: { origin: 'https://console.example.test' } });
      expect(signedUp.status, signedUp.text).toBe(201);
      expect(signedUp.setCookies.find((line) => line.startsWith('__Host-unigate_session='))).toMatch(/; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+; Secure$/);
      expect(signedUp.headers.get('strict-transport-security')).toMatch(/max-age=\d+/);
      // The listener's own address is not the console's origin.
      const wrongOrigin = await client.request('POST', '/api/auth/sign-out', undefined, { headers: { origin: tls.gateway.consoleUrl } });
      expect(wrongOrigin.status).toBe(403);
      const config = await client.request('GET', '/api/config');
      expect(config.body).toMatchObject({ console_url: 'https://console.example.test', mail_configured: true, features: { sign_up: true } });
    } finally {
      await tls.close();
    }
  });
});
