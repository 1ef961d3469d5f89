/**
 * The console's money and people pages end to end in Debian's Chromium, against the real gateway with a fake Stripe
 * (its hosted checkout page stood in by intercepting the browser's navigation; payment and webhook as Stripe sends
 * them) and an SMTP sink: top up by card → the balance rises once, however often the webhook comes → the invoice is
 * listed and its PDF (read with pdftotext) names the number, amount and buyer → redeem a code → a second account
 * signs up through the referral link and tops up → the reward appears once → a balance alert set in the console
 * fires exactly one mail when a request spends past it → a support ticket mails the user and
 * support → an invited developer makes keys but cannot top up, refused by the API too. Screenshots of each page.
 */
import OpenAI from 'openai';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ensureChromium } from '../support/chromium.js';
import { FakeStripe } from '../support/fake-stripe.js';
import { CHAT_MODEL, PASSWORD, expectCleanPage, mailedLink, openPage, screenshot, sidewaysTables, signUpAndVerify, startConsoleFixture, type ConsoleFixture } from '../support/console-browser.js';
import { pdfText } from '../e2e/payments/helpers.js';

const chromiumPresent = ensureChromium();
const SUPPORT = 'support-desk@example.com';
let fixture: ConsoleFixture;
let stripe: FakeStripe;

beforeAll(async () => {
  if (!chromiumPresent) return;
  stripe = new FakeStripe();
  await stripe.start();
  fixture = await startConsoleFixture({
    ...stripe.env(), TOPUP_PRESETS_USD: '10,20,50', TOPUP_MIN_USD: '5', REFERRAL_REWARD: '10%', REFERRAL_REWARD_TOPUPS: '1',
    SUPPORT_EMAIL: SUPPORT, ALERT_CHECK_SECONDS: '1', SELLER_NAME: 'Example Gateway Ltd', SELLER_ADDRESS: '1 Market Street|London', INVOICE_SERIES: 'UG',
  });
}, 300_000);

afterAll(async () => {
  await fixture?.close();
  await stripe?.stop();
});

const unique = (prefix: string): string => `${prefix}-${randomBytes(4).toString('hex')}@example.com`;

async function balanceOf(accountId: string): Promise<number> {
  return ((await fixture.gateway.admin('GET', `/admin/accounts/${accountId}`)).body as { balance_usd: number }).balance_usd;
}

/**
 * Stands in for Stripe's hosted page: the browser's visit to checkout.stripe.com pays the session on the fake Stripe,
 * which delivers `checkout.session.completed` to the gateway's webhook twice (Stripe retries), then sends the payer
 * back to the success URL.
 */
async function payOnStripe(page: Page): Promise<void> {
  await page.route('https://checkout.stripe.com/**', async (route) => {
    const id = new URL(route.request().url()).pathname.split('/').pop() ?? '';
    const session = stripe.pay(id);
    const event = stripe.completedEvent(id);
    for (let delivery = 0; delivery < 2; delivery += 1) {
      const answer = await stripe.deliver(`${fixture.gateway.consoleUrl}/api/webhooks/stripe`, event);
      expect(answer.status).toBe(200);
    }
    await route.fulfill({ status: 303, headers: { location: session.success_url.replace('{CHECKOUT_SESSION_ID}', id) } });
  });
}

async function topUp(page: Page, preset: string): Promise<void> {
  await page.goto(`${fixture.gateway.consoleUrl}/billing`);
  await page.getByRole('button', { name: preset, exact: true }).click();
  await page.getByRole('button', { name: 'Pay by card' }).click();
  await page.waitForURL(/\/billing\?checkout=success/);
}

/**
 * The page at 390 px, light and dark (`name-phone-light.png` …), scrolled to `heading`: nothing scrolls sideways,
 * neither the page nor a table inside its card (tables turn into one card per row).
 */
async function onPhone(page: Page, name: string, heading: string): Promise<void> {
  await page.setViewportSize({ width: 390, height: 844 });
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.getByRole('heading', { name: heading, exact: true }).last().evaluate((element) => element.scrollIntoView({ block: 'start' }));
    await page.waitForTimeout(150);
    expect(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'), `${name} at 390px`).toBeLessThanOrEqual(0);
    expect(await sidewaysTables(page), `${name} at 390px`).toEqual([]);
    await screenshot(fixture, page, `${name}-phone-${scheme}`);
  }
  await page.setViewportSize({ width: 1280, height: 860 });
  await page.emulateMedia({ colorScheme: 'light' });
}

async function csrfPost(page: Page, path: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const session = (await (await page.request.get(`${fixture.gateway.consoleUrl}/api/session`)).json()) as { csrf_token: string };
  const answer = await page.request.post(`${fixture.gateway.consoleUrl}${path}`, { data: body, headers: { 'x-csrf-token': session.csrf_token } });
  return { status: answer.status(), body: (await answer.json()) as Record<string, unknown> };
}

