/**
 * A key's daily budget and browser origins through the console in Chromium: the create form takes both (the browser
 * access warning shown, a malformed origin refused before sending), the list shows the budget's spend, limit and
 * reset, the server stored exactly that, the edit form starts from it, and a spent budget reads as paused until the
 * reset while the openai SDK gets 429 with the key.
 */
import OpenAI from 'openai';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureChromium } from '../support/chromium.js';
import { CHAT_MODEL, expectCleanPage, openPage, screenshot, signUpAndVerify, startConsoleFixture, type ConsoleFixture } from '../support/console-browser.js';

const chromiumPresent = ensureChromium();
let fixture: ConsoleFixture;

beforeAll(async () => {
  if (chromiumPresent) fixture = await startConsoleFixture();
}, 300_000);

afterAll(async () => {
  await fixture?.close();
});

interface StoredKey {
  id: string;
  status: string;
  budget: { period: string; limit_usd: number; spent_usd: number; resets_at: string } | null;
  allowed_origins: string[] | null;
  allowed_origins_warning?: string;
}

/** The next 00:00 UTC after now, as the server writes times. */
function nextUtcMidnight(): string {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)).toISOString();
}

describe.skipIf(!chromiumPresent)('key budgets and browser origins in the console', () => {
  it('creates a key with a daily budget and an origin, lists its reset, and shows it paused once spent', async () => {
    const email = `budget-${randomBytes(4).toString('hex')}@example.com`;
    const watched = await openPage(fixture.browser);
    const { page } = watched;
    const consoleUrl = fixture.gateway.consoleUrl;
    const accountId = await signUpAndVerify(fixture, page, email);
    expect((await fixture.gateway.admin('POST', `/admin/accounts/${accountId}/credits`, { amount_usd: 5 })).status).toBe(200);

    await page.goto(`${consoleUrl}/keys`);
    await page.getByRole('button', { name: 'Create key' }).click();
    const form = page.getByRole('dialog', { name: 'Create an API key' });
    await form.getByLabel('Name', { exact: true }).fill('budgeted');
    await form.getByLabel('Budget period').selectOption('day');
    await form.getByLabel('Budget limit (USD)').fill('2.5');
    await screenshot(fixture, page, 'keys-create-budget-fields');
    await form.getByLabel('Allow direct browser access (dangerous)').check();
    await form.getByText('anyone who can read the page can copy the key').waitFor();
    await form.getByLabel('Allowed browser origins').fill('https://app.example.com/');
    await form.getByRole('button', { name: 'Create key' }).click();
    await form.getByText('https://app.example.com/ is not an origin').waitFor();
    await form.getByLabel('Allowed browser origins').fill('https://app.example.com');
    await screenshot(fixture, page, 'keys-create-budget');
    await form.getByRole('button', { name: 'Create key' }).click();
    const secretDialog = page.getByRole('dialog', { name: 'Your new API key' });
    const apiKey = ((await secretDialog.getByTestId('new-key-secret').textContent()) ?? '').trim();
    expect(apiKey.length).toBeGreaterThan(20);
    await secretDialog.getByRole('button', { name: 'I have copied the key' }).click();

    // Over the wire, read back by the admin API: the budget starts this UTC day with nothing spent.
    const listed = await fixture.gateway.admin('GET', `/admin/accounts/${accountId}/keys`);
    const keys = (listed.body as unknown as { data: (StoredKey & { name: string })[] }).data;
    const stored = keys.find((key) => key.name === 'budgeted');
    expect(stored?.budget).toEqual({ period: 'day', limit_usd: 2.5, spent_usd: 0, resets_at: nextUtcMidnight() });
    expect(stored?.allowed_origins).toEqual(['https://app.example.com']);
    expect(stored?.allowed_origins_warning).toContain('anyone who can read the page can copy the key');
    expect(stored?.status).toBe('enabled');

    // The list shows the budget with its spend, limit and reset (in the browser's time zone), and the origin.
    const row = page.getByRole('row', { name: /budgeted/ });
    await row.getByText('Enabled').waitFor();
    const resetText = await page.evaluate(`new Intl.DateTimeFormat('en-GB', { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' }).format(new Date(${JSON.stringify(nextUtcMidnight())}))`) as string;
    const budgetCell = row.getByTestId('key-budget');
    expect(await budgetCell.textContent()).toBe(`Daily budget$0.00 of $2.50Resets ${resetText}`);
    expect(await row.textContent()).toContain('Browser access');
    expect(await row.textContent()).toContain('https://app.example.com');
    await screenshot(fixture, page, 'keys-budget');

    // The edit form starts from the stored budget; a limit of $0 spends it, so the key pauses until the reset.
    await page.getByRole('button', { name: 'Edit budgeted' }).click();
    const editForm = page.getByRole('dialog', { name: 'Edit API key' });
    expect(await editForm.getByLabel('Budget period').inputValue()).toBe('day');
    expect(await editForm.getByLabel('Budget limit (USD)').inputValue()).toBe('2.5');
    expect(await editForm.getByLabel('Allowed browser origins').inputValue()).toBe('https://app.example.com');
    await editForm.getByLabel('Budget limit (USD)').fill('0');
    await editForm.getByRole('button', { name: 'Save changes' }).click();
    await editForm.waitFor({ state: 'hidden' });
    await row.getByText('Paused', { exact: true }).waitFor();
    expect(await row.textContent()).toContain('Daily budget spent');
    expect(await budgetCell.textContent()).toBe(`Daily budget$0.00 of $0.00Paused until ${resetText}`);
    await screenshot(fixture, page, 'keys-budget-paused');
    // On a phone in dark mode the budget still fits the width.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.emulateMedia({ colorScheme: 'dark' });
    await row.getByTestId('key-budget').scrollIntoViewIfNeeded();
    expect(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')).toBeLessThanOrEqual(0);
    await screenshot(fixture, page, 'keys-budget-phone-dark');
    const client = new OpenAI({ apiKey, baseURL: fixture.gateway.baseURL, maxRetries: 0 });
    await expect(client.chat.completions.create({ model: CHAT_MODEL, messages: [{ role: 'user', content: 'over budget' }], max_tokens: 5 }))
      .rejects.toMatchObject({ status: 429, code: 'quota_exhausted' });
    const paused = (await fixture.gateway.admin('GET', `/admin/keys/${stored?.id ?? ''}`)).body as unknown as StoredKey;
    expect(paused.budget?.limit_usd).toBe(0);
    expect(paused.status).toBe('paused');

    expectCleanPage(watched);
    await watched.context.close();
  }, 120_000);
});
