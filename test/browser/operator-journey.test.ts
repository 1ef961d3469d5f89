/**
 * The operator's console in Debian's Chromium against the real gateway: the first owner made with the admin token,
 * two-factor turned on and used to sign in → a channel to the mock upstream, and its Test button → a priced model →
 * an account credited with a reason → that account's key works through the OpenAI SDK → the overview and the usage
 * explorer show the call → a ticket answered and closed, the user sees the reply and gets the mail → the audit log
 * lists every step; list prices of catalog models imported; an operator invited, their role changed, disabled and
 * enabled, a colleague's second factor reset. Screenshots of each page (operator-*.png, empty states among them). No
 * CSP violation, no uncaught error.
 */
import OpenAI from 'openai';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { CHANNEL_TYPES } from '../../src/upstreams/upstreams.js';
import { ensureChromium } from '../support/chromium.js';
import { ConsoleClient, strongPassword } from '../support/console-client.js';
import { flushWrites } from '../support/gateway-harness.js';
import { PASSWORD, expectCleanPage, mailedLink, nextTotpStep, openPage, screenshot, startConsoleFixture, totpCode, type ConsoleFixture, type WatchedPage } from '../support/console-browser.js';

/** Opens the verification link mailed to `email` for `client`: support requests and a second factor need it. */
async function confirmEmail(client: ConsoleClient, email: string): Promise<void> {
  const link = new URL(await mailedLink(fixture.smtp, email, 'verify-email'));
  expect((await client.request('POST', '/api/auth/verify-email', { token: link.searchParams.get('token') })).status).toBe(200);
}

const chromiumPresent = ensureChromium();
let fixture: ConsoleFixture;
const MODEL = 'operator-tour-model';

beforeAll(async () => {
  if (chromiumPresent) fixture = await startConsoleFixture();
}, 300_000);

afterAll(async () => {
  await fixture?.close();
});

describe.skipIf(!chromiumPresent)('operator console in Chromium', () => {
  it('runs the gateway from the console, every step audited', async () => {
    const watched: WatchedPage = await openPage(fixture.browser, { width: 1360, height: 900 });
    const step = { name: 'start' };
    try {
      await tour(watched.page, step);
    } catch (error) {
      await screenshot(fixture, watched.page, 'operator-failure').catch(() => undefined);
      throw new Error(`operator step "${step.name}" failed at ${watched.page.url()}: ${(error as Error).message}`, { cause: error });
    }
    expectCleanPage(watched);
    await watched.context.close();
  }, 240_000);
});

