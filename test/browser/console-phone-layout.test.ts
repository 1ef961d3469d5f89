/**
 * Every console page, user and operator, in Debian's Chromium at 1280 px and at 390 px, light and dark: first on a
 * fresh gateway (empty states), then with data in every list, then with the page's data requests failing (error
 * states). At 390 px no page scrolls sideways and no list scrolls inside its card; the lists that had been plain
 * tables (referrals, the operator overview, tickets, offers, operators, alerts, sessions) are one card per row.
 * Screenshots: `phone-<page>-<state>-<wide|phone>-<light|dark>.png` in the console screenshot folder.
 */
import { randomBytes } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ensureChromium } from '../support/chromium.js';
import { CHAT_MODEL, PASSWORD, expectCleanPage, mailedLink, openPage, screenshot, sidewaysTables, startConsoleFixture, type ConsoleFixture } from '../support/console-browser.js';
import { flushWrites } from '../support/gateway-harness.js';
import { becomeFirstOwner } from '../support/operator-browser.js';

const chromiumPresent = ensureChromium();
let fixture: ConsoleFixture;

beforeAll(async () => {
  if (!chromiumPresent) return;
  fixture = await startConsoleFixture({ REFERRAL_REWARD: '10%', REFERRAL_REWARD_TOPUPS: '1', SUPPORT_EMAIL: 'desk@example.com', ALERT_CHECK_SECONDS: '1' });
}, 120_000);

afterAll(async () => {
  await fixture?.close();
});

/** Each page, the heading that says it has rendered, and the lists that must be cards on a phone once they have rows. */
const PAGES: Array<{ name: string; path: string; heading: string; cards?: string[] }> = [
  { name: 'keys', path: '/keys', heading: 'API keys' },
  { name: 'usage', path: '/usage', heading: 'Usage' },
  { name: 'playground', path: '/playground', heading: 'Playground' },
  { name: 'quickstart', path: '/quickstart', heading: 'Quickstart' },
  { name: 'models', path: '/models', heading: 'Models' },
  { name: 'projects', path: '/projects', heading: 'Projects' },
  { name: 'billing', path: '/billing', heading: 'Billing' },
  { name: 'transactions', path: '/transactions', heading: 'Transactions' },
  { name: 'plans', path: '/plans', heading: 'Plans' },
  { name: 'referrals', path: '/referrals', heading: 'Referrals', cards: ['referred-accounts'] },
  { name: 'members', path: '/members', heading: 'Members' },
  { name: 'alerts', path: '/alerts', heading: 'Alerts', cards: ['key-thresholds', 'alerts-sent'] },
  { name: 'webhooks', path: '/webhooks', heading: 'Webhooks' },
  { name: 'security', path: '/security', heading: 'Security', cards: ['sessions-table'] },
  { name: 'single-sign-on', path: '/single-sign-on', heading: 'Single sign-on' },
  { name: 'support', path: '/support', heading: 'Support' },
  { name: 'announcements', path: '/announcements', heading: 'Announcements' },
  { name: 'operator-overview', path: '/operator', heading: 'Overview', cards: ['channel-health'] },
  { name: 'operator-channels', path: '/operator/channels', heading: 'Channels' },
  { name: 'operator-models', path: '/operator/models', heading: 'Models and prices' },
  { name: 'operator-accounts', path: '/operator/accounts', heading: 'Accounts' },
  { name: 'operator-usage', path: '/operator/usage', heading: 'Usage explorer' },
  { name: 'operator-tickets', path: '/operator/tickets', heading: 'Support tickets', cards: ['tickets-table'] },
  { name: 'operator-offers', path: '/operator/offers', heading: 'Plans, codes and announcements', cards: ['plans-table', 'codes-table', 'announcements-table'] },
  { name: 'operator-operators', path: '/operator/operators', heading: 'Operators', cards: ['operators-table'] },
  { name: 'operator-audit', path: '/operator/audit', heading: 'Audit log' },
  { name: 'operator-webhooks', path: '/operator/webhooks', heading: 'Webhooks' },
  { name: 'operator-sso', path: '/operator/sso', heading: 'Single sign-on' },
];

