/**
 * Single sign-on over the wire against a real OpenID provider (oidc-provider on 127.0.0.1): discovery, the code flow
 * with PKCE, state bound to the browser and used once, nonce, and ID tokens refused for another audience, another
 * issuer, another nonce or past their expiry; just-in-time membership with the role a claim maps; the account's
 * domain rules; operators signed in through the deployment's provider (OIDC_*) without a console second factor.
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { strongPassword, type ConsoleClient } from '../../support/console-client.js';
import { CookieJar, listenOidcTestProvider, mintIdToken, newSigningKey, signInAtProvider, type OidcTestProvider, type TestClient } from '../../support/oidc-test-provider.js';
import { startConsoleGateway, type ConsoleGateway } from './console-gateway.js';

let setup: ConsoleGateway;
let idp: OidcTestProvider;
let otherIssuer: OidcTestProvider;
let accountClient: TestClient;
let otherClient: TestClient;
const domain = `corp-${randomBytes(3).toString('hex')}.test`;
let owner: { client: ConsoleClient; email: string; password: string; accountId: string };

interface CallbackOutcome {
  status: number;
  location: string;
  setCookies: string[];
}

/** Delivers the provider's redirect to the console as the browser would (cookies sent, the 303 not followed). */
async function deliverCallback(client: ConsoleClient, back: URL): Promise<CallbackOutcome> {
  const response = await fetch(`${setup.gateway.consoleUrl}${back.pathname}${back.search}`, {
    headers: { cookie: client.cookieHeader(), 'x-forwarded-for': client.ip, 'user-agent': client.userAgent }, redirect: 'manual',
  });
  const setCookies = response.headers.getSetCookie();
  client.absorbCookies(setCookies);
  await response.text();
  return { status: response.status, location: response.headers.get('location') ?? '', setCookies };
}

async function startSso(client: ConsoleClient, body: Record<string, unknown>): Promise<URL> {
  const start = await client.request<{ authorization_url: string }>('POST', '/api/auth/sso/start', body);
  expect(start.status, start.text).toBe(200);
  return new URL(start.body.authorization_url);
}

/** A whole sign-in: start in the console, sign in at the provider as `login`, come back. */
async function ssoSignIn(client: ConsoleClient, body: Record<string, unknown>, login: string): Promise<CallbackOutcome & { authorization: URL; back: URL }> {
  const authorization = await startSso(client, body);
  const back = await signInAtProvider(new CookieJar(), authorization.toString(), login);
  return { ...(await deliverCallback(client, back)), authorization, back };
}

function refusal(outcome: CallbackOutcome): string {
  expect(outcome.status).toBe(303);
  const location = new URL(outcome.location, 'http://console.invalid');
  expect(location.pathname).toBe('/sign-in');
  return location.searchParams.get('sso_error') ?? '';
}

beforeAll(async () => {
  // Two issuers signing with the same key: a token of the other verifies by signature and must fail on `iss`.
  const signingKey = await newSigningKey();
  idp = await listenOidcTestProvider({ keys: [signingKey] });
  otherIssuer = await listenOidcTestProvider({ keys: [signingKey] });
  setup = await startConsoleGateway({
    OIDC_ISSUER: idp.issuer, OIDC_CLIENT_ID: 'gateway-operators', OIDC_CLIENT_SECRET: 'operators-secret-0123456789',
    OIDC_ROLE_CLAIM: 'groups', OIDC_ROLE_MAP: 'gateway-admins=admin,gateway-owners=owner',
    OIDC_ALLOW_HTTP_LOOPBACK: 'true', SSO_ALLOW_PRIVATE_ADDRESSES: 'true',
  });
  const redirectUri = `${setup.gateway.consoleUrl}/api/auth/sso/callback`;
  accountClient = { client_id: 'corp-console', client_secret: 'corp-secret-0123456789abcdef', redirect_uris: [redirectUri] };
  otherClient = { client_id: 'another-app', client_secret: 'another-secret-0123456789', redirect_uris: ['http://127.0.0.1:9/callback'] };
  await idp.start([{ client_id: 'gateway-operators', client_secret: 'operators-secret-0123456789', redirect_uris: [redirectUri] }, accountClient, otherClient]);
  // The same client and signing keys, under another issuer: its tokens verify by signature and must fail on `iss`.
  await otherIssuer.start([accountClient]);

  // The account's owner: made through the admin API, signed in with the password (email taken as verified).
  const email = `owner@${domain}`;
  const password = strongPassword();
  const account = await setup.gateway.admin<{ id: string }>('POST', '/admin/accounts', { email, password });
  expect(account.status).toBe(201);
  const client = setup.client();
  expect((await client.signIn(email, password)).status).toBe(200);
  owner = { client, email, password, accountId: account.body.id };
}, 60_000);

