/**
 * The console end to end in Debian's Chromium, against the real gateway on 127.0.0.1 with a mock OpenAI upstream
 * and an SMTP sink: sign up → mailed verification link → two-factor on (code computed from the shown secret) →
 * sign out → sign in with TOTP → a backup code works once, not twice → a key with a cap and an allowlist →
 * the openai SDK calls the gateway with it → the call is in the usage table and chart → playground → revoke →
 * the SDK gets 401 while the console session still works. No page reports a CSP violation or an uncaught error.
 */
import OpenAI from 'openai';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ensureChromium } from '../support/chromium.js';
import { flushWrites } from '../support/gateway-harness.js';
import {
  CHAT_MODEL, OTHER_MODEL, PASSWORD, expectCleanPage, nextTotpStep, openPage, screenshot, signUpAndVerify, startConsoleFixture, totpCode,
  type ConsoleFixture, type WatchedPage,
} from '../support/console-browser.js';

const chromiumPresent = ensureChromium();
let fixture: ConsoleFixture;

beforeAll(async () => {
  if (chromiumPresent) fixture = await startConsoleFixture();
}, 300_000);

afterAll(async () => {
  await fixture?.close();
});

async function signOut(page: Page): Promise<void> {
  await page.getByRole('button', { name: /^Account menu/ }).click();
  await page.getByRole('menuitem', { name: 'Sign out', exact: true }).click();
  await page.waitForURL(/\/sign-in(?:\?|$)/);
}

async function signInWithCode(page: Page, email: string, code: string): Promise<void> {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Two-factor authentication' }).waitFor();
  await page.getByLabel('Code').fill(code);
  await page.getByRole('button', { name: 'Verify' }).click();
}

describe.skipIf(!chromiumPresent)('console journey in Chromium', () => {
  it('signs up, secures the account, makes a key, uses it, sees the usage and revokes it', async () => {
    const email = `journey-${randomBytes(4).toString('hex')}@example.com`;
    const watched: WatchedPage = await openPage(fixture.browser);
    const { page } = watched;
    const consoleUrl = fixture.gateway.consoleUrl;
    const step = { name: 'start' };
    try {
      await journey(page, email, consoleUrl, step);
    } catch (error) {
      // What the browser showed when a step failed, beside the other screenshots.
      await screenshot(fixture, page, 'journey-failure').catch(() => undefined);
      throw new Error(`journey step "${step.name}" failed at ${page.url()}: ${(error as Error).message}`, { cause: error });
    }
    expectCleanPage(watched);
    await watched.context.close();
  }, 180_000);
});