/** What went wrong across all pages, reported together so one run names every page that regressed. */
const problems: string[] = [];

/** Whether the table is one card per row: its header row hidden and each row a grid of labelled cells. */
function isCards(page: Page, testId: string): Promise<string> {
  return page.evaluate(`(() => {
    const table = document.querySelector('[data-testid="${testId}"]');
    if (table === null) return 'missing';
    const head = table.querySelector('thead');
    const row = table.querySelector('tbody tr');
    if (row === null) return 'no rows';
    if (head !== null && getComputedStyle(head).display !== 'none') return 'header row shown';
    if (getComputedStyle(row).display !== 'grid') return 'rows are not cards';
    const unlabelled = [...row.querySelectorAll('td')].filter((cell) => !cell.dataset.label && !cell.classList.contains('cell-actions'));
    return unlabelled.length === 0 ? 'cards' : 'a cell without a label';
  })()`) as Promise<string>;
}

/** Cells of card lists and figures of stat tiles whose content is wider than they are (a long email running under its neighbour, an amount out of its tile). */
function clippedCells(page: Page): Promise<string[]> {
  return page.evaluate(`[...document.querySelectorAll('.table-cards td, .table-cards tbody th, .stat dd')]
    .filter((cell) => cell.offsetParent !== null && cell.scrollWidth > cell.clientWidth + 1)
    .map((cell) => (cell.closest('table')?.dataset.testid ?? 'stat') + ' ' + (cell.dataset.label ?? 'row') + ': ' + cell.textContent.slice(0, 40))`) as Promise<string[]>;
}

