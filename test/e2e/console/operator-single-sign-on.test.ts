/**
 * Operators' single sign-on set in the operator console (no OIDC_* in the environment): only an owner (with a second
 * factor) sets it, the change is audited without its secret, and operators then sign in through it — the role the
 * claim maps applied at every sign-in, a disabled operator refused, and the SSO session kept across accounts.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode, type ConsoleClient } from '../../support/console-client.js';
import { CookieJar, listenOidcTestProvider, signInAtProvider, type OidcTestProvider } from '../../support/oidc-test-provider.js';
import { startConsoleGateway, type ConsoleGateway } from './console-gateway.js';

let setup: ConsoleGateway;
let idp: OidcTestProvider;
let owner: ConsoleClient;
const client = { client_id: 'ops-console', client_secret: 'ops-secret-0123456789abcdef' };
const opsDomain = `ops-${randomBytes(3).toString('hex')}.test`;

async function operatorSsoSignIn(browser: ConsoleClient, login: string): Promise<string> {
  const start = await browser.request<{ authorization_url: string }>('POST', '/api/auth/sso/start', { operator: true, next: '/operator' });
  expect(start.status, start.text).toBe(200);
  const back = await signInAtProvider(new CookieJar(), start.body.authorization_url, login);
  const response = await fetch(`${setup.gateway.consoleUrl}${back.pathname}${back.search}`, {
    headers: { cookie: browser.cookieHeader(), 'x-forwarded-for': browser.ip }, redirect: 'manual',
  });
  browser.absorbCookies(response.headers.getSetCookie());
  await response.text();
  return response.headers.get('location') ?? '';
}

beforeAll(async () => {
  idp = await listenOidcTestProvider();
  setup = await startConsoleGateway({ OIDC_ALLOW_HTTP_LOOPBACK: 'true', PUBLIC_RATE_LIMIT_PER_MINUTE: '5' });
  await idp.start([{ ...client, redirect_uris: [`${setup.gateway.consoleUrl}/api/auth/sso/callback`] }]);
  owner = setup.client();
  const made = await owner.request('POST', '/api/operator/bootstrap', { admin_token: setup.gateway.adminToken, email: `root@${opsDomain}`, password: 'Tide-41ab9c-Lantern' });
  expect(made.status, made.text).toBe(201);
  const started = await owner.request<{ secret: string }>('POST', '/api/me/two-factor/setup');
  expect((await owner.request('POST', '/api/me/two-factor/enable', { code: totpCode(started.body.secret, Date.now()) })).status).toBe(200);
}, 60_000);

afterAll(async () => {
  await setup?.close();
  await idp?.close();
});

describe('operators\' single sign-on set in the console', () => {
  it('is set by an owner, audited without its secret, and offered on the sign-in page', async () => {
    expect((await setup.client().request<{ operator: boolean }>('GET', '/api/auth/sso')).body.operator).toBe(false);
    const saved = await owner.request<{ connection: { email_domains: string[] } }>('PUT', '/api/operator/sso', {
      issuer: idp.issuer, client_id: client.client_id, client_secret: client.client_secret, email_domains: [opsDomain],
      role_claim: 'roles', role_map: { 'gw-admin': 'admin', 'gw-support': 'support' },
    });
    expect(saved.status, saved.text).toBe(200);
    expect(saved.body.connection.email_domains).toEqual([opsDomain]);
    expect((await owner.request<{ source: string }>('GET', '/api/operator/sso')).body.source).toBe('console');
    // Operators' domains claim nothing for accounts' sign-in by email.
    expect((await setup.client().request('POST', '/api/auth/sso/start', { email: `x@${opsDomain}` })).status).toBe(404);
    const audit = await owner.request<{ data: Array<{ action: string }> }>('GET', `/api/operator/audit?q=${encodeURIComponent('single sign-on')}`);
    expect(audit.body.data.map((entry) => entry.action)).toContain('set operators\' single sign-on');
    expect(JSON.stringify(audit.body)).not.toContain(client.client_secret);
    expect((await setup.client().request<{ operator: boolean }>('GET', '/api/auth/sso')).body.operator).toBe(true);
  });

  it('signs operators in with the claim\'s role each time, refuses other domains and disabled operators', async () => {
    idp.people.set('sam', { email: `sam@${opsDomain}`, email_verified: true, roles: ['gw-support'] });
    const first = setup.client();
    expect(await operatorSsoSignIn(first, 'sam')).toBe('/operator');
    expect((await first.request<{ role: string; two_factor_required: boolean }>('GET', '/api/operator/me')).body).toMatchObject({ role: 'support', two_factor_required: false });

    idp.people.set('sam', { email: `sam@${opsDomain}`, email_verified: true, roles: ['gw-admin'] });
    const second = setup.client();
    await operatorSsoSignIn(second, 'sam');
    const me = await second.request<{ role: string; user: { id: string } }>('GET', '/api/operator/me');
    expect(me.body.role).toBe('admin');
    // An admin may read operator pages but not change the operators' SSO.
    expect((await second.request('GET', '/api/operator/audit')).status).toBe(200);
    expect((await second.request('DELETE', '/api/operator/sso')).status).toBe(403);

    idp.people.set('outsider', { email: 'outsider@elsewhere.test', email_verified: true, roles: ['gw-admin'] });
    expect(decodeURIComponent(await operatorSsoSignIn(setup.client(), 'outsider'))).toMatch(/not one this sign-in answers for/);

    // An owner disables sam: the next SSO sign-in is refused.
    expect((await owner.request('POST', `/api/operator/operators/${me.body.user.id}/disable`)).status).toBeLessThan(300);
    expect(decodeURIComponent(await operatorSsoSignIn(setup.client(), 'sam'))).toMatch(/disabled/);
  });

  it('limits sign-in starts per caller address', async () => {
    const flooder = setup.client();
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 6; attempt += 1) statuses.push((await flooder.request('POST', '/api/auth/sso/start', { operator: true })).status);
    expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    const refused = await flooder.request('POST', '/api/auth/sso/start', { operator: true });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another address is not held back.
    expect((await setup.client().request('POST', '/api/auth/sso/start', { operator: true })).status).toBe(200);
  });
});
