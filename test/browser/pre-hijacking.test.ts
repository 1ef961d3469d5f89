/**
 * Account pre-hijacking in Debian's Chromium. A squatter signs up with the victim's email in their own browser:
 * the console says what waits for the confirmed email, and the Members and Security pages refuse an invitation
 * and a second factor. What an earlier release let a squatter set up (a co-owner, a key, a second factor) is then
 * planted as it was stored. The victim, in another browser, is told the email is taken, resets the password through
 * the mailed link and signs in: no second factor is asked for, the Members page lists only them, the key is
 * revoked, and the squatter's and co-owner's sessions are over. Screenshots of the banner at 1280 and 390 px, light
 * and dark.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashBackupCode, newBackupCodes, normalizeBackupCode } from '../../src/console/backup-codes.js';
import { INVITATION_TTL_MS } from '../../src/console/routes/member-routes.js';
import { hashToken, newSecretToken } from '../../src/console/secret-token.js';
import { newTotpSecret } from '../../src/console/totp.js';
import { newId } from '../../src/shared/ids.js';
import { ConsoleClient, strongPassword } from '../support/console-client.js';
import { expectCleanPage, mailedLink, openPage, PASSWORD, screenshot, startConsoleFixture, type ConsoleFixture } from '../support/console-browser.js';
import type { Page } from 'playwright-core';

let fixture: ConsoleFixture;

beforeAll(async () => {
  fixture = await startConsoleFixture();
}, 120_000);

afterAll(async () => {
  await fixture?.close();
});

async function signUpThroughForm(page: Page, email: string, password: string): Promise<void> {
  await page.goto(`${fixture.gateway.consoleUrl}/sign-up`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByLabel('Repeat the password').fill(password);
  await page.getByRole('button', { name: 'Create account' }).click();
}

async function signInThroughForm(page: Page, email: string, password: string): Promise<void> {
  await page.goto(`${fixture.gateway.consoleUrl}/sign-in`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

describe('account pre-hijacking in the browser', () => {
  it('a squatted sign-up leaves nothing to the real owner once they reset the password', async () => {
    const storage = fixture.gateway.gateway.services.storage;
    const victimEmail = `victim-${randomBytes(5).toString('hex')}@example.com`;
    const squatterPassword = `${PASSWORD} squat`;

    // The squatter's browser.
    const squatter = await openPage(fixture.browser);
    await signUpThroughForm(squatter.page, victimEmail, squatterPassword);
    await squatter.page.waitForURL('**/keys');
    const banner = squatter.page.getByText(/Confirm your email address to create API keys, invite members, turn on two-factor sign-in/);
    await banner.waitFor();
    expect(await squatter.page.getByRole('button', { name: 'Create key' }).isDisabled()).toBe(true);
    await screenshot(fixture, squatter.page, 'unverified-1280-light');

    await squatter.page.goto(`${fixture.gateway.consoleUrl}/members`);
    await squatter.page.getByLabel('Email').fill(`accomplice-${randomBytes(4).toString('hex')}@example.com`);
    await squatter.page.getByRole('button', { name: 'Send invitation' }).click();
    await squatter.page.getByText('Confirm your email address first').waitFor();
    await squatter.page.goto(`${fixture.gateway.consoleUrl}/security`);
    await squatter.page.getByRole('button', { name: 'Set up two-factor' }).click();
    await squatter.page.getByText('Confirm your email address first').waitFor();
    await screenshot(fixture, squatter.page, 'unverified-security-1280-light');
    expectCleanPage(squatter);

    // The banner at phone width and in dark mode.
    for (const [name, options] of [['unverified-390-light', { width: 390, height: 844 }], ['unverified-1280-dark', { colorScheme: 'dark' as const }], ['unverified-390-dark', { width: 390, height: 844, colorScheme: 'dark' as const }]] as const) {
      const other = await openPage(fixture.browser, options);
      await signInThroughForm(other.page, victimEmail, squatterPassword);
      await other.page.waitForURL('**/keys');
      await other.page.getByText(/Confirm your email address to create API keys/).waitFor();
      await screenshot(fixture, other.page, name);
      expectCleanPage(other);
      await other.context.close();
    }

    // What an earlier release let through, stored as it stored it: an accepted co-owner, a key, a second factor.
    const session = await (await squatter.page.request.get(`${fixture.gateway.consoleUrl}/api/session`)).json() as { user: { id: string }; account: { id: string } };
    const accountId = session.account.id;
    const now = Date.now();
    const token = newSecretToken();
    await storage.members.createInvitation({
      id: newId('inv', now), tokenHash: hashToken(token), accountId, email: `co-owner-${randomBytes(4).toString('hex')}@example.com`, role: 'owner',
      invitedBy: victimEmail, expiresAt: now + INVITATION_TTL_MS, acceptedAt: null, acceptedBy: null, revokedAt: null, createdAt: now,
    });
    const coOwner = new ConsoleClient(fixture.gateway.consoleUrl);
    expect((await coOwner.request('POST', '/api/invitations/accept', { token, password: strongPassword() })).status).toBe(200);
    const key = await fixture.gateway.admin<{ id: string; key: string }>('POST', `/admin/accounts/${accountId}/keys`, { name: 'left by the squatter' });
    expect(key.status).toBe(201);
    await storage.console.enableTotp(session.user.id, newTotpSecret(), 0, newBackupCodes().map((code) => hashBackupCode(normalizeBackupCode(code) as string)), now);

    // The victim's browser: the email is taken, so the password is reset through the mailed link.
    const victim = await openPage(fixture.browser);
    await signUpThroughForm(victim.page, victimEmail, PASSWORD);
    await victim.page.getByText(/already exists/).waitFor();
    await victim.page.goto(`${fixture.gateway.consoleUrl}/sign-in`);
    await victim.page.getByRole('link', { name: 'Forgot your password?' }).click();
    await victim.page.getByLabel('Email').fill(victimEmail);
    const mailsBefore = fixture.smtp.to(victimEmail).length;
    await victim.page.getByRole('button', { name: 'Send the link' }).click();
    const link = await mailedLink(fixture.smtp, victimEmail, 'reset-password', mailsBefore);
    await victim.page.goto(link);
    await victim.page.getByLabel('New password', { exact: true }).fill(PASSWORD);
    await victim.page.getByLabel('Repeat the new password').fill(PASSWORD);
    await victim.page.getByRole('button', { name: 'Set the password' }).click();
    await expect.poll(() => fixture.smtp.to(victimEmail).some((mail) => /clean start/i.test(mail.subject))).toBe(true);

    // Signing in asks for no second factor and opens an account that holds nothing of the squatter's.
    await signInThroughForm(victim.page, victimEmail, PASSWORD);
    await victim.page.waitForURL('**/keys');
    expect(await victim.page.getByRole('heading', { name: 'Two-factor authentication' }).count()).toBe(0);
    expect(await victim.page.getByText(/Confirm your email address/).count()).toBe(0);
    await victim.page.getByRole('row', { name: /left by the squatter/ }).getByText('Revoked').waitFor();
    await victim.page.goto(`${fixture.gateway.consoleUrl}/members`);
    const members = victim.page.getByRole('table').first();
    await members.getByText(victimEmail).waitFor();
    expect(await members.getByRole('row').count()).toBe(2);
    await screenshot(fixture, victim.page, 'clean-start-members-1280-light');
    expectCleanPage(victim);

    // The squatter's and the co-owner's sessions are over; the co-owner cannot remove the victim.
    expect((await (await squatter.page.request.get(`${fixture.gateway.consoleUrl}/api/session`)).json())).toMatchObject({ user: null });
    expect((await coOwner.request('GET', '/api/session')).body).toMatchObject({ user: null });
    expect((await coOwner.request('DELETE', `/api/members/${session.user.id}`)).status).toBe(401);
    expect((await fetch(`${fixture.gateway.baseURL}/models`, { headers: { authorization: `Bearer ${key.body.key}` } })).status).toBe(401);
    await squatter.context.close();
    await victim.context.close();
  }, 120_000);
});