async function visit(page: Page, entry: (typeof PAGES)[number], state: 'empty' | 'full' | 'error'): Promise<void> {
  await page.goto(`${fixture.gateway.consoleUrl}${entry.path}`);
  await page.getByRole('heading', { name: entry.heading, level: 1, exact: true }).waitFor();
  if (state === 'error') {
    // The page says what failed instead of spinning for ever.
    await page.getByRole('alert').first().waitFor({ timeout: 10_000 }).catch(() => problems.push(`${entry.name} error: no error shown`));
  } else {
    await expect.poll(() => page.locator('.loading').count(), { timeout: 10_000 }).toBe(0).catch(() => problems.push(`${entry.name} ${state}: still loading`));
  }
  // Every width and scheme is shot with data in the page; the empty and failing passes are checked (and shot) where
  // they break first, at phone width in light mode, which halves the suite's time on this test.
  const views = state === 'full'
    ? ([[1280, 860, 'wide', 'light'], [1280, 860, 'wide', 'dark'], [390, 844, 'phone', 'light'], [390, 844, 'phone', 'dark']] as const)
    : ([[390, 844, 'phone', 'light']] as const);
  for (const [width, height, size, scheme] of views) {
    await page.setViewportSize({ width, height });
    await page.emulateMedia({ colorScheme: scheme });
    await page.waitForTimeout(100);
    if (width === 390 && scheme === 'light') {
      const overflow = (await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')) as number;
      if (overflow > 0) problems.push(`${entry.name} ${state}: the page scrolls ${overflow}px sideways at 390px`);
      for (const table of await sidewaysTables(page)) problems.push(`${entry.name} ${state}: ${table}`);
      for (const cell of await clippedCells(page)) problems.push(`${entry.name} ${state}: runs out of its cell: ${cell}`);
      if (state === 'full') {
        for (const testId of entry.cards ?? []) {
          const layout = await isCards(page, testId);
          if (layout !== 'cards') problems.push(`${entry.name}: ${testId} at 390px: ${layout}`);
        }
      }
    }
    await screenshot(fixture, page, `phone-${entry.name}-${state}-${size}-${scheme}`);
  }
  await page.setViewportSize({ width: 1280, height: 860 });
  await page.emulateMedia({ colorScheme: 'light' });
}

async function csrfPost<T>(page: Page, path: string, body: unknown): Promise<T> {
  const session = (await (await page.request.get(`${fixture.gateway.consoleUrl}/api/session`)).json()) as { csrf_token: string };
  const answer = await page.request.post(`${fixture.gateway.consoleUrl}${path}`, { data: body, headers: { 'x-csrf-token': session.csrf_token } });
  expect(answer.status(), await answer.text()).toBeLessThan(300);
  return (await answer.json()) as T;
}

describe.skipIf(!chromiumPresent)('the console at phone width', () => {
  it('fits every page at 390 px, empty, full and failing, with lists as cards', async () => {
    const owner = await openPage(fixture.browser, { width: 1280, height: 860 });
    const page = owner.page;
    const admin = fixture.gateway.admin;
    await becomeFirstOwner(fixture, page);
    const session = (await (await page.request.get(`${fixture.gateway.consoleUrl}/api/session`)).json()) as { account: { id: string } };

    for (const entry of PAGES) await visit(page, entry, 'empty');

    // Something in every list: money and a key with a quota, a call, a balance alert that fires, a referred
    // sign-up, a ticket, plans, codes and an announcement.
    expect((await admin('POST', `/admin/accounts/${session.account.id}/credits`, { amount_usd: 20 })).status).toBeLessThan(300);
    await page.goto(`${fixture.gateway.consoleUrl}/alerts`);
    await page.getByLabel('Balance below (USD)').fill('19.9999999');
    await page.getByRole('button', { name: 'Save alerts' }).click();
    await page.getByText('Saved. Each crossing').waitFor();
    const key = await csrfPost<{ secret: string }>(page, '/api/keys', { name: 'phone quota', quota_usd: 5 });
    const sdk = new OpenAI({ apiKey: key.secret, baseURL: fixture.gateway.baseURL, maxRetries: 0 });
    await sdk.chat.completions.create({ model: CHAT_MODEL, messages: [{ role: 'user', content: 'hello from a phone' }] });
    await flushWrites(fixture.gateway);
    await page.goto(`${fixture.gateway.consoleUrl}/referrals`);
    const link = (await page.getByTestId('referral-link').textContent()) ?? '';
    const friend = await openPage(fixture.browser);
    const friendEmail = `friend-${randomBytes(4).toString('hex')}@example.com`;
    await friend.page.goto(link);
    await friend.page.getByLabel('Email').fill(friendEmail);
    await friend.page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await friend.page.getByLabel('Repeat the password').fill(PASSWORD);
    await friend.page.getByRole('button', { name: 'Create account' }).click();
    await friend.page.waitForURL('**/keys');
    await friend.page.goto(await mailedLink(fixture.smtp, friendEmail, 'verify-email'));
    await friend.page.getByText('Your email address is verified.').waitFor();
    await friend.context.close();
    await csrfPost(page, '/api/console/support/tickets', { subject: 'Streams stop after a few tokens on my phone app', category: 'technical', message: 'Since this morning.' });
    expect((await admin('POST', '/admin/plans', { name: 'Team monthly', period: 'month', quota_usd: 40, overage: { policy: 'limit', limit_usd: 10 } })).status).toBeLessThan(300);
    expect((await admin('POST', '/admin/redemption-codes', { amount_usd: 2, count: 2, name: 'conference batch' })).status).toBeLessThan(300);
    expect((await admin('POST', '/admin/announcements', { title: 'Maintenance on Sunday', body: 'The gateway restarts at 02:00 UTC.', level: 'warning' })).status).toBeLessThan(300);
    await expect.poll(async () => ((await (await page.request.get(`${fixture.gateway.consoleUrl}/api/console/alerts`)).json()) as { alerts: unknown[] }).alerts.length, { timeout: 15_000 }).toBeGreaterThan(0);

    for (const entry of PAGES) await visit(page, entry, 'full');

    // Every data request but the session's fails: each page says so.
    await page.route(/\/api\/(?!session$|config$)/, async (route) => {
      if (route.request().method() !== 'GET') return route.continue();
      return route.fulfill({ status: 503, contentType: 'application/json', body: JSON.stringify({ error: { message: 'The gateway is restarting; try again in a minute.', type: 'server_error', code: 'unavailable' } }) });
    });
    for (const entry of PAGES) await visit(page, entry, 'error');
    await page.unrouteAll();

    expect(problems).toEqual([]);
    expectCleanPage(owner);
    await owner.context.close();
  }, 900_000);
});