afterAll(async () => {
  await setup?.close();
  await idp?.close();
  await otherIssuer?.close();
});

describe('an account sets up single sign-on', () => {
  it('checks the issuer by discovery, keeps the client secret to itself and claims the domain once', async () => {
    const unreachable = await owner.client.request('PUT', '/api/sso', {
      issuer: 'http://127.0.0.1:9', client_id: 'x', client_secret: 'y', email_domains: [domain],
    });
    expect(unreachable.status).toBe(400);
    expect(unreachable.body).toMatchObject({ error: { param: 'issuer' } });
    const freeMail = await owner.client.request('PUT', '/api/sso', { issuer: idp.issuer, client_id: 'x', client_secret: 'y', email_domains: ['gmail.com'] });
    expect(freeMail.status).toBe(400);

    const saved = await owner.client.request<{ connection: Record<string, unknown> }>('PUT', '/api/sso', {
      issuer: idp.issuer, client_id: accountClient.client_id, client_secret: accountClient.client_secret, email_domains: [domain],
      require_sso: true, jit_role: 'viewer', role_claim: 'groups', role_map: { 'corp-developers': 'developer', 'corp-admins': 'admin' },
    });
    expect(saved.status, saved.text).toBe(200);
    expect(saved.text).not.toContain(accountClient.client_secret);
    expect(saved.body.connection).toMatchObject({ issuer: idp.issuer, client_secret_set: true, email_domains: [domain], jit_role: 'viewer' });
    // Owner is never a role single sign-on gives.
    const ownerRole = await owner.client.request('PUT', '/api/sso', { issuer: idp.issuer, client_id: 'x', email_domains: [domain], role_map: { g: 'owner' } });
    expect(ownerRole.status).toBe(400);

    // The secret is sealed at rest: the stored row does not hold it in clear.
    const services = setup.gateway.gateway.services;
    const stored = await services.storage.sso.getConnectionByOwner(owner.accountId);
    expect(stored?.clientSecret).toBe(accountClient.client_secret);

    // Another account cannot claim the same domain.
    const otherEmail = `someone-${randomBytes(3).toString('hex')}@elsewhere.test`;
    const otherPassword = strongPassword();
    expect((await setup.gateway.admin('POST', '/admin/accounts', { email: otherEmail, password: otherPassword })).status).toBe(201);
    const other = setup.client();
    expect((await other.signIn(otherEmail, otherPassword)).status).toBe(200);
    const taken = await other.request('PUT', '/api/sso', { issuer: idp.issuer, client_id: 'x', client_secret: 'y', email_domains: [domain] });
    expect(taken.status).toBe(409);

    // A member below admin may read the settings but not change them (checked again below with a developer).
    expect((await owner.client.request('GET', '/api/sso')).status).toBe(200);
  });
});