async function journey(page: Page, email: string, consoleUrl: string, step: { name: string }): Promise<void> {

  // Sign up and verify through the mailed link.
  step.name = 'Sign up and verify through the mailed link';
  const accountId = await signUpAndVerify(fixture, page, email, true);
  expect(accountId).not.toBe('');
  const credit = await fixture.gateway.admin('POST', `/admin/accounts/${accountId}/credits`, { amount_usd: 5 });
  expect(credit.status).toBe(200);

  // Two-factor: the secret shown as text gives the first code; ten backup codes are shown once.
  step.name = 'Two-factor';
  await page.goto(`${consoleUrl}/security`);
  await page.getByRole('button', { name: 'Set up two-factor' }).click();
  const secret = (await page.getByTestId('totp-secret').textContent()) ?? '';
  expect(secret).toMatch(/^[A-Z2-7]{16,}=*$/);
  await page.getByRole('img', { name: 'QR code of the two-factor secret' }).waitFor();
  await page.waitForFunction("(() => { const image = document.querySelector('img.qr-code'); return image !== null && image.complete && image.naturalWidth > 0; })()");
  await screenshot(fixture, page, 'two-factor-setup');
  await page.getByLabel('Code from the app').fill(totpCode(secret, fixture.now()));
  await page.getByRole('button', { name: 'Turn on two-factor' }).click();
  const codeList = page.getByRole('list', { name: 'Backup codes' });
  await codeList.waitFor();
  const backupCodes = (await codeList.getByRole('listitem').allTextContents()).map((code) => code.trim());
  expect(backupCodes).toHaveLength(10);
  expect(new Set(backupCodes).size).toBe(10);
  await screenshot(fixture, page, 'two-factor-backup-codes');
  await page.getByRole('button', { name: 'I have saved the codes' }).click();
  await page.getByText('On', { exact: true }).waitFor();

  // Sign out, then in again with a TOTP code of a later step (a code is accepted once per step).
  step.name = 'Sign out, then in again with a TOTP code of a later step (a code is accepted once per step)';
  await signOut(page);
  nextTotpStep(fixture);
  await signInWithCode(page, email, totpCode(secret, fixture.now()));
  await page.waitForURL('**/keys');

  // A backup code signs in once; the same code a second time is refused.
  step.name = 'A backup code signs in once';
  await signOut(page);
  await signInWithCode(page, email, backupCodes[0] as string);
  await page.waitForURL('**/keys');
  await signOut(page);
  await signInWithCode(page, email, backupCodes[0] as string);
  await page.getByRole('alert').waitFor();
  expect(page.url()).toContain('/sign-in');
  await screenshot(fixture, page, 'sign-in-two-factor');
  await page.getByLabel('Code').fill(backupCodes[1] as string);
  await page.getByRole('button', { name: 'Verify' }).click();
  await page.waitForURL('**/keys');

  // Sessions: this browser is listed with its device and address.
  step.name = 'Sessions';
  await page.goto(`${consoleUrl}/security`);
  const sessionsTable = page.getByRole('table', { name: 'Browsers signed in to this account' });
  await sessionsTable.getByText('This browser').waitFor();
  await expect.poll(() => sessionsTable.getByText('127.0.0.1').count()).toBeGreaterThan(0);
  await screenshot(fixture, page, 'security');

  // A key with a $1 cap, one allowed model, an IP allowlist and limits; its secret is shown once.
  step.name = 'A key with a $1 cap, one allowed model, an IP allowlist and limits';
  await page.goto(`${consoleUrl}/keys`);
  await page.getByRole('button', { name: 'Create key' }).click();
  const form = page.getByRole('dialog', { name: 'Create an API key' });
  await form.getByLabel('Name', { exact: true }).fill('ci journey');
  await form.getByLabel('Environment label').fill('staging');
  await form.getByLabel('Quota cap (USD)').fill('1');
  await form.getByLabel('Requests per minute').fill('60');
  await form.getByLabel('Tokens per minute').fill('100000');
  await form.getByLabel('Concurrent requests').fill('4');
  await form.getByLabel('Only allow the models chosen below').check();
  await form.getByRole('checkbox', { name: CHAT_MODEL }).check();
  await form.getByLabel('IP allowlist').fill('127.0.0.1\n10.0.0.0/8');
  await screenshot(fixture, page, 'keys-create');
  await form.getByRole('button', { name: 'Create key' }).click();
  const secretDialog = page.getByRole('dialog', { name: 'Your new API key' });
  const apiKey = ((await secretDialog.getByTestId('new-key-secret').textContent()) ?? '').trim();
  expect(apiKey.length).toBeGreaterThan(20);
  await screenshot(fixture, page, 'keys-secret');
  await secretDialog.getByRole('button', { name: 'I have copied the key' }).click();
  const row = page.getByRole('row', { name: /ci journey/ });
  await row.getByText('Enabled').waitFor();
  await expect.poll(() => row.textContent()).toContain('$1.00');
  expect(await row.textContent()).toContain(CHAT_MODEL);
  expect(await page.content()).not.toContain(apiKey);

  // The openai SDK calls the gateway with the new key; the allowlist holds.
  step.name = 'The openai SDK calls the gateway with the new key';
  const client = new OpenAI({ apiKey, baseURL: fixture.gateway.baseURL, maxRetries: 0 });
  const answer = await client.chat.completions.create({ model: CHAT_MODEL, messages: [{ role: 'user', content: 'hello from the journey' }], max_tokens: 20 });
  expect(answer.choices[0]?.message.content).toBeTruthy();
  await expect(client.chat.completions.create({ model: OTHER_MODEL, messages: [{ role: 'user', content: 'not allowed' }] })).rejects.toMatchObject({ status: 403 });

  // Edited: a new rate limit shows in the list.
  step.name = 'Edit';
  await page.getByRole('button', { name: 'Edit ci journey' }).click();
  const editForm = page.getByRole('dialog', { name: 'Edit API key' });
  expect(await editForm.getByLabel('Requests per minute').inputValue()).toBe('60');
  await editForm.getByLabel('Requests per minute').fill('120');
  await editForm.getByRole('button', { name: 'Save changes' }).click();
  await editForm.waitFor({ state: 'hidden' });
  await expect.poll(() => page.getByRole('row', { name: /ci journey/ }).textContent()).toContain('120 RPM');

  // Disabled, the key is refused; enabled again, it works.
  step.name = 'Disable and enable';
  await page.getByRole('button', { name: 'Disable ci journey' }).click();
  await page.getByRole('row', { name: /ci journey/ }).getByText('Disabled').waitFor();
  await expect(client.chat.completions.create({ model: CHAT_MODEL, messages: [{ role: 'user', content: 'while disabled' }] })).rejects.toMatchObject({ status: 403 });
  await page.getByRole('button', { name: 'Enable ci journey' }).click();
  await page.getByRole('row', { name: /ci journey/ }).getByText('Enabled').waitFor();
  expect((await client.chat.completions.create({ model: CHAT_MODEL, messages: [{ role: 'user', content: 'enabled again' }], max_tokens: 5 })).choices).toHaveLength(1);
  // Asked twice with the response cache on: the second answer comes from the cache, and the usage log says so.
  const cached = { headers: { 'x-gateway-cache': 'on' } };
  const original = await client.chat.completions.create({ model: CHAT_MODEL, messages: [{ role: 'user', content: 'same question' }], max_tokens: 5 }, cached);
  const repeat = await client.chat.completions.create({ model: CHAT_MODEL, messages: [{ role: 'user', content: 'same question' }], max_tokens: 5 }, cached).withResponse();
  expect(repeat.response.headers.get('x-gateway-cache')).toBe('hit');
  expect(repeat.data.choices[0]?.message.content).toBe(original.choices[0]?.message.content);
  await flushWrites(fixture.gateway);

  // The call is in the usage table and the charts; the balance is at the top.
  step.name = 'The call is in the usage table and the charts';
  await page.goto(`${consoleUrl}/usage`);
  const usageTable = page.getByTestId('usage-table');
  await usageTable.getByRole('cell', { name: new RegExp(CHAT_MODEL) }).first().waitFor();
  expect(await usageTable.textContent()).toContain('ci journey');
  expect(await usageTable.textContent()).toContain('from cache');
  expect(await usageTable.textContent()).toContain('200');
  // Filtered by status, only refused calls are left (the model outside the allowlist among them).
  await page.getByLabel('Status').selectOption('403');
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.waitForURL(/status=403/);
  // The unfiltered table holds a 403 row of OTHER_MODEL too: wait until the filtered rows have replaced it.
  const statusCells = usageTable.locator('tbody tr td:nth-child(4)');
  await expect.poll(async () => (await statusCells.allTextContents()).every((status) => /^403\b/.test(status))).toBe(true);
  await expect.poll(() => usageTable.locator('tbody tr').allTextContents()).toContainEqual(expect.stringContaining(OTHER_MODEL));
  const statuses = await statusCells.allTextContents();
  expect(statuses.length).toBeGreaterThan(0);
  for (const status of statuses) expect(status).toMatch(/^403\b/);
  await page.goto(`${consoleUrl}/usage`);
  await page.getByTestId('usage-charts').locator('.recharts-bar-rectangle').first().waitFor();
  await expect.poll(() => page.getByTestId('usage-charts').textContent()).toContain(CHAT_MODEL);
  await expect.poll(() => page.getByTestId('balance').textContent()).toMatch(/^\$[45]\.\d\d$/);
  await expect.poll(() => page.getByTestId('spend-today').textContent()).toMatch(/^\$0\.0\d*[1-9]\d*$/);
  // Spend per key over the period: the key used above has a row, with the model it called.
  const spendByKey = page.getByTestId('spend-by-key');
  await expect.poll(() => spendByKey.locator('tbody tr').allTextContents()).toContainEqual(expect.stringContaining(CHAT_MODEL));
  await screenshot(fixture, page, 'usage');
  await page.getByRole('heading', { name: 'Spend by key' }).scrollIntoViewIfNeeded();
  await screenshot(fixture, page, 'usage-spend-by-key');
  // The same page with data on a phone in dark mode: wide tables scroll inside their cards, never the page.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.getByRole('heading', { name: 'Spend by key' }).scrollIntoViewIfNeeded();
  expect(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')).toBeLessThanOrEqual(0);
  await screenshot(fixture, page, 'usage-spend-by-key-phone-dark');
  await page.setViewportSize({ width: 1280, height: 860 });
  await page.emulateMedia({ colorScheme: 'light' });

  // The CSV export answers the same rows.
  step.name = 'The CSV export answers the same rows';
  const csv = await page.request.get(`${consoleUrl}${await page.getByRole('link', { name: 'Export CSV' }).getAttribute('href')}`);
  expect(csv.status()).toBe(200);
  expect(csv.headers()['content-type']).toContain('text/csv');
  expect(await csv.text()).toContain(CHAT_MODEL);

  // Playground: a streamed answer with its tokens, cost and latency.
  step.name = 'Playground';
  await page.goto(`${consoleUrl}/playground`);
  await page.getByLabel('Model').selectOption(CHAT_MODEL);
  await page.getByLabel('Message').fill('Say something short.');
  await page.getByRole('button', { name: 'Send' }).click();
  const summary = page.getByTestId('answer-summary');
  await summary.waitFor();
  expect(await summary.textContent()).toMatch(/\d+ in · \d+ out · \$[\d.]+ · \d+/);
  expect((await page.getByTestId('chat-log').locator('.turn-assistant .turn-text').textContent())?.length).toBeGreaterThan(0);
  await screenshot(fixture, page, 'playground');

  // Code samples: the base URL and the three SDKs.
  step.name = 'Code samples';
  await page.goto(`${consoleUrl}/quickstart`);
  await expect.poll(() => page.getByTestId('base-url').textContent()).toBe(fixture.gateway.url);
  for (const language of ['curl', 'Python', 'Node']) await page.getByRole('tab', { name: language }).waitFor();
  await page.getByRole('tab', { name: 'Node' }).click();
  for (const sdk of ["from 'openai'", "from '@anthropic-ai/sdk'", "from '@google/genai'"]) await page.getByText(sdk).waitFor();
  await screenshot(fixture, page, 'quickstart');

  // Revoke: the SDK gets 401 at once; the console session is unaffected.
  step.name = 'Revoke';
  await page.goto(`${consoleUrl}/keys`);
  await expect.poll(() => page.getByRole('row', { name: /ci journey/ }).textContent()).toMatch(/\$0\.0\d*[1-9]\d* of \$1\.00/);
  await screenshot(fixture, page, 'keys');
  await page.getByRole('button', { name: 'Revoke ci journey' }).click();
  await page.getByRole('dialog', { name: 'Revoke API key' }).getByRole('button', { name: 'Revoke key' }).click();
  await page.getByRole('row', { name: /ci journey/ }).getByText('Revoked').waitFor();
  await expect(client.chat.completions.create({ model: CHAT_MODEL, messages: [{ role: 'user', content: 'after revoke' }] })).rejects.toMatchObject({ status: 401 });
  await page.reload();
  await page.getByRole('row', { name: /ci journey/ }).getByText('Revoked').waitFor();
  await screenshot(fixture, page, 'keys-revoked');
}