async function tour(page: Page, step: { name: string }): Promise<void> {
  const consoleUrl = fixture.gateway.consoleUrl;
  const email = `operator-${randomBytes(4).toString('hex')}@example.com`;

  step.name = 'The first owner, with the admin token';
  await page.goto(`${consoleUrl}/operator/setup`);
  await page.getByLabel('Admin token').fill(fixture.gateway.adminToken);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await screenshot(fixture, page, 'operator-setup');
  await page.getByRole('button', { name: 'Create the owner' }).click();
  await page.waitForURL('**/security');

  step.name = 'Operator pages wait for two-factor';
  await page.goto(`${consoleUrl}/operator`);
  await page.getByText('Operators must use two-factor sign-in.').waitFor();

  step.name = 'Two-factor on, then sign in with a code';
  await page.goto(`${consoleUrl}/security`);
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
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Channels' }).waitFor();

  step.name = 'A channel to the mock upstream, and its test';
  await page.goto(`${consoleUrl}/operator/channels`);
  await page.getByRole('button', { name: 'Add channel' }).click();
  const form = page.getByRole('dialog', { name: 'Add a channel' });
  // The type list comes from the gateway's upstream registry.
  await expect.poll(() => form.getByLabel('Type').locator('option').allTextContents(), { timeout: 10_000 }).toEqual([...CHANNEL_TYPES]);
  await form.getByLabel('Type').selectOption('openai');
  await form.getByLabel('Name').fill('tour-upstream');
  await form.getByLabel('Base URL').fill(fixture.upstream.url);
  await form.getByLabel('API key').fill('sk-upstream-test');
  await form.getByLabel('Client model id 1').fill(MODEL);
  await form.getByLabel('Priority').fill('10');
  await form.getByRole('button', { name: 'Create channel' }).click();
  await form.waitFor({ state: 'hidden' });
  await page.getByRole('button', { name: 'Test tour-upstream' }).click();
  const result = page.locator('tr', { hasText: 'tour-upstream' }).getByTestId('channel-test-result');
  await result.waitFor();
  expect(await result.textContent()).toContain('OK');
  expect(await page.content()).not.toContain('sk-upstream-test');
  await screenshot(fixture, page, 'operator-channels');

  step.name = 'A priced model';
  await page.goto(`${consoleUrl}/operator/models`);
  await page.getByRole('button', { name: 'Add model' }).click();
  const modelForm = page.getByRole('dialog', { name: 'Add a model' });
  await modelForm.getByLabel('Model id').fill(MODEL);
  await modelForm.getByLabel('Input, USD per million tokens', { exact: true }).fill('3');
  await modelForm.getByLabel('Output, USD per million tokens', { exact: true }).fill('15');
  await modelForm.getByRole('button', { name: 'Create model' }).click();
  await modelForm.waitFor({ state: 'hidden' });
  const modelRow = page.locator(`tr[data-model-id="${MODEL}"]`);
  await modelRow.getByText('tour-upstream').waitFor();
  expect(await modelRow.textContent()).toContain('$3');

  step.name = 'List prices of selected catalog models imported';
  await page.getByLabel('Provider').selectOption('anthropic');
  const catalogRows = page.getByTestId('catalog-table').locator('tbody tr');
  await expect.poll(async () => (await catalogRows.first().getAttribute('data-catalog-id')) ?? '').toMatch(/^claude/);
  const picked = [await catalogRows.nth(0).getAttribute('data-catalog-id'), await catalogRows.nth(1).getAttribute('data-catalog-id')] as string[];
  for (const id of picked) await page.getByRole('checkbox', { name: `Select ${id}` }).check();
  await page.getByRole('button', { name: 'Import list prices of 2 selected' }).click();
  await page.getByText('List prices imported for 2 models.').waitFor();
  for (const id of picked) await page.locator(`tr[data-catalog-id="${id}"]`).getByText('list price').waitFor();
  await page.locator(`tr[data-model-id="${picked[0]}"]`).waitFor();
  await screenshot(fixture, page, 'operator-models');
  const catalogHeading = page.getByRole('heading', { name: 'Bundled catalog' });
  await catalogHeading.evaluate((heading) => heading.scrollIntoView({ block: 'start' }));
  await screenshot(fixture, page, 'operator-models-catalog');
  await page.getByLabel('Search the catalog').fill('no-such-model-anywhere');
  await page.getByText('No bundled model of anthropic matches.').waitFor();
  await catalogHeading.evaluate((heading) => heading.scrollIntoView({ block: 'start' }));
  await screenshot(fixture, page, 'operator-models-catalog-empty');

  step.name = 'An account credited with a reason';
  const customerEmail = `customer-${randomBytes(4).toString('hex')}@example.com`;
  const account = await fixture.gateway.admin<{ id: string }>('POST', '/admin/accounts', { email: customerEmail });
  const key = await fixture.gateway.admin<{ key: string }>('POST', `/admin/accounts/${account.body.id}/keys`, { name: 'tour' });
  await page.goto(`${consoleUrl}/operator/accounts`);
  await page.getByLabel('Search by email or id').fill(customerEmail);
  await page.getByRole('button', { name: customerEmail }).click();
  await page.getByLabel('Amount (USD)').fill('5');
  await page.getByLabel('Reason').fill('tour credit');
  await page.getByRole('button', { name: 'Apply' }).click();
  await expect.poll(() => page.getByTestId('account-balance').textContent()).toBe('$5.00');
  await page.getByRole('cell', { name: 'tour credit' }).waitFor();
  // The ledger says what each entry was, newest first.
  expect(await page.getByTestId('ledger-entry').first().textContent()).toContain('Credit from the operator');
  await screenshot(fixture, page, 'operator-accounts');
  await page.getByTestId('account-ledger').scrollIntoViewIfNeeded();
  await screenshot(fixture, page, 'operator-accounts-ledger');
  await page.getByLabel('Search by email or id').fill('nobody-starts-like-this');
  await page.getByText('No account starts with this.').waitFor();
  await screenshot(fixture, page, 'operator-accounts-empty');

  step.name = "The account's key works through the SDK";
  const sdk = new OpenAI({ apiKey: key.body.key, baseURL: fixture.gateway.baseURL, maxRetries: 0 });
  const answer = await sdk.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hello' }] });
  expect(answer.choices[0]?.message.content).toBeTruthy();
  await flushWrites(fixture.gateway);

  step.name = 'The overview and the usage explorer show the call';
  await page.goto(`${consoleUrl}/operator`);
  const modelCell = page.getByRole('table', { name: 'Calls by model' }).getByRole('rowheader', { name: MODEL });
  await modelCell.waitFor();
  const healthRow = page.getByRole('table', { name: 'Channel health' }).getByRole('row', { name: /tour-upstream/ });
  await healthRow.getByText('operational').waitFor();
  await expect.poll(() => page.getByTestId('operator-live').textContent()).toMatch(/Requests per second/);
  await screenshot(fixture, page, 'operator-overview');
  // Channels, accounts and keys by name, their ids a hover away.
  await page.getByRole('table', { name: 'Calls by channel' }).getByRole('rowheader', { name: /^tour-upstream/ }).waitFor();
  await page.goto(`${consoleUrl}/operator/usage`);
  await page.getByTestId('operator-usage').getByText(MODEL).first().waitFor();
  await page.getByTestId('operator-usage').getByText(customerEmail).first().waitFor();
  await page.getByLabel('Account email').fill(customerEmail);
  await page.getByLabel('Key name').fill('tour');
  await page.getByTestId('operator-usage').getByText('tour-upstream').first().waitFor();
  await screenshot(fixture, page, 'operator-usage');
  await page.getByLabel('Key name').fill('no such key');
  await page.getByText('No calls match.').waitFor();
  await page.getByLabel('Key name').fill('');
  await page.getByLabel('Account email').fill('');

  step.name = 'A ticket answered; the user sees the reply';
  const user = new ConsoleClient(consoleUrl);
  const userEmail = `asker-${randomBytes(4).toString('hex')}@example.com`;
  expect((await user.signUp(userEmail, strongPassword())).status).toBe(201);
  await confirmEmail(user, userEmail);
  const ticket = await user.request<{ id: string }>('POST', '/api/console/support/tickets', { subject: 'Where is my invoice?', category: 'billing', message: 'I paid yesterday.' });
  expect(ticket.status, ticket.text).toBe(201);
  await page.goto(`${consoleUrl}/operator/tickets`);
  await page.getByRole('button', { name: 'Where is my invoice?' }).click();
  await page.getByLabel(/^Reply/).fill('It is under Billing, Invoices.');
  await screenshot(fixture, page, 'operator-tickets');
  await page.getByRole('button', { name: 'Reply and close' }).click();
  await page.getByRole('list', { name: 'Conversation' }).getByText('It is under Billing, Invoices.').waitFor();
  const seen = await user.request<{ status: string; replies: { body: string }[] }>('GET', `/api/console/support/tickets/${ticket.body.id}`);
  expect(seen.body.status).toBe('closed');
  expect(seen.body.replies.map((reply) => reply.body)).toContain('It is under Billing, Invoices.');
  await expect.poll(() => fixture.smtp.to(userEmail).some((mail) => mail.text.includes('It is under Billing, Invoices.')), { timeout: 10_000 }).toBe(true);

  step.name = 'A plan offered in the console, then withdrawn';
  await page.goto(`${consoleUrl}/operator/offers`);
  const newPlan = page.getByRole('form', { name: 'New plan' });
  await newPlan.getByLabel('Plan name').fill('Tour Pro');
  await newPlan.getByLabel('Quota (USD)').fill('20');
  await newPlan.getByLabel('Price per period (USD)').fill('9.50');
  await newPlan.getByLabel(/Accounts may choose it in the console/).check();
  await newPlan.getByRole('button', { name: 'Create plan' }).click();
  const planRow = page.getByRole('row', { name: /Tour Pro/ });
  await planRow.getByText('offered').waitFor();
  expect(await planRow.textContent()).toContain('$9.50');
  const offeredTo = async (): Promise<string[]> => (await user.request<{ offered: { name: string; price_usd: number }[] }>('GET', '/api/console/plans')).body.offered.map((plan) => `${plan.name} ${plan.price_usd}`);
  expect(await offeredTo()).toContain('Tour Pro 9.5');
  await screenshot(fixture, page, 'operator-plans');
  await planRow.getByRole('button', { name: 'Withdraw Tour Pro in the console' }).click();
  await planRow.getByText('operator only').waitFor();
  expect(await offeredTo()).not.toContain('Tour Pro 9.5');

  step.name = 'Redemption codes in a batch, and an announcement';
  await page.goto(`${consoleUrl}/operator/offers`);
  await page.getByLabel('Amount per code (USD)').fill('2');
  await page.getByLabel('How many').fill('3');
  await page.getByLabel('Batch name').fill('tour batch');
  await page.getByRole('button', { name: 'Generate' }).click();
  const newCodes = page.getByRole('list', { name: 'New codes' }).getByRole('listitem');
  await expect.poll(() => newCodes.count()).toBe(3);
  const firstCode = ((await newCodes.first().textContent()) ?? '').trim();
  expect(firstCode.length).toBeGreaterThan(10);
  await screenshot(fixture, page, 'operator-offers');
  await page.getByRole('button', { name: 'Done' }).click();
  await page.getByLabel('Title').fill('Maintenance on Sunday');
  await page.getByLabel('Text').fill('The gateway restarts at 02:00 UTC.');
  await page.getByRole('button', { name: 'Publish' }).click();
  await page.getByRole('cell', { name: /Maintenance on Sunday/ }).waitFor();
  const published = await fetch(`${fixture.gateway.url}/api/public/announcements`);
  expect(JSON.stringify(await published.json())).toContain('Maintenance on Sunday');

  step.name = 'Operators: invite, change a role, disable and enable, reset a lost second factor';
  const invitedEmail = `invited-${randomBytes(4).toString('hex')}@example.com`;
  const colleague = new ConsoleClient(consoleUrl);
  const colleagueEmail = `colleague-${randomBytes(4).toString('hex')}@example.com`;
  expect((await colleague.signUp(colleagueEmail, strongPassword())).status).toBe(201);
  await confirmEmail(colleague, colleagueEmail);
  const enrolment = await colleague.request<{ secret: string }>('POST', '/api/me/two-factor/setup');
  expect((await colleague.request('POST', '/api/me/two-factor/enable', { code: totpCode(enrolment.body.secret, fixture.now()) })).status).toBe(200);
  await page.goto(`${consoleUrl}/operator/operators`);
  for (const [address, role] of [[invitedEmail, 'admin'], [colleagueEmail, 'viewer']] as const) {
    await page.getByRole('button', { name: 'Invite operator' }).click();
    const invite = page.getByRole('dialog', { name: 'Invite an operator' });
    await invite.getByLabel('Email').fill(address);
    await invite.getByLabel('Role').selectOption(role);
    await invite.getByRole('button', { name: 'Invite' }).click();
    await invite.waitFor({ state: 'hidden' });
    await page.locator(`tr[data-operator="${address}"]`).waitFor();
  }
  await page.getByText(`${colleagueEmail} is now an operator.`).waitFor();
  expect(await mailedLink(fixture.smtp, invitedEmail, 'reset-password')).toContain('token=');
  const invitedRow = page.locator(`tr[data-operator="${invitedEmail}"]`);
  await page.getByRole('combobox', { name: `Role of ${invitedEmail}` }).selectOption('support');
  await expect.poll(() => page.getByRole('combobox', { name: `Role of ${invitedEmail}` }).inputValue()).toBe('support');
  await page.getByRole('button', { name: `Disable ${invitedEmail}` }).click();
  await invitedRow.getByText('disabled').waitFor();
  await page.getByRole('button', { name: `Enable ${invitedEmail}` }).click();
  await invitedRow.getByText('active').waitFor();
  await page.getByRole('button', { name: `Reset two-factor of ${colleagueEmail}` }).click();
  const reset = page.getByRole('dialog', { name: 'Reset two-factor sign-in' });
  await reset.getByLabel('How was their identity checked?').fill('video call, matched the staff photo');
  await reset.getByRole('button', { name: 'Reset two-factor' }).click();
  await page.getByText(`Two-factor sign-in of ${colleagueEmail} was reset; their sessions ended.`).waitFor();
  await page.locator(`tr[data-operator="${colleagueEmail}"]`).getByText('not yet').waitFor();
  await screenshot(fixture, page, 'operator-operators');

  step.name = 'The audit log lists every step';
  await page.goto(`${consoleUrl}/operator/audit`);
  const audit = page.getByTestId('audit-table');
  await audit.waitFor();
  const text = (await audit.textContent()) ?? '';
  for (const action of ['bootstrap owner with the admin token', 'POST /admin/channels', '/test', 'POST /admin/models', '/credits', '/replies', 'POST /admin/redemption-codes', 'POST /admin/announcements', 'POST /admin/catalog/import',
    'invite operator', 'grant operator role', 'change operator role', 'disable operator', 'enable operator', 'reset operator two-factor']) expect(text, action).toContain(action);
  expect(text).not.toContain('sk-upstream-test');
  expect(text).not.toContain(firstCode);
  // Changes read as before → after, not raw JSON: the credit moved the balance from 0 to 5.
  const credit = audit.getByRole('row', { name: /\/credits/ }).first();
  expect(await credit.getByTestId('audit-changes').textContent()).toMatch(/balance_usd\s*0\s*→\s*becomes\s*5/);
  await screenshot(fixture, page, 'operator-audit');

  step.name = 'Every operator page fits a phone in dark mode';
  await page.setViewportSize({ width: 390, height: 844 });
  await page.emulateMedia({ colorScheme: 'dark' });
  for (const route of ['', '/channels', '/models', '/accounts', '/tickets', '/usage', '/offers', '/operators', '/audit']) {
    await page.goto(`${consoleUrl}/operator${route}`);
    await page.getByRole('heading', { level: 1 }).waitFor();
    await page.waitForLoadState('networkidle');
    expect(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'), `/operator${route} at 390px`).toBeLessThanOrEqual(0);
    await screenshot(fixture, page, `operator${route.replace('/', '-') || '-overview'}-phone-dark`);
  }
}