describe('a member signs in through the account\'s provider', () => {
  it('joins on first sign-in with the role the groups claim maps, through PKCE, state and nonce', async () => {
    idp.people.set('alice', { email: `Alice@${domain}`, email_verified: true, groups: ['corp-developers', 'unrelated'] });
    const browser = setup.client();
    const outcome = await ssoSignIn(browser, { email: `alice@${domain}`, next: '/usage?range=7d' }, 'alice');
    const { authorization } = outcome;
    expect(authorization.origin + authorization.pathname).toBe(`${idp.issuer}/auth`);
    expect(authorization.searchParams.get('redirect_uri')).toBe(`${setup.gateway.consoleUrl}/api/auth/sso/callback`);
    expect(authorization.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorization.searchParams.get('nonce')?.length).toBeGreaterThanOrEqual(32);
    expect(authorization.searchParams.get('state')?.length).toBeGreaterThanOrEqual(32);
    // The token endpoint received the verifier whose S256 is the challenge sent.
    const verifier = idp.verifiersSeen.at(-1) ?? '';
    expect(createHash('sha256').update(verifier).digest('base64url')).toBe(authorization.searchParams.get('code_challenge'));

    expect(outcome.status).toBe(303);
    expect(outcome.location).toBe('/usage?range=7d');
    const session = await browser.request<{ user: { email: string; email_verified: boolean }; role: string; account: { id: string } }>('GET', '/api/session');
    expect(session.body.user).toMatchObject({ email: `alice@${domain}`, email_verified: true });
    expect(session.body.role).toBe('developer');
    expect(session.body.account.id).toBe(owner.accountId);

    // The binding cookie was HttpOnly and Lax (it must come back on the provider's top-level redirect).
    const start = await setup.client().request('POST', '/api/auth/sso/start', { email: `alice@${domain}` });
    const binding = start.setCookies.find((line) => line.startsWith('unigate_sso='));
    expect(binding).toMatch(/HttpOnly/);
    expect(binding).toMatch(/SameSite=Lax/);

    // The same redirect delivered again is refused: the state was used.
    const replay = await deliverCallback(browser, outcome.back);
    expect(refusal(replay)).toMatch(/used already|unknown|expired/);
    expect(replay.setCookies.some((line) => line.startsWith('unigate_session='))).toBe(false);
  });

  it('maps the claim again at the next sign-in, and keeps people who have no role out when nothing maps', async () => {
    idp.people.set('alice2', { email: `alice2@${domain}`, email_verified: true, groups: ['corp-admins'] });
    const first = setup.client();
    expect((await ssoSignIn(first, { email: `alice2@${domain}` }, 'alice2')).location).toBe('/keys');
    expect((await first.request<{ role: string }>('GET', '/api/session')).body.role).toBe('admin');
    idp.people.set('alice2', { email: `alice2@${domain}`, email_verified: true, groups: ['corp-developers'] });
    const second = setup.client();
    await ssoSignIn(second, { email: `alice2@${domain}` }, 'alice2');
    expect((await second.request<{ role: string }>('GET', '/api/session')).body.role).toBe('developer');
    // A developer may read the SSO settings but not change them.
    expect((await second.request('PUT', '/api/sso', { issuer: idp.issuer, client_id: 'x', email_domains: [domain] })).status).toBe(403);
  });

  it('gives project memberships from the claim (project:<name>[:<role>]) and takes them back when the group is gone', async () => {
    const search = await owner.client.request<{ project: { id: string } }>('POST', '/api/projects', { name: 'Search' });
    expect(search.status, search.text).toBe(201);
    const other = await owner.client.request<{ project: { id: string } }>('POST', '/api/projects', { name: 'Ads' });
    expect(other.status, other.text).toBe(201);
    const settings = {
      issuer: idp.issuer, client_id: accountClient.client_id, client_secret: accountClient.client_secret, email_domains: [domain],
      require_sso: true, jit_role: 'viewer', role_claim: 'groups',
    };
    for (const wrong of ['project:', 'project:Search:', 'superuser']) {
      const refused = await owner.client.request('PUT', '/api/sso', { ...settings, role_map: { g: wrong } });
      expect(refused.status, wrong).toBe(400);
    }
    const saved = await owner.client.request('PUT', '/api/sso', {
      ...settings, role_map: { 'corp-developers': 'developer', 'corp-admins': 'admin', 'corp-search': 'project:Search:developer' },
    });
    expect(saved.status, saved.text).toBe(200);

    idp.people.set('ivy', { email: `ivy@${domain}`, email_verified: true, groups: ['corp-search'] });
    const ivy = setup.client();
    expect((await ssoSignIn(ivy, { email: `ivy@${domain}` }, 'ivy')).status).toBe(303);
    expect((await ivy.request<{ role: string }>('GET', '/api/session')).body.role).toBe('viewer');
    // Scoped to the project her group grants: the account's other projects are out of her sight.
    const seen = await ivy.request<{ data: Array<{ id: string; role?: string }> }>('GET', '/api/projects');
    expect(seen.status, seen.text).toBe(200);
    expect(seen.body.data.map((project) => project.id)).toEqual([search.body.project.id]);
    expect((await ivy.request('GET', `/api/projects/${other.body.project.id}`)).status).toBe(404);
    const members = await owner.client.request<{ data: Array<{ email: string; role: string }> }>('GET', `/api/projects/${search.body.project.id}/members`);
    expect(members.body.data).toEqual([expect.objectContaining({ email: `ivy@${domain}`, role: 'developer' })]);

    // Out of the group at the provider: the next sign-in ends the project membership.
    idp.people.set('ivy', { email: `ivy@${domain}`, email_verified: true, groups: [] });
    await ssoSignIn(setup.client(), { email: `ivy@${domain}` }, 'ivy');
    const after = await owner.client.request<{ data: unknown[] }>('GET', `/api/projects/${search.body.project.id}/members`);
    expect(after.body.data).toEqual([]);
  });

  it('refuses a callback delivered to another browser than the one that started it', async () => {
    idp.people.set('carol', { email: `carol@${domain}`, email_verified: true });
    const starter = setup.client();
    const authorization = await startSso(starter, { email: `carol@${domain}` });
    const back = await signInAtProvider(new CookieJar(), authorization.toString(), 'carol');
    const victim = setup.client();
    expect(refusal(await deliverCallback(victim, back))).toMatch(/another browser/);
    // And the state is spent: the starter cannot use it afterwards either.
    expect(refusal(await deliverCallback(starter, back))).toMatch(/used already|unknown|expired/);
  });

  it('follows only console paths after sign-in (no open redirect)', async () => {
    idp.people.set('dan', { email: `dan@${domain}`, email_verified: true });
    for (const next of ['//evil.example/steal', 'https://evil.example/', '/\\evil.example', 'javascript:alert(1)']) {
      const outcome = await ssoSignIn(setup.client(), { email: `dan@${domain}`, next }, 'dan');
      expect(outcome.location, next).toBe('/keys');
    }
  });

  it('refuses an email the provider does not vouch for, and one outside the account\'s domains', async () => {
    idp.people.set('eve', { email: `eve@${domain}`, email_verified: false });
    expect(refusal(await ssoSignIn(setup.client(), { email: `eve@${domain}` }, 'eve'))).toMatch(/email_verified/);
    // The provider says the address of another domain: the account's provider does not speak for it.
    idp.people.set('mallory', { email: `mallory@elsewhere-${randomBytes(2).toString('hex')}.test`, email_verified: true });
    expect(refusal(await ssoSignIn(setup.client(), { email: `mallory@${domain}` }, 'mallory'))).toMatch(/not one this sign-in answers for/);
  });

  it('never signs in, through an account\'s provider, a person who also belongs to another account', async () => {
    // frank has an account of his own (password), with an email in the SSO account's domain.
    const email = `frank@${domain}`;
    const password = strongPassword();
    const frankAccount = await setup.gateway.admin<{ id: string }>('POST', '/admin/accounts', { email, password });
    const frank = setup.client();
    expect((await frank.signIn(email, password)).status).toBe(200);
    idp.people.set('frank-at-idp', { email, email_verified: true, groups: ['corp-admins'] });
    const attacker = setup.client();
    expect(refusal(await ssoSignIn(attacker, { email }, 'frank-at-idp'))).toMatch(/belongs to other accounts/);
    expect(await setup.gateway.gateway.services.storage.console.getMembership(owner.accountId, (await frank.request<{ user: { id: string } }>('GET', '/api/session')).body.user.id)).toBeNull();
    // frank still signs in with his password: he is not a member of the account that requires SSO.
    expect((await setup.client().signIn(email, password)).status).toBe(200);
    expect(frankAccount.status).toBe(201);
  });

  it('refuses the password of a member whose account requires single sign-on (owners keep theirs)', async () => {
    const services = setup.gateway.gateway.services;
    const email = `grace@${domain}`;
    const password = strongPassword();
    const graceAccount = await setup.gateway.admin<{ id: string }>('POST', '/admin/accounts', { email, password });
    const grace = setup.client();
    expect((await grace.signIn(email, password)).status).toBe(200);
    const userId = (await grace.request<{ user: { id: string } }>('GET', '/api/session')).body.user.id;
    // grace also joins the SSO account (as an invitation would make her).
    await services.storage.scim.setMembership(owner.accountId, userId, 'developer', Date.now());
    const refused = await setup.client().signIn(email, password);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error: { code: 'sso_required' } });
    // The owner's password still works.
    expect((await setup.client().signIn(owner.email, owner.password)).status).toBe(200);
    expect(graceAccount.status).toBe(201);
  });

  it('refuses an ID token minted for another client, for another nonce, by another issuer, or expired', async () => {
    idp.people.set('henry', { email: `henry@${domain}`, email_verified: true });
    otherIssuer.people.set('henry', { email: `henry@${domain}`, email_verified: true });
    const attempt = async (substitute: (nonce: string) => Promise<string>): Promise<string> => {
      const browser = setup.client();
      const authorization = await startSso(browser, { email: `henry@${domain}` });
      const nonce = authorization.searchParams.get('nonce') ?? '';
      const forged = await substitute(nonce);
      idp.tokenAnswerHook = (body) => ({ ...body, id_token: forged });
      try {
        const back = await signInAtProvider(new CookieJar(), authorization.toString(), 'henry');
        const outcome = await deliverCallback(browser, back);
        expect(outcome.setCookies.some((line) => line.startsWith('unigate_session='))).toBe(false);
        return refusal(outcome);
      } finally {
        idp.tokenAnswerHook = null;
      }
    };
    // Signed by the provider, for the right nonce, but issued to another client: wrong audience.
    expect(await attempt((nonce) => mintIdToken(idp, otherClient, 'henry', nonce))).toMatch(/aud/);
    // The right client, another sign-in's nonce.
    expect(await attempt(() => mintIdToken(idp, accountClient, 'henry', 'another-nonce'))).toMatch(/nonce/);
    // Same signing keys and client, another issuer.
    expect(await attempt((nonce) => mintIdToken(otherIssuer, accountClient, 'henry', nonce))).toMatch(/iss/);

    // An ID token living 1 s, checked two minutes later (past the 60 s allowed skew).
    idp.idTokenTtlSeconds = 1;
    try {
      const browser = setup.client();
      const authorization = await startSso(browser, { email: `henry@${domain}` });
      const back = await signInAtProvider(new CookieJar(), authorization.toString(), 'henry');
      setup.shift.offset += 120_000;
      expect(refusal(await deliverCallback(browser, back))).toMatch(/expired/);
    } finally {
      setup.shift.offset -= 120_000;
      idp.idTokenTtlSeconds = 300;
    }
    // With none of that, henry signs in.
    expect((await ssoSignIn(setup.client(), { email: `henry@${domain}` }, 'henry')).location).toBe('/keys');
  });

  it('follows the provider\'s key rotation', async () => {
    idp.people.set('ivy', { email: `ivy@${domain}`, email_verified: true });
    expect((await ssoSignIn(setup.client(), { email: `ivy@${domain}` }, 'ivy')).location).toBe('/keys');
    await idp.rotateKeys();
    expect((await ssoSignIn(setup.client(), { email: `ivy@${domain}` }, 'ivy')).location).toBe('/keys');
  });
});

