/**
 * The first owner of a fresh gateway, made in the browser as an operator would: `/operator/setup` with the admin
 * token, two-factor turned on, signed out and back in with a code. Leaves `page` signed in on the keys page.
 */
import { randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import { PASSWORD, nextTotpStep, totpCode, type ConsoleFixture } from './console-browser.js';

export async function becomeFirstOwner(fixture: ConsoleFixture, page: Page): Promise<{ email: string; secret: string }> {
  const consoleUrl = fixture.gateway.consoleUrl;
  const email = `owner-${randomBytes(4).toString('hex')}@example.com`;
  await page.goto(`${consoleUrl}/operator/setup`);
  await page.getByLabel('Admin token').fill(fixture.gateway.adminToken);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Create the owner' }).click();
  await page.waitForURL('**/security');
  await page.getByRole('button', { name: 'Set up two-factor' }).click();
  const secret = (await page.getByTestId('totp-secret').textContent()) ?? '';
  await page.getByLabel('Code from the app').fill(totpCode(secret, fixture.now()));
  await page.getByRole('button', { name: 'Turn on two-factor' }).click();
  await page.getByRole('list', { name: 'Backup codes' }).waitFor();
  await page.getByRole('button', { name: 'I have saved the codes' }).click();
  await page.getByRole('button', { name: /^Account menu/ }).click();
  await page.getByRole('menuitem', { name: 'Sign out', exact: true }).click();
  await page.waitForURL(/\/sign-in(?:\?|$)/);
  nextTotpStep(fixture);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByLabel('Code').fill(totpCode(secret, fixture.now()));
  await page.getByRole('button', { name: 'Verify' }).click();
  await page.waitForURL('**/keys');
  return { email, secret };
}
