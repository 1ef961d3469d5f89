/**
 * The console in Chromium as an attacker and as a keyboard or phone user sees it: markup in key names and model
 * answers stays text, a sign-in never redirects off the site, every control has a label, dialogs trap and return
 * focus, no page is wider than a phone, and dark mode follows the system — with no CSP violation anywhere.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ensureChromium } from '../support/chromium.js';
import { CHAT_MODEL, PASSWORD, expectCleanPage, mailedLink, openPage, screenshot, signUpAndVerify, startConsoleFixture, type ConsoleFixture } from '../support/console-browser.js';

const chromiumPresent = ensureChromium();
let fixture: ConsoleFixture;
const email = `layout-${randomBytes(4).toString('hex')}@example.com`;
let accountId = '';
const XSS_NAME = '<img src=x onerror="window.__xss=1">';
const XSS_MESSAGE = '<script>window.__xss=2</script><img src=x onerror="window.__xss=3">';

beforeAll(async () => {
  if (!chromiumPresent) return;
  fixture = await startConsoleFixture();
}, 300_000);

afterAll(async () => {
  await fixture?.close();
});

/** Visible form controls without an accessible name (label, aria-label or aria-labelledby). */
function unlabelledControls(page: Page): Promise<string[]> {
  return page.evaluate(`[...document.querySelectorAll('input, select, textarea, button')]
    .filter((element) => element.offsetParent !== null)
    .filter((element) => {
      if (element.tagName === 'BUTTON') return (element.textContent ?? '').trim() === '' && !element.getAttribute('aria-label');
      return !(element.labels && element.labels.length > 0) && !element.getAttribute('aria-label') && !element.getAttribute('aria-labelledby');
    })
    .map((element) => element.outerHTML.slice(0, 120))`) as Promise<string[]>;
}

function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate('document.documentElement.scrollWidth - window.innerWidth') as Promise<number>;
}