describe('operators sign in through the deployment\'s provider (OIDC_*)', () => {
  it('makes an operator from the role claim and lets the session in without a console second factor', async () => {
    idp.people.set('olga', { email: 'olga@ops.test', email_verified: true, groups: ['gateway-admins'] });
    const info = await setup.client().request<{ operator: boolean; redirect_uri: string }>('GET', '/api/auth/sso');
    expect(info.body.operator).toBe(true);
    const browser = setup.client();
    const outcome = await ssoSignIn(browser, { operator: true, next: '/operator' }, 'olga');
    expect(outcome.location).toBe('/operator');
    const me = await browser.request<{ role: string; two_factor_required: boolean }>('GET', '/api/operator/me');
    expect(me.status, me.text).toBe(200);
    expect(me.body).toMatchObject({ role: 'admin', two_factor_required: false });
    // An operator page's API answers (it needs a second factor from password sessions).
    const settings = await browser.request<{ source: string; connection: { client_id: string } }>('GET', '/api/operator/sso');
    expect(settings.status, settings.text).toBe(200);
    expect(settings.body.source).toBe('environment');
    expect(settings.text).not.toContain('operators-secret');
    // An admin cannot change it, and nobody can while the environment sets it.
    expect((await browser.request('PUT', '/api/operator/sso', { issuer: idp.issuer, client_id: 'x', client_secret: 'y' })).status).toBe(403);
  });

  it('refuses a person the claims give no operator role', async () => {
    idp.people.set('peter', { email: 'peter@ops.test', email_verified: true, groups: ['staff'] });
    expect(refusal(await ssoSignIn(setup.client(), { operator: true }, 'peter'))).toMatch(/not an operator/);
  });
});
