/**
 * Spend by end customer and by tag in the console: requests naming customers (OpenAI's `user`, the
 * `x-gateway-customer` header) and tags (`metadata`, `x-gateway-tags`) show on the usage page, dearest first, with the
 * cost the callers were told, at desktop and phone widths (screenshots usage-by-customer*.png). No CSP violation, no
 * uncaught error, no table wider than the phone.
 */
import OpenAI from 'openai';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureChromium } from '../support/chromium.js';
import { flushWrites } from '../support/gateway-harness.js';
import { CHAT_MODEL, expectCleanPage, openPage, screenshot, signUpAndVerify, startConsoleFixture, type ConsoleFixture } from '../support/console-browser.js';

const chromiumPresent = ensureChromium();
let fixture: ConsoleFixture;

beforeAll(async () => {
  if (!chromiumPresent) return;
  fixture = await startConsoleFixture();
}, 300_000);

afterAll(async () => {
  await fixture?.close();
});

describe.skipIf(!chromiumPresent)('spend by customer and tag in the console', () => {
  it('the usage page shows each customer\'s and each tag\'s spend, dearest first', async () => {
    const watched = await openPage(fixture.browser);
    const { page } = watched;
    const accountId = await signUpAndVerify(fixture, page, `customers-${randomBytes(4).toString('hex')}@example.com`);
    expect((await fixture.gateway.admin('POST', `/admin/accounts/${accountId}/credits`, { amount_usd: 5 })).status).toBe(200);
    const key = await fixture.gateway.admin<{ key: string }>('POST', `/admin/accounts/${accountId}/keys`, { name: 'app backend' });
    const client = new OpenAI({ apiKey: key.body.key, baseURL: fixture.gateway.baseURL, maxRetries: 0 });
    const spent = new Map<string, number>();
    const ask = async (customer: string, options: { user?: boolean; tags?: string; metadata?: Record<string, string> }) => {
      const { response } = await client.chat.completions.create(
        { model: CHAT_MODEL, messages: [{ role: 'user', content: 'Summarize the release notes.' }], ...(options.user === true ? { user: customer } : {}), ...(options.metadata === undefined ? {} : { metadata: options.metadata, store: false }) },
        { headers: { ...(options.user === true ? {} : { 'x-gateway-customer': customer }), ...(options.tags === undefined ? {} : { 'x-gateway-tags': options.tags }) } },
      ).withResponse();
      spent.set(customer, (spent.get(customer) ?? 0) + Number(response.headers.get('x-request-cost-usd')));
    };
    await ask('acme-42', { user: true, tags: 'team=search,feature=summaries' });
    await ask('acme-42', { user: true, metadata: { team: 'search' } });
    await ask('acme-42', { tags: 'team=search' });
    await ask('globex', { tags: 'team=ads' });
    await flushWrites(fixture.gateway);

    await page.goto(`${fixture.gateway.consoleUrl}/usage`);
    const table = page.getByTestId('spend-by-customer');
    await table.waitFor();
    const rows = await table.locator('tbody tr').allInnerTexts();
    expect(rows[0]).toContain('acme-42');
    expect(rows[1]).toContain('globex');
    await table.scrollIntoViewIfNeeded();
    await screenshot(fixture, page, 'usage-by-customer');
    await page.getByRole('button', { name: 'By tag' }).click();
    await page.getByTestId('spend-by-customer').getByText('team=ads').waitFor();
    expect(await page.getByTestId('spend-by-customer').locator('tbody tr').count()).toBe(3);
    await screenshot(fixture, page, 'usage-by-tag');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByTestId('spend-by-customer').scrollIntoViewIfNeeded();
    expect(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')).toBeLessThanOrEqual(0);
    await screenshot(fixture, page, 'usage-by-tag-phone');
    await page.getByRole('button', { name: 'By customer' }).click();
    await page.getByTestId('spend-by-customer').getByText('globex').waitFor();
    await screenshot(fixture, page, 'usage-by-customer-phone');
    expectCleanPage(watched);
    await watched.context.close();
    expect(spent.get('acme-42')).toBeGreaterThan(0);
  }, 180_000);
});
