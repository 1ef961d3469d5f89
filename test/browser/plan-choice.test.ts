/**
 * Choosing a plan in Debian's Chromium against the real gateway: the operator offers two self-service plans; the
 * owner opens the Plans page, chooses one in the confirming <dialog> (the charge and the balance shown before
 * paying), the balance pays it and its invoice is listed on the Billing page; a change to the other plan pays the
 * difference. With too little balance the dialog says so and the pay button stays off. Screenshots at desktop
 * width, at 390 px and in dark mode, with no page overflow at the phone's width. Also a key's own quota alert
 * threshold set on the Alerts page.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ensureChromium } from '../support/chromium.js';
import { expectCleanPage, openPage, screenshot, signUpAndVerify, startConsoleFixture, type ConsoleFixture } from '../support/console-browser.js';

const chromiumPresent = ensureChromium();
let fixture: ConsoleFixture;

beforeAll(async () => {
  if (!chromiumPresent) return;
  fixture = await startConsoleFixture({ SELLER_NAME: 'Example Gateway Ltd', INVOICE_SERIES: 'PC' });
}, 300_000);

afterAll(async () => {
  await fixture?.close();
});

const unique = (prefix: string): string => `${prefix}-${randomBytes(4).toString('hex')}@example.com`;

async function balanceOf(accountId: string): Promise<number> {
  return ((await fixture.gateway.admin('GET', `/admin/accounts/${accountId}`)).body as { balance_usd: number }).balance_usd;
}

function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate('document.documentElement.scrollWidth - window.innerWidth') as Promise<number>;
}

describe.skipIf(!chromiumPresent)('choosing a plan in Chromium', () => {
  it('chooses and changes a self-service plan paid from the balance, with its invoices on the Billing page', async () => {
    const suffix = randomBytes(3).toString('hex');
    for (const plan of [
      { name: `Starter ${suffix}`, period: 'month', quota_usd: 10, price_usd: 5, overage: { policy: 'deny' } },
      { name: `Pro ${suffix}`, period: 'month', quota_usd: 50, price_usd: 20, overage: { policy: 'limit', limit_usd: 10 } },
    ]) {
      expect((await fixture.gateway.admin('POST', '/admin/plans', { ...plan, self_service: true })).status).toBe(201);
    }
    const watched = await openPage(fixture.browser);
    const { page } = watched;
    const accountId = await signUpAndVerify(fixture, page, unique('plans'));
    expect((await fixture.gateway.admin('POST', `/admin/accounts/${accountId}/credits`, { amount_usd: 12 })).status).toBe(200);
    const base = fixture.gateway.consoleUrl;

    await page.goto(`${base}/plans`);
    await page.getByRole('heading', { name: 'Choose a plan' }).waitFor();
    await screenshot(fixture, page, 'plans-offered');

    // Pro costs more than the balance: the dialog says so and will not pay.
    await page.getByRole('button', { name: `Choose Pro ${suffix}` }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('The balance does not cover this.').waitFor();
    expect(await dialog.getByRole('button', { name: /^Pay/ }).isDisabled()).toBe(true);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });

    await page.getByRole('button', { name: `Choose Starter ${suffix}` }).click();
    await dialog.getByText('Paid now from the balance').waitFor();
    await screenshot(fixture, page, 'plans-confirm');
    await dialog.getByRole('button', { name: 'Pay $5.00 and switch' }).click();
    await page.getByText(/You are on Starter/).waitFor();
    await page.getByText('Remaining this period').waitFor();
    expect(await balanceOf(accountId)).toBe(7);
    await screenshot(fixture, page, 'plans-chosen');

    // The upgrade within the same month pays the difference, after a top-up by the operator.
    expect((await fixture.gateway.admin('POST', `/admin/accounts/${accountId}/credits`, { amount_usd: 10 })).status).toBe(200);
    await page.reload();
    await page.getByRole('button', { name: `Change to Pro ${suffix}` }).click();
    await dialog.getByRole('button', { name: 'Pay $15.00 and switch' }).click();
    await page.getByText(/You are on Pro/).waitFor();
    expect(await balanceOf(accountId)).toBe(2);

    await page.goto(`${base}/billing`);
    await page.getByText(/^Upgrade to plan Pro/).waitFor();
    await page.getByText(/^Plan Starter/).waitFor();
    await page.getByText(/^Upgrade to plan Pro/).scrollIntoViewIfNeeded();
    await screenshot(fixture, page, 'billing-plan-invoices');

    // A key's own quota alert threshold on the Alerts page.
    expect((await fixture.gateway.admin('POST', `/admin/accounts/${accountId}/keys`, { name: 'batch jobs', quota_usd: 25 })).status).toBe(201);
    await page.goto(`${base}/alerts`);
    await page.getByLabel('Quota used (%) for batch jobs').fill('80');
    await page.getByRole('button', { name: 'Save for batch jobs' }).click();
    await page.getByRole('status').getByText('Saved.').waitFor();
    await screenshot(fixture, page, 'alerts-key-thresholds');
    expectCleanPage(watched);
    await watched.context.close();

    const check = await fixture.gateway.admin<{ ok: boolean; problems: unknown[] }>('GET', `/admin/ledger/check?account_id=${accountId}`);
    expect(check.body).toMatchObject({ ok: true, problems: [] });

    // The same page at a phone's width in dark mode, with the dialog open.
    const phone = await openPage(fixture.browser, { width: 390, height: 844, colorScheme: 'dark' });
    await signUpAndVerify(fixture, phone.page, unique('plans-phone'));
    await phone.page.goto(`${base}/plans`);
    await phone.page.getByRole('heading', { name: 'Choose a plan' }).waitFor();
    await phone.page.waitForLoadState('networkidle');
    expect(await horizontalOverflow(phone.page)).toBeLessThanOrEqual(0);
    await screenshot(fixture, phone.page, 'plans-phone-dark');
    await phone.page.getByRole('button', { name: `Choose Pro ${suffix}` }).click();
    await phone.page.getByRole('dialog').getByText('Paid now from the balance').waitFor();
    await screenshot(fixture, phone.page, 'plans-confirm-phone-dark');
    expectCleanPage(phone);
    await phone.context.close();
  }, 240_000);
});
