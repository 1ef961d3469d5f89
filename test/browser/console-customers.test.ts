/**
 * The End customers page in Chromium, at desktop width and at 390 px, light and dark: empty at first; the owner sets
 * the rule of every customer ($1 a day, 20 RPM) and one customer's own ($50 a month) through its forms, which the
 * server stored and enforces (the customer's spend shows after a request naming it); a viewer reads the rules
 * without a way to change them, and the API refuses the viewer's change. Screenshots are written for a person to
 * look at.
 */
import { randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureChromium } from '../support/chromium.js';
import { CHAT_MODEL, expectCleanPage, mailedLink, openPage, PASSWORD, shotsAtBothWidths, screenshot, sidewaysTables, signUpAndVerify, startConsoleFixture, type ConsoleFixture } from '../support/console-browser.js';

const chromiumPresent = ensureChromium();
let fixture: ConsoleFixture;

beforeAll(async () => {
  if (chromiumPresent) fixture = await startConsoleFixture();
}, 300_000);

afterAll(async () => {
  await fixture?.close();
});

interface RuleJson { customer: string | null; every_customer: boolean; budget: { period: string; limit_usd: number; spent_usd?: number } | null; rpm: number | null; tpm: number | null; concurrency: number | null }

async function rulesOf(accountId: string): Promise<RuleJson[]> {
  const answer = await fixture.gateway.admin<{ data: RuleJson[] }>('GET', `/admin/accounts/${accountId}/customer-rules`);
  expect(answer.status).toBe(200);
  return answer.body.data;
}

async function csrfRequest(page: Page, method: 'PUT' | 'DELETE', path: string, body?: unknown): Promise<number> {
  const session = (await (await page.request.get(`${fixture.gateway.consoleUrl}/api/session`)).json()) as { csrf_token: string };
  const answer = await page.request.fetch(`${fixture.gateway.consoleUrl}${path}`, { method, headers: { 'x-csrf-token': session.csrf_token }, ...(body === undefined ? {} : { data: body }) });
  return answer.status();
}

