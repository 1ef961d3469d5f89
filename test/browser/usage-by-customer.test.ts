/**
 * Spend by end customer and by tag in the console: requests naming customers (OpenAI's `user`, the
 * `x-gateway-customer` header) and tags (`metadata`, `x-gateway-tags`) show on the usage page, dearest first, with the
 * cost the callers were told, and a per-day chart of the dearest five with the rest summed as "other", at desktop and
 * phone widths, light and dark (screenshots usage-by-customer*.png, usage-by-tag*.png). No CSP violation, no uncaught
 * error, no table or chart wider than the phone.
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
    // Four more customers, one request each: with acme-42 and globex six in all, so the chart sums the sixth as "other".
    for (const customer of ['zeta-1', 'zeta-2', 'zeta-3', 'zeta-4']) await ask(customer, {});
    await flushWrites(fixture.gateway);

    await page.goto(`${fixture.gateway.consoleUrl}/usage`);
    const table = page.getByTestId('spend-by-customer');
    await table.waitFor();
    const rows = await table.locator('tbody tr').allInnerTexts();
    expect(rows[0]).toContain('acme-42');
    expect(rows[1]).toContain('globex');
    expect(rows).toHaveLength(6);
    // The chart: one stacked bar series per shown customer plus "other" (recharts draws one layer per series).
    const chart = page.getByTestId('spend-by-customer-chart');
    await chart.locator('svg.recharts-surface').first().waitFor();
    expect(await chart.getAttribute('data-series')).toBe('6');
    expect(await chart.locator('.recharts-bar').count()).toBe(6);
    expect(await chart.locator('.recharts-bar-rectangle path').count()).toBeGreaterThanOrEqual(6);
    const legend = await chart.locator('.recharts-legend-item-text').allInnerTexts();
    expect(legend).toEqual(['acme-42', 'globex', 'zeta-1', 'zeta-2', 'zeta-3', 'other']);
    await chart.scrollIntoViewIfNeeded();
    await screenshot(fixture, page, 'usage-by-customer-chart');
    await table.scrollIntoViewIfNeeded();
    await screenshot(fixture, page, 'usage-by-customer');
    await page.getByRole('button', { name: 'By tag' }).click();
    await page.getByTestId('spend-by-customer').getByText('team=ads').waitFor();
    expect(await page.getByTestId('spend-by-customer').locator('tbody tr').count()).toBe(3);
    // Three tags: three series of their own, no "other".
    await page.getByTestId('spend-by-customer-chart').locator('.recharts-legend-item-text').getByText('team=ads').waitFor();
    expect(await page.getByTestId('spend-by-customer-chart').locator('.recharts-bar').count()).toBe(3);
    await screenshot(fixture, page, 'usage-by-tag');
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.getByTestId('spend-by-customer-chart').scrollIntoViewIfNeeded();
    await screenshot(fixture, page, 'usage-by-tag-chart-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByTestId('spend-by-customer').scrollIntoViewIfNeeded();
    expect(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')).toBeLessThanOrEqual(0);
    await screenshot(fixture, page, 'usage-by-tag-phone');
    await page.getByRole('button', { name: 'By customer' }).click();
    await page.getByTestId('spend-by-customer').getByText('globex').waitFor();
    await screenshot(fixture, page, 'usage-by-customer-phone');
    await page.getByTestId('spend-by-customer-chart').scrollIntoViewIfNeeded();
    expect(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')).toBeLessThanOrEqual(0);
    await screenshot(fixture, page, 'usage-by-customer-chart-phone');
    await page.emulateMedia({ colorScheme: 'dark' });
    await screenshot(fixture, page, 'usage-by-customer-chart-phone-dark');
    expectCleanPage(watched);
    await watched.context.close();
    expect(spent.get('acme-42')).toBeGreaterThan(0);
  }, 180_000);
});