describe.skipIf(!chromiumPresent)('console security and layout in Chromium', () => {
  it('renders hostile key names and model answers as text', async () => {
    const watched = await openPage(fixture.browser);
    const { page } = watched;
    accountId = await signUpAndVerify(fixture, page, email);
    expect((await fixture.gateway.admin('POST', `/admin/accounts/${accountId}/credits`, { amount_usd: 2 })).status).toBe(200);

    await page.goto(`${fixture.gateway.consoleUrl}/keys`);
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('dialog', { name: 'Create an API key' }).getByLabel('Name', { exact: true }).fill(XSS_NAME);
    await page.getByRole('dialog', { name: 'Create an API key' }).getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('button', { name: 'I have copied the key' }).click();
    await page.getByRole('row', { name: /onerror/ }).waitFor();
    expect(await page.locator('.key-name').first().textContent()).toBe(XSS_NAME);
    expect(await page.locator('.keys-table img').count()).toBe(0);

    await page.goto(`${fixture.gateway.consoleUrl}/playground`);
    await page.getByLabel('Model').selectOption(CHAT_MODEL);
    await page.getByLabel('Message').fill(XSS_MESSAGE);
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByTestId('answer-summary').waitFor();
    expect(await page.locator('.turn-user .turn-text').textContent()).toBe(XSS_MESSAGE);
    expect(await page.locator('.chat-log img, .chat-log script').count()).toBe(0);
    expect(await page.evaluate('window.__xss')).toBeUndefined();
    expectCleanPage(watched);
    await watched.context.close();
  }, 120_000);

  it('never follows a sign-in redirect off the site', async () => {
    const watched = await openPage(fixture.browser);
    const { page } = watched;
    for (const next of ['//evil.example/keys', 'https://evil.example/', '/\\evil.example']) {
      await page.goto(`${fixture.gateway.consoleUrl}/sign-in?next=${encodeURIComponent(next)}`);
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${fixture.gateway.consoleUrl}/keys`);
      await page.getByRole('button', { name: /^Account menu/ }).click();
      await page.getByRole('menuitem', { name: 'Sign out', exact: true }).click();
      await page.waitForURL(/\/sign-in(?:\?|$)/);
    }
    expectCleanPage(watched);
    await watched.context.close();
  }, 60_000);

  it('labels every control, traps and returns focus in dialogs, fits a phone, and follows dark mode', async () => {
    const signedOut = await openPage(fixture.browser, { width: 390, height: 844, colorScheme: 'dark' });
    for (const route of ['/sign-in', '/sign-up', '/reset-password']) {
      await signedOut.page.goto(`${fixture.gateway.consoleUrl}${route}`);
      await signedOut.page.getByRole('heading', { level: 1 }).waitFor();
      expect(await unlabelledControls(signedOut.page), route).toEqual([]);
      expect(await horizontalOverflow(signedOut.page), route).toBeLessThanOrEqual(0);
    }
    await screenshot(fixture, signedOut.page, 'reset-password-phone-dark');
    expectCleanPage(signedOut);
    await signedOut.context.close();

    for (const [width, colorScheme] of [[1280, 'light'], [390, 'dark']] as const) {
      const watched = await openPage(fixture.browser, { width, height: width === 390 ? 844 : 860, colorScheme });
      const { page } = watched;
      await page.goto(`${fixture.gateway.consoleUrl}/sign-in`);
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL('**/keys');
      const background = await page.evaluate('getComputedStyle(document.body).backgroundColor') as string;
      const [red = 0] = (background.match(/\d+/g) ?? []).map(Number);
      if (colorScheme === 'dark') expect(red, background).toBeLessThan(60);
      else expect(red, background).toBeGreaterThan(200);

      // Every page an owner sees, on a new account: empty states, and billing as it reads without Stripe configured.
      for (const route of ['/keys', '/models', '/usage', '/playground', '/quickstart', '/security', '/billing', '/transactions', '/plans', '/referrals', '/members', '/alerts', '/support']) {
        await page.goto(`${fixture.gateway.consoleUrl}${route}`);
        await page.getByRole('heading', { level: 1 }).waitFor();
        await page.waitForLoadState('networkidle');
        expect(await unlabelledControls(page), route).toEqual([]);
        expect(await horizontalOverflow(page), `${route} at ${width}px`).toBeLessThanOrEqual(0);
        if (width === 390) await screenshot(fixture, page, `${route.slice(1)}-phone-dark`);
      }

      if (width === 1280) {
        // Keyboard only: Tab reaches "Create key", Enter opens the dialog with focus inside, Escape closes it and
        // gives focus back to the button.
        await page.goto(`${fixture.gateway.consoleUrl}/keys`);
        await page.getByRole('heading', { name: 'API keys' }).waitFor();
        let reached = false;
        for (let presses = 0; presses < 40 && !reached; presses += 1) {
          await page.keyboard.press('Tab');
          reached = (await page.evaluate('document.activeElement?.textContent')) === 'Create key';
        }
        expect(reached).toBe(true);
        await page.keyboard.press('Enter');
        const dialog = page.getByRole('dialog', { name: 'Create an API key' });
        await dialog.waitFor();
        expect(await page.evaluate("document.activeElement?.closest('dialog') !== null")).toBe(true);
        expect(await unlabelledControls(page)).toEqual([]);
        await page.keyboard.press('Escape');
        await dialog.waitFor({ state: 'hidden' });
        expect(await page.evaluate('document.activeElement?.textContent')).toBe('Create key');
      } else {
        // On a phone the navigation folds behind a button that says whether it is open.
        const toggle = page.getByRole('button', { name: 'Menu', exact: true });
        expect(await toggle.getAttribute('aria-expanded')).toBe('false');
        await toggle.click();
        expect(await toggle.getAttribute('aria-expanded')).toBe('true');
        await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Usage' }).click();
        await page.waitForURL('**/usage');
      }
      expectCleanPage(watched);
      await watched.context.close();
    }
  }, 150_000);

  it('ends another browser\'s session, then every session with "sign out everywhere"', async () => {
    const signIn = async (page: Page) => {
      await page.goto(`${fixture.gateway.consoleUrl}/sign-in`);
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL('**/keys');
    };
    const first = await openPage(fixture.browser);
    const second = await openPage(fixture.browser);
    const third = await openPage(fixture.browser);
    for (const watched of [first, second, third]) await signIn(watched.page);

    await first.page.goto(`${fixture.gateway.consoleUrl}/security`);
    const table = first.page.getByRole('table', { name: 'Browsers signed in to this account' });
    await table.getByText('This browser').waitFor();
    const others = table.getByRole('button', { name: /^Sign out Chrome/ });
    await expect.poll(() => others.count()).toBeGreaterThanOrEqual(2);
    const before = await others.count();
    await others.first().click();
    await expect.poll(() => others.count()).toBe(before - 1);
    // Exactly one of the other two browsers lost its session.
    const signedOut = async (page: Page) => {
      await page.goto(`${fixture.gateway.consoleUrl}/keys`);
      await page.waitForURL(/\/(keys|sign-in)/);
      await page.getByRole('heading', { level: 1 }).waitFor();
      return page.url().includes('/sign-in');
    };
    expect([await signedOut(second.page), await signedOut(third.page)].filter(Boolean)).toHaveLength(1);

    await first.page.getByRole('button', { name: 'Sign out everywhere' }).click();
    await first.page.waitForURL(/\/sign-in(?:\?|$)/);
    expect(await signedOut(second.page)).toBe(true);
    expect(await signedOut(third.page)).toBe(true);
    for (const watched of [first, second, third]) {
      expectCleanPage(watched);
      await watched.context.close();
    }
  }, 60_000);

  it('resets a forgotten password from the mailed link', async () => {
    const watched = await openPage(fixture.browser);
    const { page } = watched;
    const mailsBefore = fixture.smtp.to(email).length;
    await page.goto(`${fixture.gateway.consoleUrl}/sign-in`);
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Send the link' }).click();
    await page.getByRole('heading', { name: 'Check your mail' }).waitFor();
    const link = await mailedLink(fixture.smtp, email, 'reset-password', mailsBefore);
    await page.goto(link);
    const newPassword = `${PASSWORD} renewed`;
    await page.getByLabel('New password', { exact: true }).fill(newPassword);
    await page.getByLabel('Repeat the new password').fill(newPassword);
    await screenshot(fixture, page, 'reset-password-confirm');
    await page.getByRole('button', { name: 'Set the password' }).click();
    await page.getByRole('heading', { name: 'Password changed' }).waitFor();
    // The link works once.
    await page.goto(link);
    await page.getByLabel('New password', { exact: true }).fill(`${newPassword} again`);
    await page.getByLabel('Repeat the new password').fill(`${newPassword} again`);
    await page.getByRole('button', { name: 'Set the password' }).click();
    await page.getByRole('alert').waitFor();
    await page.goto(`${fixture.gateway.consoleUrl}/sign-in`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(newPassword);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/keys');
    expectCleanPage(watched);
    await watched.context.close();
  }, 60_000);
});