describe.skipIf(!chromiumPresent)('money and people in Chromium', () => {
  it('tops up, invoices, redeems, refers, files a ticket and invites a developer', async () => {
    const owner = await openPage(fixture.browser);
    const { page } = owner;
    const base = fixture.gateway.consoleUrl;
    const ownerEmail = unique('owner');
    const accountId = await signUpAndVerify(fixture, page, ownerEmail);

    const now = Date.now();
    await fixture.gateway.gateway.services.storage.fx.set({ base: 'USD', rates: { JPY: '151.2', CNY: '7.21', EUR: '0.92' }, asOf: now, source: 'test', updatedAt: now });

    // Billing details, then a card top-up through the fake Stripe: the balance rises once.
    await page.goto(`${base}/billing`);
    await page.getByLabel('Name or company').fill('Acme Research GmbH');
    await page.getByLabel('Country (two letters)').fill('DE');
    await page.getByLabel('Tax id (optional)').fill('DE999999999');
    await page.getByLabel('Address').fill('Hauptstrasse 1\n10115 Berlin');
    await page.getByRole('button', { name: 'Save billing details' }).click();
    await page.getByText('Saved. New invoices').waitFor();
    await payOnStripe(page);
    await topUp(page, '$20.00');
    await expect.poll(() => page.getByTestId('balance').textContent(), { timeout: 15_000 }).toBe('$20.00');
    expect(await balanceOf(accountId)).toBe(20);
    await page.getByText('¥3,024').waitFor();
    await page.evaluate('window.scrollTo(0, 0)');
    await screenshot(fixture, page, 'billing');

    // The invoice, and its PDF as downloaded by the browser.
    const invoiceRow = page.getByRole('row', { name: /UG-/ });
    await invoiceRow.waitFor();
    const number = ((await invoiceRow.getByRole('rowheader').textContent()) ?? '').trim();
    expect(number).toMatch(/^UG-/);
    await page.getByRole('heading', { name: 'Invoices' }).scrollIntoViewIfNeeded();
    await screenshot(fixture, page, 'billing-invoices');
    await onPhone(page, 'billing-invoices', 'Invoices');
    const [download] = await Promise.all([page.waitForEvent('download'), invoiceRow.getByRole('link', { name: /PDF/ }).click()]);
    const text = await pdfText(await readFile(await download.path()), tmpdir());
    expect(text).toContain(number);
    expect(text).toContain('20.00');
    expect(text).toContain('Acme Research GmbH');

    // A redemption code.
    const code = ((await fixture.gateway.admin('POST', '/admin/redemption-codes', { amount_usd: 5 })).body as { data: Array<{ code: string }> }).data[0]?.code ?? '';
    await page.getByLabel('Redemption code').fill(code);
    await page.getByRole('button', { name: 'Redeem' }).click();
    await page.getByText('$5.00 added. The balance is now $25.00.').waitFor();
    expect(await balanceOf(accountId)).toBe(25);

    // A second account signs up through the referral link and tops up: the reward appears once.
    await page.goto(`${base}/referrals`);
    const link = (await page.getByTestId('referral-link').textContent()) ?? '';
    expect(link).toMatch(/\/sign-up\?ref=[A-Z0-9]{8}$/);
    const friend = await openPage(fixture.browser);
    const friendEmail = unique('friend');
    await friend.page.goto(link);
    await friend.page.getByText('Invited with referral code').waitFor();
    await friend.page.getByLabel('Email').fill(friendEmail);
    await friend.page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await friend.page.getByLabel('Repeat the password').fill(PASSWORD);
    await friend.page.getByRole('button', { name: 'Create account' }).click();
    await friend.page.waitForURL('**/keys');
    await friend.page.goto(await mailedLink(fixture.smtp, friendEmail, 'verify-email'));
    await friend.page.getByText('Your email address is verified.').waitFor();
    await payOnStripe(friend.page);
    await topUp(friend.page, '$50.00');
    await expect.poll(() => friend.page.getByTestId('balance').textContent(), { timeout: 15_000 }).toBe('$50.00');
    await page.reload();
    await page.getByTestId('referral-rewards').waitFor();
    expect(await page.getByTestId('referral-rewards').getByRole('row').count()).toBe(2);
    await expect.poll(() => balanceOf(accountId)).toBe(30);
    await screenshot(fixture, page, 'referrals');
    expectCleanPage(friend);
    await friend.context.close();

    // A balance alert just under the balance; one paid request crosses it: exactly one mail.
    await page.goto(`${base}/alerts`);
    await page.getByLabel('Balance below (USD)').fill('29.9999999');
    await page.getByRole('button', { name: 'Save alerts' }).click();
    await page.getByText('Saved. Each crossing').waitFor();
    const ownerKey = await csrfPost(page, '/api/keys', { name: 'alert spender' });
    expect(ownerKey.status).toBe(201);
    const client = new OpenAI({ apiKey: String(ownerKey.body.secret), baseURL: fixture.gateway.baseURL, maxRetries: 0 });
    await client.chat.completions.create({ model: CHAT_MODEL, messages: [{ role: 'user', content: 'spend a little' }] });
    const balanceAlerts = () => fixture.smtp.to(ownerEmail).filter((mail) => /^Balance alert/.test(mail.subject)).length;
    await expect.poll(balanceAlerts, { timeout: 15_000 }).toBe(1);
    await client.chat.completions.create({ model: CHAT_MODEL, messages: [{ role: 'user', content: 'spend a little more' }] });
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(balanceAlerts()).toBe(1);
    await page.reload();
    await page.getByText('mailed').waitFor();
    await screenshot(fixture, page, 'alerts');

    // The Plans page with a plan the operator granted.
    const plan = await fixture.gateway.admin('POST', '/admin/plans', { name: 'Team monthly', period: 'month', quota_usd: 40, overage: { policy: 'limit', limit_usd: 10 } });
    await fixture.gateway.admin('POST', `/admin/accounts/${accountId}/subscriptions`, { plan_id: (plan.body as { id: string }).id });
    await page.goto(`${base}/plans`);
    await page.getByText('Remaining this period').waitFor();
    await screenshot(fixture, page, 'plans');

    // A support ticket: the user and the support desk both get a mail.
    await page.goto(`${base}/support`);
    await page.getByLabel('Subject').fill('Streaming stops early');
    await page.getByLabel('Category').selectOption('technical');
    await page.getByLabel('Message').fill('Streams from the chat model end after a few tokens.');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByText(/Ticket .* is open/).waitFor();
    await page.getByRole('button', { name: 'Streaming stops early' }).waitFor();
    await expect.poll(() => fixture.smtp.to(ownerEmail).filter((mail) => /Streaming stops early/.test(mail.subject)).length, { timeout: 10_000 }).toBe(1);
    await expect.poll(() => fixture.smtp.to(SUPPORT).filter((mail) => /Streaming stops early/.test(mail.subject)).length, { timeout: 10_000 }).toBe(1);
    await screenshot(fixture, page, 'support');
    const ticketId = /Ticket (\S+) is open/.exec((await page.getByText(/Ticket .* is open/).textContent()) ?? '')?.[1] ?? '';
    const reply = await fixture.gateway.admin('POST', `/admin/support/tickets/${ticketId}/replies`, { body: 'Thanks: we raised the stream timeout on that channel. Please try again.' });
    expect(reply.status, JSON.stringify(reply.body)).toBe(201);
    await page.reload();
    await page.getByRole('button', { name: 'Streaming stops early' }).click();
    await page.getByText('we raised the stream timeout').waitFor();
    await page.getByText('we raised the stream timeout').scrollIntoViewIfNeeded();
    await page.mouse.move(0, 0);
    await screenshot(fixture, page, 'support-tickets');

    // Invite a developer, who makes keys but cannot top up.
    await page.goto(`${base}/members`);
    const developerEmail = unique('developer');
    await page.getByLabel('Email', { exact: true }).fill(developerEmail);
    await page.getByLabel('Role', { exact: true }).selectOption('developer');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    await page.getByText('Invitation sent.').waitFor();
    await page.getByRole('rowheader', { name: developerEmail }).waitFor();
    const developer = await openPage(fixture.browser);
    await developer.page.goto(await mailedLink(fixture.smtp, developerEmail, 'invitation'));
    await developer.page.getByText(`invited ${developerEmail} as developer`).waitFor();
    await screenshot(fixture, developer.page, 'invitation');
    await developer.page.getByLabel('Choose a password').fill(PASSWORD);
    await developer.page.getByRole('button', { name: 'Accept and sign in' }).click();
    await developer.page.waitForURL('**/keys');
    const key = await csrfPost(developer.page, '/api/keys', { name: 'from the developer' });
    expect(key.status).toBe(201);
    await developer.page.goto(`${base}/billing`);
    await developer.page.getByText('Your role (developer) does not include billing.').waitFor();
    const refused = await csrfPost(developer.page, '/api/console/billing/checkout', { amount_usd: 10 });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error: { code: 'forbidden' } });
    expect(await balanceOf(accountId)).toBeLessThan(30);
    expect(await balanceOf(accountId)).toBeGreaterThan(29.99);
    await page.reload();
    await page.getByRole('combobox', { name: `Role of ${developerEmail}` }).waitFor();
    await screenshot(fixture, page, 'members');
    await onPhone(page, 'members', 'Members');
    expectCleanPage(developer);
    await developer.context.close();

    expectCleanPage(owner);
    await owner.context.close();
  }, 240_000);
});
