/**
 * A user's everyday console in Debian's Chromium, against the real gateway with a fake Stripe: a card top-up, an
 * operator credit with its reason and usage through the official SDK, then the Transactions page explains every
 * change of the balance to the cent; the Models page lists the account's models with the catalog's prices and hides
 * what the keys' allowlists exclude. Screenshots of each page at 1280 px and 390 px, light and dark.
 */
import OpenAI from 'openai';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ensureChromium } from '../support/chromium.js';
import { FakeStripe } from '../support/fake-stripe.js';
import { CHAT_MODEL, OTHER_MODEL, expectCleanPage, openPage, screenshot, signUpAndVerify, startConsoleFixture, type ConsoleFixture } from '../support/console-browser.js';

const chromiumPresent = ensureChromium();
let fixture: ConsoleFixture;
let stripe: FakeStripe;

beforeAll(async () => {
  if (!chromiumPresent) return;
  stripe = new FakeStripe();
  await stripe.start();
  fixture = await startConsoleFixture({ ...stripe.env(), TOPUP_PRESETS_USD: '10,20,50', TOPUP_MIN_USD: '5' });
}, 300_000);

afterAll(async () => {
  await fixture?.close();
  await stripe?.stop();
});

const run = promisify(execFile);
const unique = (prefix: string): string => `${prefix}-${randomBytes(4).toString('hex')}@example.com`;
const nano = (usd: number): number => Math.round(usd * 1e9);

/** Stands in for Stripe's hosted page: pays the session on the fake Stripe, delivers the webhook, returns the payer. */
async function payOnStripe(page: Page): Promise<void> {
  await page.route('https://checkout.stripe.com/**', async (route) => {
    const id = new URL(route.request().url()).pathname.split('/').pop() ?? '';
    const session = stripe.pay(id);
    const answer = await stripe.deliver(`${fixture.gateway.consoleUrl}/api/webhooks/stripe`, stripe.completedEvent(id));
    expect(answer.status).toBe(200);
    await route.fulfill({ status: 303, headers: { location: session.success_url.replace('{CHECKOUT_SESSION_ID}', id) } });
  });
}

async function csrfPost<T>(page: Page, path: string, body: unknown): Promise<T> {
  const session = (await (await page.request.get(`${fixture.gateway.consoleUrl}/api/session`)).json()) as { csrf_token: string };
  const answer = await page.request.post(`${fixture.gateway.consoleUrl}${path}`, { data: body, headers: { 'x-csrf-token': session.csrf_token } });
  expect(answer.status(), await answer.text()).toBeLessThan(300);
  return (await answer.json()) as T;
}

/** Screenshots of the page as it is now at both widths, light and dark. */
async function shots(page: Page, name: string, scrollTo?: string): Promise<void> {
  for (const [width, height] of [[1280, 860], [390, 844]] as const) {
    await page.setViewportSize({ width, height });
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.evaluate('window.scrollTo(0, 0)');
      if (scrollTo !== undefined) await page.getByTestId(scrollTo).scrollIntoViewIfNeeded();
      const overflow = await page.evaluate('document.documentElement.scrollWidth - window.innerWidth') as number;
      expect(overflow, `${name} at ${width}px`).toBeLessThanOrEqual(0);
      await screenshot(fixture, page, `${name}-${width}-${scheme}`);
    }
  }
  await page.setViewportSize({ width: 1280, height: 860 });
  await page.emulateMedia({ colorScheme: 'light' });
}

