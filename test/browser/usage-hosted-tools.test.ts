/**
 * A request that paid for a web search shows it in the console: the user's usage table and the operator's usage
 * explorer say how many searches and what they cost, under the request's cost, in Chromium at desktop and phone
 * widths, light and dark (screenshots usage-hosted-tools-*.png, operator-usage-hosted-tools.png). No CSP violation,
 * no uncaught error.
 */
import OpenAI from 'openai';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureChromium } from '../support/chromium.js';
import { addRoutedModel, flushWrites } from '../support/gateway-harness.js';
import { PASSWORD, expectCleanPage, nextTotpStep, openPage, screenshot, signUpAndVerify, startConsoleFixture, totpCode, type ConsoleFixture } from '../support/console-browser.js';

const chromiumPresent = ensureChromium();
let fixture: ConsoleFixture;
const SEARCH_MODEL = 'console-search';

beforeAll(async () => {
  if (!chromiumPresent) return;
  fixture = await startConsoleFixture();
  // OpenAI's chat search model searches before every answer, each search billed at $0.025.
  await addRoutedModel(fixture.gateway, {
    model: SEARCH_MODEL,
    pricing: { input_per_mtok: 2.5, output_per_mtok: 10, per_web_search: 0.025 },
    channel: { name: 'mock-search', type: 'openai', base_url: fixture.upstream.url, api_key: 'sk-upstream-test', models: { [SEARCH_MODEL]: 'gpt-4o-search-preview' } },
  });
}, 300_000);

afterAll(async () => {
  await fixture?.close();
});

describe.skipIf(!chromiumPresent)('hosted tool calls in the console', () => {
  it('the usage table and the usage explorer show a request\'s web search and its cost', async () => {
    const watched = await openPage(fixture.browser);
    const { page } = watched;
    const consoleUrl = fixture.gateway.consoleUrl;
    const accountId = await signUpAndVerify(fixture, page, `searcher-${randomBytes(4).toString('hex')}@example.com`);
    expect((await fixture.gateway.admin('POST', `/admin/accounts/${accountId}/credits`, { amount_usd: 5 })).status).toBe(200);
    const key = await fixture.gateway.admin<{ key: string }>('POST', `/admin/accounts/${accountId}/keys`, { name: 'search key' });
    const client = new OpenAI({ apiKey: key.body.key, baseURL: fixture.gateway.baseURL, maxRetries: 0 });
    await client.chat.completions.create({ model: SEARCH_MODEL, web_search_options: {}, messages: [{ role: 'user', content: 'What changed in the unigate release?' }] });
    await flushWrites(fixture.gateway);

    await page.goto(`${consoleUrl}/usage`);
    const note = page.getByTestId('usage-table').getByTestId('hosted-tools');
    await note.waitFor();
    expect(await note.textContent()).toBe('1 web search · $0.025');
    // The request's cost (the search and its tokens) is shown to the same precision as its search, not cut to $0.02.
    const costCell = page.getByTestId('usage-table').locator('td[data-label="Cost"]').first();
    expect(await costCell.textContent()).toMatch(/^\$0\.025\d{1,4}1 web search · \$0\.025$/);
    await note.scrollIntoViewIfNeeded();
    await screenshot(fixture, page, 'usage-hosted-tools');
    await page.emulateMedia({ colorScheme: 'dark' });
    await screenshot(fixture, page, 'usage-hosted-tools-dark');
    await page.setViewportSize({ width: 390, height: 844 });
    await note.scrollIntoViewIfNeeded();
    expect(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')).toBeLessThanOrEqual(0);
    await screenshot(fixture, page, 'usage-hosted-tools-phone-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await screenshot(fixture, page, 'usage-hosted-tools-phone');
    expectCleanPage(watched);
    await watched.context.close();

    // The operator's usage explorer shows the same.
    const operator = await openPage(fixture.browser, { width: 1360, height: 900 });
    const email = `owner-${randomBytes(4).toString('hex')}@example.com`;
    await operator.page.goto(`${consoleUrl}/operator/setup`);
    await operator.page.getByLabel('Admin token').fill(fixture.gateway.adminToken);
    await operator.page.getByLabel('Email').fill(email);
    await operator.page.getByLabel('Password').fill(PASSWORD);
    await operator.page.getByRole('button', { name: 'Create the owner' }).click();
    await operator.page.waitForURL('**/security');
    await operator.page.getByRole('button', { name: 'Set up two-factor' }).click();
    const secret = (await operator.page.getByTestId('totp-secret').textContent()) ?? '';
    await operator.page.getByLabel('Code from the app').fill(totpCode(secret, fixture.now()));
    await operator.page.getByRole('button', { name: 'Turn on two-factor' }).click();
    await operator.page.getByRole('button', { name: 'I have saved the codes' }).click();
    await operator.page.getByRole('button', { name: /^Account menu/ }).click();
    await operator.page.getByRole('menuitem', { name: 'Sign out', exact: true }).click();
    await operator.page.waitForURL(/\/sign-in(?:\?|$)/);
    nextTotpStep(fixture);
    await operator.page.getByLabel('Email').fill(email);
    await operator.page.getByLabel('Password').fill(PASSWORD);
    await operator.page.getByRole('button', { name: 'Sign in' }).click();
    await operator.page.getByLabel('Code').fill(totpCode(secret, fixture.now()));
    await operator.page.getByRole('button', { name: 'Verify' }).click();
    await operator.page.waitForURL((url) => !url.pathname.startsWith('/sign-in'));
    await operator.page.goto(`${consoleUrl}/operator/usage`);
    const explorer = operator.page.getByTestId('operator-usage');
    await explorer.getByTestId('hosted-tools').first().waitFor();
    expect(await explorer.getByTestId('hosted-tools').first().textContent()).toBe('1 web search · $0.025');
    expect(await explorer.locator('td[data-label="Cost"]').first().textContent()).toMatch(/^\$0\.025\d{1,4}1 web search · \$0\.025$/);
    await explorer.getByTestId('hosted-tools').first().scrollIntoViewIfNeeded();
    await screenshot(fixture, operator.page, 'operator-usage-hosted-tools');
    expectCleanPage(operator);
    await operator.context.close();
  }, 240_000);
});