describe.skipIf(!chromiumPresent)('end customers in the console', () => {
  it('sets the rule of every customer and one customer\'s own; a viewer only reads them', async () => {
    const owner = await openPage(fixture.browser);
    const { page } = owner;
    const base = fixture.gateway.consoleUrl;
    const accountId = await signUpAndVerify(fixture, page, `customers-${randomBytes(4).toString('hex')}@example.com`);
    expect((await fixture.gateway.admin('POST', `/admin/accounts/${accountId}/credits`, { amount_usd: 5 })).status).toBe(200);

    await page.goto(`${base}/customers`);
    await page.getByRole('heading', { name: 'End customers', level: 1 }).waitFor();
    await page.getByText('No rule for every customer').waitFor();
    await page.getByText('No customer has a rule of its own yet.').waitFor();
    await shotsAtBothWidths(fixture, page, 'customers-empty');

    // The rule of every customer: $1 a day and 20 requests a minute each.
    await page.getByRole('button', { name: 'Set a rule' }).click();
    const every = page.getByRole('dialog', { name: 'Every customer' });
    await every.getByLabel('Budget period').selectOption('day');
    await every.getByLabel('Budget limit (USD)').fill('1');
    await every.getByLabel('Requests per minute').fill('20');
    await screenshot(fixture, page, 'customers-every-form');
    await every.getByRole('button', { name: 'Save rule' }).click();
    await page.getByTestId('every-customer-rule').getByText('$1.00 per day').waitFor();
    expect(await rulesOf(accountId)).toEqual([expect.objectContaining({ customer: null, every_customer: true, budget: expect.objectContaining({ period: 'day', limit_usd: 1 }), rpm: 20, tpm: null })]);

    // One customer's own rule: a name is required; $50 a month, 4 requests at once.
    await page.getByRole('button', { name: 'Add a customer' }).click();
    const add = page.getByRole('dialog', { name: 'Add a customer' });
    await add.getByLabel('Budget period').selectOption('month');
    await add.getByLabel('Budget limit (USD)').fill('50');
    await add.getByRole('button', { name: 'Add customer' }).click();
    await add.getByText('Name the customer as your requests do').waitFor();
    await add.getByLabel('Customer', { exact: true }).fill('globex');
    await add.getByLabel('Requests at once').fill('4');
    await add.getByRole('button', { name: 'Add customer' }).click();
    const table = page.getByTestId('customer-rules-table');
    await table.getByRole('rowheader', { name: 'globex' }).waitFor();
    const stored = await rulesOf(accountId);
    expect(stored.find((rule) => rule.customer === 'globex')).toMatchObject({ budget: { period: 'month', limit_usd: 50 }, rpm: null, concurrency: 4 });

    // A request naming the customer: its spend shows on the page.
    const key = await fixture.gateway.admin<{ key: string }>('POST', `/admin/accounts/${accountId}/keys`, { name: 'backend' });
    const answer = await fetch(`${fixture.gateway.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.body.key}`, 'content-type': 'application/json', 'x-gateway-customer': 'globex' },
      body: JSON.stringify({ model: CHAT_MODEL, messages: [{ role: 'user', content: 'hello' }], max_tokens: 16 }),
    });
    expect(answer.status, await answer.text()).toBe(200);
    await page.reload();
    const spent = (await rulesOf(accountId)).find((rule) => rule.customer === 'globex')?.budget?.spent_usd ?? 0;
    expect(spent).toBeGreaterThan(0);
    await table.getByText('left · resets').waitFor();
    await shotsAtBothWidths(fixture, page, 'customers');
    // On a phone each customer is a card, with its spend right under its name.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await sidewaysTables(page)).toEqual([]);
    await table.scrollIntoViewIfNeeded();
    await screenshot(fixture, page, 'customers-table-390-light');
    await page.setViewportSize({ width: 1280, height: 900 });

    // Edit the customer's rule: the name stays, the budget changes.
    await table.getByRole('button', { name: 'Edit globex' }).click();
    const edit = page.getByRole('dialog', { name: 'Customer globex' });
    expect(await edit.getByLabel('Customer', { exact: true }).isDisabled()).toBe(true);
    await edit.getByLabel('Budget limit (USD)').fill('60');
    await edit.getByRole('button', { name: 'Save rule' }).click();
    await table.getByText('$60.00 per month').waitFor();
    expect((await rulesOf(accountId)).find((rule) => rule.customer === 'globex')?.budget?.limit_usd).toBe(60);
    expectCleanPage(owner);

    // A viewer reads the rules, with nothing to change them; the API refuses a change.
    const viewerEmail = `viewer-${randomBytes(4).toString('hex')}@example.com`;
    await page.goto(`${base}/members`);
    await page.getByLabel('Email', { exact: true }).fill(viewerEmail);
    await page.getByLabel('Role', { exact: true }).selectOption('viewer');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    await page.getByText('Invitation sent.').waitFor();
    const viewer = await openPage(fixture.browser);
    await viewer.page.goto(await mailedLink(fixture.smtp, viewerEmail, 'invitation'));
    await viewer.page.getByLabel('Choose a password').fill(PASSWORD);
    await viewer.page.getByRole('button', { name: 'Accept and sign in' }).click();
    await viewer.page.waitForURL('**/keys');
    await viewer.page.goto(`${base}/customers`);
    await viewer.page.getByTestId('customer-rules-table').getByRole('rowheader', { name: 'globex' }).waitFor();
    await viewer.page.getByText('Your role reads these rules').waitFor();
    expect(await viewer.page.getByRole('button', { name: /Add a customer|Set a rule|Edit|Remove/ }).count()).toBe(0);
    await shotsAtBothWidths(fixture, viewer.page, 'customers-viewer');
    expect(await csrfRequest(viewer.page, 'PUT', '/api/customer-rules', { customer: 'globex', budget: null })).toBe(403);
    expect(await csrfRequest(viewer.page, 'DELETE', '/api/customer-rules?customer=globex')).toBe(403);
    expectCleanPage(viewer);

    // The owner removes the customer's rule: the customer falls back to the rule of every customer.
    await page.goto(`${base}/customers`);
    await page.getByTestId('customer-rules-table').getByRole('button', { name: 'Remove globex' }).click();
    await page.getByText('No customer has a rule of its own yet.').waitFor();
    expect((await rulesOf(accountId)).map((rule) => rule.customer)).toEqual([null]);
    expectCleanPage(owner);
    await viewer.context.close();
    await owner.context.close();
  }, 240_000);
});