describe.skipIf(!chromiumPresent)('a user\'s everyday console in Chromium', () => {
  let page: Page;
  let accountId: string;
  let secret: string;

  it('explains every balance change of a journey on the Transactions page', async () => {
    const watched = await openPage(fixture.browser);
    page = watched.page;
    const base = fixture.gateway.consoleUrl;
    accountId = await signUpAndVerify(fixture, page, unique('everyday'));

    // A card top-up through the fake Stripe.
    await payOnStripe(page);
    await page.goto(`${base}/billing`);
    await page.getByRole('button', { name: '$20.00', exact: true }).click();
    await page.getByRole('button', { name: 'Pay by card' }).click();
    await page.waitForURL(/\/billing\?checkout=success/);
    await expect.poll(() => page.getByTestId('balance').textContent(), { timeout: 15_000 }).toBe('$20.00');

    // An operator's credit with its reason, and usage with a key that may call one model only.
    expect((await fixture.gateway.admin('POST', `/admin/accounts/${accountId}/credits`, { amount_usd: 2.5, reason: 'Goodwill for the outage on Monday' })).status).toBe(200);
    const created = await csrfPost<{ secret: string }>(page, '/api/keys', { name: 'chat only', allowed_models: [CHAT_MODEL] });
    secret = created.secret;
    const sdk = new OpenAI({ baseURL: fixture.gateway.baseURL, apiKey: secret, maxRetries: 0 });
    for (let index = 0; index < 2; index += 1) await sdk.chat.completions.create({ model: CHAT_MODEL, messages: [{ role: 'user', content: `question ${index}` }] });
    await fixture.gateway.gateway.services.usageLog.flush();

    await page.goto(`${base}/transactions`);
    await page.getByRole('heading', { name: 'Transactions', level: 1 }).waitFor();
    const rows = page.getByTestId('transaction');
    await expect.poll(() => rows.count()).toBe(3);
    expect(await rows.evaluateAll((elements) => elements.map((element) => element.getAttribute('data-type')))).toEqual(['usage', 'operator_credit', 'card_top_up']);
    await page.getByText('Card top-up').waitFor();
    expect(await page.getByTestId('transaction-reason').textContent()).toBe('“Goodwill for the outage on Monday”');
    await page.getByText(/^Usage on \d{4}-\d{2}-\d{2} \(2 requests\)$/).waitFor();

    // To the cent: start + each amount = end = the balance the billing page shows, and what the usage log charged.
    const history = (await (await page.request.get(`${base}/api/console/transactions`)).json()) as { opening_balance_usd: number; closing_balance_usd: number; data: Array<{ amount_usd: number; type: string }> };
    const usage = (await (await page.request.get(`${base}/api/usage`)).json()) as { data: Array<{ cost_usd: number }> };
    const charged = usage.data.reduce((sum, row) => sum + nano(row.cost_usd), 0);
    expect(charged).toBeGreaterThan(0);
    expect(history.data.map((line) => nano(line.amount_usd))).toEqual([-charged, nano(2.5), nano(20)]);
    expect(nano(history.opening_balance_usd) + history.data.reduce((sum, line) => sum + nano(line.amount_usd), 0)).toBe(nano(history.closing_balance_usd));
    const balance = ((await fixture.gateway.admin('GET', `/admin/accounts/${accountId}`)).body as { balance_usd: number }).balance_usd;
    expect(history.closing_balance_usd).toBe(balance);
    await expect.poll(() => page.getByTestId('closing-balance').textContent()).toBe(new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumFractionDigits: 6 }).format(balance));

    // Filtered to what the operator did, and the CSV the browser downloads.
    await page.getByLabel('Show').selectOption('operator');
    await expect.poll(() => rows.count()).toBe(1);
    await page.getByLabel('Show').selectOption('');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Export CSV' }).click()]);
    expect(download.suggestedFilename()).toMatch(/^transactions-\d{4}-\d{2}-\d{2}\.csv$/);
    await shots(page, 'transactions');
    expectCleanPage(watched);
  });

  it('lists the account\'s models with the catalog\'s prices, hiding what the keys may not call', async () => {
    const base = fixture.gateway.consoleUrl;
    await page.goto(`${base}/models`);
    await page.getByRole('heading', { name: 'Models', level: 1 }).waitFor();
    const rows = page.getByTestId('model-row');
    // The only key may call the chat model alone: the other is hidden until asked for every model.
    await expect.poll(() => rows.evaluateAll((elements) => elements.map((element) => element.getAttribute('data-model')))).toEqual([CHAT_MODEL]);
    const row = page.locator(`[data-model="${CHAT_MODEL}"]`);
    expect(await row.locator('td[data-label="Input / 1M tokens"]').textContent()).toBe('$2.00');
    expect(await row.locator('td[data-label="Output / 1M tokens"]').textContent()).toBe('$8.00');
    expect(await row.locator('td[data-label="Your keys"]').textContent()).toBe('chat only');
    await page.getByLabel('Callable with').selectOption('all');
    await expect.poll(() => rows.count()).toBe(2);
    await page.getByLabel('Search').fill('other');
    await expect.poll(() => rows.evaluateAll((elements) => elements.map((element) => element.getAttribute('data-model')))).toEqual([OTHER_MODEL]);
    await page.getByLabel('Search').fill('');
    await page.getByLabel('Callable with').selectOption('any');

    // Prices in another currency at the published rate, marked approximate.
    const now = Date.now();
    await fixture.gateway.gateway.services.storage.fx.set({ base: 'USD', rates: { EUR: '0.5' }, asOf: now, source: 'test', updatedAt: now });
    await page.reload();
    await page.getByLabel('Currency').selectOption('EUR');
    await expect.poll(() => row.locator('td[data-label="Input / 1M tokens"]').textContent()).toBe('≈ €1.00');
    await page.getByLabel('Currency').selectOption('USD');

    // "Try in playground" opens the playground on that model.
    await shots(page, 'models');
    await row.getByRole('link', { name: 'Try in playground' }).click();
    await page.waitForURL(`**/playground?model=${CHAT_MODEL}`);
  });

  it('the quickstart\'s curl, filled in with the base URL and the chosen key, answers in all three families', async () => {
    const base = fixture.gateway.consoleUrl;
    await page.goto(`${base}/quickstart`);
    await page.getByRole('heading', { name: 'Quickstart', level: 1 }).waitFor();
    // The page fills in the base URL, keys and models from requests of its own: wait for each, never read once.
    await expect.poll(() => page.getByTestId('base-url').textContent()).toBe(fixture.gateway.url);
    await expect.poll(() => page.getByLabel('Key').locator('option:checked').textContent()).toMatch(/^chat only \(sk-…[A-Za-z0-9]{4}\)$/);
    await expect.poll(() => page.getByTestId('key-line').textContent()).toContain(`export UNIGATE_API_KEY="sk-…${secret.slice(-4)}"`);
    await expect.poll(() => page.getByLabel('Model').inputValue()).toBe(CHAT_MODEL);
    for (const family of ['openai', 'anthropic', 'gemini']) {
      const code = (await page.getByTestId(`snippet-${family}-curl`).textContent()) ?? '';
      expect(code).toContain(fixture.gateway.url);
      const { stdout } = await run('sh', ['-c', code.replace(/^curl /, 'curl -sS --fail-with-body ')], { env: { PATH: process.env.PATH ?? '', UNIGATE_API_KEY: secret }, timeout: 20_000 });
      const answer = JSON.parse(stdout) as Record<string, unknown>;
      const text = family === 'openai'
        ? (answer.choices as Array<{ message: { content: string } }>)[0]?.message.content
        : family === 'anthropic' ? (answer.content as Array<{ text: string }>)[0]?.text : (answer.candidates as Array<{ content: { parts: Array<{ text: string }> } }>)[0]?.content.parts[0]?.text;
      expect(text, family).toBeTruthy();
    }
    await page.getByRole('tab', { name: 'Python' }).click();
    expect(await page.getByTestId('snippet-anthropic-python').textContent()).toContain(`anthropic.Anthropic(base_url="${fixture.gateway.url}"`);
    await page.getByRole('tab', { name: 'Codex CLI' }).click();
    expect(await page.getByTestId('agent-codex').textContent()).toContain(`base_url = "${fixture.gateway.url}/v1"`);
    await page.getByRole('tab', { name: 'Claude Code' }).click();
    expect(await page.getByTestId('agent-claude-code').textContent()).toContain(`export ANTHROPIC_BASE_URL='${fixture.gateway.url}'`);
    await shots(page, 'quickstart');
  });

  it('plays with a system prompt, max tokens and no streaming, two models side by side, and copies the call as curl', async () => {
    const base = fixture.gateway.consoleUrl;
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    await page.goto(`${base}/playground?model=${CHAT_MODEL}`);
    await page.getByRole('heading', { name: 'Playground', level: 1 }).waitFor();
    await expect.poll(() => page.getByLabel('Model', { exact: true }).inputValue()).toBe(CHAT_MODEL);
    await page.getByLabel('Compare with').selectOption(OTHER_MODEL);
    await page.getByLabel('System prompt').fill('Answer in one short line.');
    await page.getByLabel('Max tokens').fill('40');
    await page.getByLabel('Temperature').fill('0.3');
    await page.getByLabel('Stream the answer as it is written').uncheck();
    await page.getByLabel('Message').fill('Name a colour.');
    await page.getByRole('button', { name: 'Send' }).click();
    for (const log of ['chat-log', 'chat-log-compare']) {
      await page.getByTestId(log).getByTestId('answer-summary').waitFor();
      expect((await page.getByTestId(log).locator('.turn-assistant .turn-text').textContent())?.length, log).toBeGreaterThan(0);
    }
    const sent = fixture.upstream.requests.slice(-2).map((request) => request.body as { messages: Array<{ role: string; content: string }>; stream?: boolean; temperature?: number });
    for (const body of sent) {
      expect(body.messages[0]).toEqual({ role: 'system', content: 'Answer in one short line.' });
      expect(body.stream ?? false).toBe(false);
      expect(body.temperature).toBe(0.3);
    }

    // "Copy as curl" of the first column: run it with the user's own key, and it answers the same way.
    await page.getByTestId('chat-log').locator('..').getByRole('button', { name: 'Copy as curl' }).click();
    const curl = await page.evaluate('navigator.clipboard.readText()') as string;
    expect(curl).toContain(`${fixture.gateway.url}/v1/chat/completions`);
    expect(curl).toContain('"max_tokens":40');
    expect(curl).not.toContain('sk-');
    const { stdout } = await run('sh', ['-c', curl.replace(/^curl /, 'curl -sS --fail-with-body ')], { env: { PATH: process.env.PATH ?? '', UNIGATE_API_KEY: secret }, timeout: 20_000 });
    expect((JSON.parse(stdout) as { object: string }).object).toBe('chat.completion');
    await shots(page, 'playground');
  });

  it('shows the newest announcement as a banner until dismissed, and lists them all', async () => {
    const base = fixture.gateway.consoleUrl;
    expect((await fixture.gateway.admin('POST', '/admin/announcements', { title: 'Scheduled maintenance', body: 'The API pauses on Sunday 02:00–02:05 UTC.', level: 'warning' })).status).toBe(201);
    await page.goto(`${base}/keys`);
    const banner = page.getByTestId('announcement-banner');
    await banner.getByText('Scheduled maintenance').waitFor();
    await shots(page, 'announcement-banner');
    await banner.getByRole('button', { name: /^Dismiss/ }).click();
    await banner.waitFor({ state: 'detached' });
    await page.reload();
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
    await page.waitForLoadState('networkidle');
    expect(await page.getByTestId('announcement-banner').count()).toBe(0);
    await page.goto(`${base}/announcements`);
    await page.getByText('The API pauses on Sunday').waitFor();
    await page.getByText('Dismissed').waitFor();
    await shots(page, 'announcements');
  });

  it('keeps a chosen light or dark theme whatever the system says, and follows the system again on request', async () => {
    const base = fixture.gateway.consoleUrl;
    const red = async (): Promise<number> => Number(((await page.evaluate('getComputedStyle(document.body).backgroundColor')) as string).match(/\d+/)?.[0] ?? 0);
    await page.emulateMedia({ colorScheme: 'light' });
    await page.goto(`${base}/usage`);
    await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor();
    expect(await red()).toBeGreaterThan(200);
    await page.getByRole('button', { name: /^Account menu/ }).click();
    await page.getByRole('menuitemradio', { name: 'Dark' }).click();
    expect(await red()).toBeLessThan(60);
    await page.reload();
    await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor();
    expect(await red()).toBeLessThan(60);
    await page.waitForLoadState('networkidle');
    await screenshot(fixture, page, 'usage-1280-dark-chosen');
    await page.getByRole('button', { name: /^Account menu/ }).click();
    await page.getByRole('menuitemradio', { name: 'System' }).click();
    expect(await red()).toBeGreaterThan(200);

    // The requests table uses the width at 1280 px: nothing scrolls sideways, no model id wraps.
    const table = page.getByTestId('usage-table');
    await table.waitFor();
    await shots(page, 'usage', 'usage-table');
    // Run in the page (a string, as the other browser tests do: the test's types know no DOM).
    const fit = await table.evaluate(`(() => {
      const element = document.querySelector('[data-testid="usage-table"]');
      const frame = element.parentElement;
      return {
        scroll: frame.scrollWidth - frame.clientWidth,
        tallest: Math.max(...[...element.querySelectorAll('tbody .usage-model-cell')].map((cell) => cell.getBoundingClientRect().height)),
        widths: [...element.querySelectorAll('thead th')].map((cell) => Math.round(cell.getBoundingClientRect().width)).join(','),
      };
    })()`) as { scroll: number; tallest: number; widths: string };
    expect(fit.scroll, fit.widths).toBeLessThanOrEqual(0);
    // The model id on one line, its path on at most two (Gemini's paths hold the model too).
    expect(fit.tallest).toBeLessThan(90);
    // On a phone each request is a card, not a table to scroll.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.getByTestId('usage-table').locator('thead').isVisible()).toBe(false);
    await page.setViewportSize({ width: 1280, height: 860 });
  });
});
