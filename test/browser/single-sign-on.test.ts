/**
 * Single sign-on in Debian's Chromium against the real gateway and a real OpenID provider (oidc-provider on
 * 127.0.0.1): an account owner sets up the account's provider and a SCIM token on the Single sign-on page; a member
 * signs in from the sign-in page through the provider's own page and lands in the console with the role the groups
 * claim maps; an operator signs in through the deployment's provider (OIDC_*) and reads the operator SSO page.
 * Screenshots at 1280 px and 390 px, without horizontal overflow.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ensureChromium } from '../support/chromium.js';
import { expectCleanPage, openPage, PASSWORD, screenshot, startConsoleFixture, type ConsoleFixture } from '../support/console-browser.js';
import { listenOidcTestProvider, type OidcTestProvider } from '../support/oidc-test-provider.js';

const chromiumPresent = ensureChromium();
let fixture: ConsoleFixture;
let idp: OidcTestProvider;
const domain = `acme-${randomBytes(3).toString('hex')}.test`;
const accountClient = { client_id: 'acme-console', client_secret: 'acme-secret-0123456789abcdef' };

beforeAll(async () => {
  if (!chromiumPresent) return;
  idp = await listenOidcTestProvider();
  fixture = await startConsoleFixture({
    OIDC_ISSUER: idp.issuer, OIDC_CLIENT_ID: 'gateway-operators', OIDC_CLIENT_SECRET: 'operators-secret-0123456789',
    OIDC_ROLE_CLAIM: 'groups', OIDC_ROLE_MAP: 'gateway-admins=admin', OIDC_ALLOW_HTTP_LOOPBACK: 'true', SSO_ALLOW_PRIVATE_ADDRESSES: 'true',
  });
  const redirectUri = `${fixture.gateway.consoleUrl}/api/auth/sso/callback`;
  await idp.start([
    { client_id: 'gateway-operators', client_secret: 'operators-secret-0123456789', redirect_uris: [redirectUri] },
    { ...accountClient, redirect_uris: [redirectUri] },
  ]);
  idp.people.set('alice', { email: `alice@${domain}`, email_verified: true, groups: ['engineering'], name: 'Alice' });
  idp.people.set('olga', { email: `olga@ops-${randomBytes(2).toString('hex')}.test`, email_verified: true, groups: ['gateway-admins'] });
}, 300_000);

afterAll(async () => {
  await fixture?.close();
  await idp?.close();
});

async function shots(page: Page, name: string): Promise<void> {
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
    await page.waitForTimeout(100);
    expect(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'), `${name} ${width}`).toBeLessThanOrEqual(0);
    await screenshot(fixture, page, `${name}-${width}`);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

/** Signs in at the provider's own page as `login` (the browser was sent there by the console). */
async function signInAtProvider(page: Page, login: string, shot?: string): Promise<void> {
  await page.waitForURL(`${idp.issuer}/**`);
  await page.getByLabel('Person').fill(login);
  if (shot !== undefined) await screenshot(fixture, page, shot);
  await page.getByRole('button', { name: 'Sign in at the provider' }).click();
}

describe.skipIf(!chromiumPresent)('single sign-on in the browser', () => {
  it('an owner sets up the account\'s provider and SCIM; a member signs in through it', async () => {
    const ownerEmail = `owner@${domain}`;
    expect((await fixture.gateway.admin('POST', '/admin/accounts', { email: ownerEmail, password: PASSWORD })).status).toBe(201);
    const owner = await openPage(fixture.browser);
    const page = owner.page;
    await page.goto(`${fixture.gateway.consoleUrl}/sign-in`);
    await page.getByLabel('Email').fill(ownerEmail);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL('**/keys');

    await page.goto(`${fixture.gateway.consoleUrl}/single-sign-on`);
    await expect.poll(() => page.getByTestId('sso-redirect-uri').textContent()).toBe(`${fixture.gateway.consoleUrl}/api/auth/sso/callback`);
    await page.getByLabel('Issuer URL').fill(idp.issuer);
    await page.getByLabel('Client ID').fill(accountClient.client_id);
    await page.getByLabel('Client secret').fill(accountClient.client_secret);
    await page.getByLabel('Email domains').fill(domain);
    await page.getByLabel('Role on first sign-in').selectOption('viewer');
    await page.getByLabel('Role claim').fill('groups');
    await page.getByLabel('Role map').fill('engineering = developer\nplatform = admin');
    await page.getByRole('checkbox', { name: /Require single sign-on/ }).check();
    await screenshot(fixture, page, 'sso-account-form');
    await page.getByRole('button', { name: 'Save single sign-on' }).click();
    await page.getByText('Saved. The provider answered its discovery document.').waitFor();
    await page.getByRole('button', { name: 'Create a SCIM token' }).click();
    const token = (await page.getByTestId('scim-token').textContent()) ?? '';
    expect(token).toMatch(/^scim_/);
    await shots(page, 'sso-account-settings');
    // The secret never comes back to the page.
    expect(await page.content()).not.toContain(accountClient.client_secret);
    expectCleanPage(owner);
    await owner.context.close();

    const member = await openPage(fixture.browser);
    await member.page.goto(`${fixture.gateway.consoleUrl}/sign-in?next=%2Fusage`);
    await member.page.getByLabel('Email').fill(`alice@${domain}`);
    await shots(member.page, 'sso-sign-in');
    await member.page.getByRole('button', { name: 'Continue with single sign-on' }).click();
    await signInAtProvider(member.page, 'alice', 'sso-provider-page');
    await member.page.waitForURL('**/usage');
    const session = await member.page.evaluate(async () => (await fetch('/api/session')).json()) as { user: { email: string }; role: string };
    expect(session.user.email).toBe(`alice@${domain}`);
    expect(session.role).toBe('developer');
    expectCleanPage(member);
    await member.context.close();

    // A refused sign-in comes back to the sign-in page with the reason.
    idp.people.set('eve', { email: `eve@${domain}`, email_verified: false });
    const refused = await openPage(fixture.browser);
    await refused.page.goto(`${fixture.gateway.consoleUrl}/sign-in`);
    await refused.page.getByLabel('Email').fill(`eve@${domain}`);
    await refused.page.getByRole('button', { name: 'Continue with single sign-on' }).click();
    await signInAtProvider(refused.page, 'eve');
    await refused.page.waitForURL(/\/sign-in\?sso_error=/);
    await refused.page.getByText(/email_verified/).waitFor();
    await screenshot(fixture, refused.page, 'sso-refused');
    await refused.context.close();
  }, 180_000);

  it('an operator signs in through the deployment\'s provider and reads the operator SSO page', async () => {
    const operator = await openPage(fixture.browser);
    const page = operator.page;
    await page.goto(`${fixture.gateway.consoleUrl}/sign-in?next=%2Foperator%2Fsso`);
    await page.getByRole('button', { name: 'Operator sign-in with SSO' }).click();
    await signInAtProvider(page, 'olga');
    await page.waitForURL('**/operator/sso');
    await page.getByTestId('operator-sso-environment').waitFor();
    expect(await page.getByTestId('operator-sso-environment').textContent()).toContain(idp.issuer);
    await shots(page, 'sso-operator-settings');
    expectCleanPage(operator);
    await operator.context.close();
  }, 120_000);
});
