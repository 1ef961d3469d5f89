/**
 * Running the business from the operator console in Debian's Chromium, on two gateway instances sharing one
 * database and one Redis: the first owner signs up where the start log says; a channel serving `demo-model` as
 * `upstream-demo-v2` gets a new priority and keeps its mapping (the upstream still receives `upstream-demo-v2`);
 * each channel type's form comes from the upstream registry (Azure's API version, Bedrock's JSON credentials and
 * region); every channel tested at once; a model's price edited and the next call charged at it; an account
 * disabled and its keys answer 403 at once on both instances, enabled again, then deleted; the operator gives the
 * default tier a sign-up credit, and a new user makes a first call with curl without a card, while a second sign-up
 * from the same address is told why it got none and what to do at $0. Every changed page photographed at 1280 and 390 px, light and dark.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ensureChromium } from '../support/chromium.js';
import { expectCleanPage, openPage, screenshot, sidewaysTables, signUpAndVerify, startConsoleFixture, type ConsoleFixture, type WatchedPage } from '../support/console-browser.js';
import { flushWrites, startTestGateway, type TestGateway } from '../support/gateway-harness.js';
import { becomeFirstOwner } from '../support/operator-browser.js';
import { RedisFixture, TEST_REDIS_URL, testKeyPrefix } from '../unit/limits/redis-test-support.js';

const run = promisify(execFile);
const chromiumPresent = ensureChromium();
const MODEL = 'demo-model';
const UPSTREAM_MODEL = 'upstream-demo-v2';
let fixture: ConsoleFixture;
let second: TestGateway;
let redis: RedisFixture | null = null;

beforeAll(async () => {
  if (!chromiumPresent || TEST_REDIS_URL === undefined) return;
  redis = new RedisFixture(TEST_REDIS_URL, testKeyPrefix());
  // One database needs one key for the upstream credentials it stores sealed.
  const shared = { REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: redis.prefix, SECRET_KEY: randomBytes(32).toString('hex') };
  fixture = await startConsoleFixture({ ...shared, SIGNUP_CREDIT_DAYS: '30' });
  // The second instance: the first one's database and Redis, its own listeners.
  second = await startTestGateway({ env: { ...shared, DATABASE_URL: fixture.gateway.databaseUrl, ADMIN_TOKEN: fixture.gateway.adminToken, SIGNUP_CREDIT_DAYS: '30' } });
}, 300_000);

afterAll(async () => {
  await second?.close();
  await fixture?.close();
  await redis?.cleanUp();
});

describe.skipIf(!chromiumPresent || TEST_REDIS_URL === undefined)('the operator runs the business from the console, on two instances', () => {
  it('edits channels and prices, disables accounts, and a new user gets a first answer without a card', async () => {
    const watched: WatchedPage = await openPage(fixture.browser, { width: 1280, height: 860 });
    const step = { name: 'start' };
    try {
      await journey(watched.page, step);
    } catch (error) {
      await screenshot(fixture, watched.page, 'everyday-failure').catch(() => undefined);
      throw new Error(`step "${step.name}" failed at ${watched.page.url()}: ${(error as Error).message}`, { cause: error });
    }
    expectCleanPage(watched);
    await watched.context.close();
  }, 300_000);
});

/** The page at 1280 and 390 px, light and dark (`name-wide-light.png` …), with no sideways scrolling on a phone. */
async function photograph(page: Page, name: string, scrollTo?: string): Promise<void> {
  for (const [width, height, size] of [[1280, 860, 'wide'], [390, 844, 'phone']] as const) {
    for (const scheme of ['light', 'dark'] as const) {
      await page.setViewportSize({ width, height });
      await page.emulateMedia({ colorScheme: scheme });
      if (scrollTo !== undefined) await page.getByRole('heading', { name: scrollTo }).evaluate((heading) => heading.scrollIntoView({ block: 'start' }));
      await page.waitForTimeout(150);
      if (width === 390) {
        expect(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'), `${name} at 390px`).toBeLessThanOrEqual(0);
        // Lists become one card per row on a phone instead of scrolling sideways inside their card.
        expect(await sidewaysTables(page), `${name} at 390px`).toEqual([]);
      }
      await screenshot(fixture, page, `${name}-${size}-${scheme}`);
    }
  }
  await page.setViewportSize({ width: 1280, height: 860 });
  await page.emulateMedia({ colorScheme: 'light' });
}

async function chat(baseURL: string, key: string): Promise<{ status: number; requestId: string | null }> {
  const sdk = new OpenAI({ apiKey: key, baseURL, maxRetries: 0 });
  try {
    const { response } = await sdk.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hello' }] }).withResponse();
    return { status: 200, requestId: response.headers.get('x-request-id') };
  } catch (error) {
    return { status: (error as { status?: number }).status ?? 0, requestId: null };
  }
}

async function journey(page: Page, step: { name: string }): Promise<void> {
  const consoleUrl = fixture.gateway.consoleUrl;
  const admin = fixture.gateway.admin;

  step.name = 'The first owner, where the start log points';
  await becomeFirstOwner(fixture, page);

  step.name = 'A channel serving demo-model as upstream-demo-v2';
  await admin('POST', '/admin/models', { id: MODEL, pricing: { input_per_mtok: 1, output_per_mtok: 2 } });
  const created = await admin<{ id: string }>('POST', '/admin/channels', {
    name: 'demo-channel', type: 'openai', base_url: fixture.upstream.url, api_key: 'sk-upstream-test',
    models: { [MODEL]: UPSTREAM_MODEL }, priority: 1, headers: { 'X-Team': 'team-secret-header-1' }, settings: { idle_timeout_ms: 90_000 },
  });
  expect(created.status).toBe(201);
  const channelId = created.body.id;

  step.name = 'Only the priority changes; the mapping, headers and settings survive';
  await page.goto(`${consoleUrl}/operator/channels`);
  await page.getByRole('button', { name: 'Edit demo-channel' }).click();
  const edit = page.getByRole('dialog', { name: 'Edit channel' });
  expect(await edit.getByLabel('Client model id 1').inputValue()).toBe(MODEL);
  expect(await edit.getByLabel('Upstream model id 1').inputValue()).toBe(UPSTREAM_MODEL);
  expect(await edit.getByLabel('Idle timeout (ms)').inputValue()).toBe('90000');
  await edit.getByLabel('Priority').fill('7');
  await photograph(page, 'everyday-channel-edit');
  await edit.getByRole('button', { name: 'Save channel' }).click();
  await edit.waitFor({ state: 'hidden' });
  const stored = await admin<{ models: Record<string, string>; priority: number; headers: Record<string, string>; settings: Record<string, unknown> }>('GET', `/admin/channels/${channelId}`);
  expect(stored.body).toMatchObject({ models: { [MODEL]: UPSTREAM_MODEL }, priority: 7, settings: { idle_timeout_ms: 90_000 } });
  expect(Object.keys(stored.body.headers)).toEqual(['X-Team']);
  // The audit log keeps the change as sent: the priority alone.
  const audit = await page.request.get(`${consoleUrl}/api/operator/audit?q=${encodeURIComponent(channelId)}`);
  const entries = (await audit.json()) as { data: Array<{ action: string; after: unknown }> };
  expect(entries.data.some((entry) => entry.action === `PATCH /admin/channels/${channelId}`)).toBe(true);

  step.name = "Each type's form comes from the registry";
  await page.getByRole('button', { name: 'Add channel' }).click();
  const add = page.getByRole('dialog', { name: 'Add a channel' });
  await add.getByLabel('Type').selectOption('azure-openai');
  await add.getByLabel('API version').waitFor();
  expect(await add.getByLabel('Base URL').getAttribute('required')).not.toBeNull();
  await add.getByLabel('Type').selectOption('bedrock');
  await add.getByLabel('Region').waitFor();
  await add.getByLabel('Credentials (JSON)').waitFor();
  await add.getByLabel('Name').fill('bedrock-draft');
  await photograph(page, 'everyday-channel-bedrock-form');
  await add.getByRole('button', { name: 'Cancel' }).click();

  step.name = 'Every channel tested at once';
  await page.getByRole('button', { name: 'Test all channels' }).click();
  for (const row of await page.locator('tbody tr').all()) await row.getByTestId('channel-test-result').waitFor({ timeout: 20_000 });
  expect(await page.locator('tr', { hasText: 'demo-channel' }).getByTestId('channel-test-result').textContent()).toContain('OK');
  await photograph(page, 'everyday-channels');

  step.name = 'The upstream still receives its own model name';
  const account = await admin<{ id: string }>('POST', '/admin/accounts', { email: `customer-${randomBytes(4).toString('hex')}@example.com` });
  await admin('POST', `/admin/accounts/${account.body.id}/credits`, { amount_usd: 5 });
  const key = await admin<{ id: string; key: string }>('POST', `/admin/accounts/${account.body.id}/keys`, { name: 'everyday' });
  const before = fixture.upstream.requests.length;
  expect((await chat(fixture.gateway.baseURL, key.body.key)).status).toBe(200);
  const sent = fixture.upstream.requests.slice(before).find((request) => request.path.endsWith('/chat/completions'));
  expect((sent?.body as { model?: string } | undefined)?.model).toBe(UPSTREAM_MODEL);

  step.name = 'A new price, and the next call is charged at it';
  await page.goto(`${consoleUrl}/operator/models`);
  await page.getByRole('button', { name: `Edit ${MODEL}` }).click();
  const modelForm = page.getByRole('dialog', { name: 'Edit model' });
  expect(await modelForm.getByLabel('Input, USD per million tokens', { exact: true }).inputValue()).toBe('1');
  await modelForm.getByLabel('Input, USD per million tokens', { exact: true }).fill('40');
  await modelForm.getByLabel('Output, USD per million tokens', { exact: true }).fill('80');
  await photograph(page, 'everyday-model-edit');
  await modelForm.getByRole('button', { name: 'Save model' }).click();
  await modelForm.waitFor({ state: 'hidden' });
  await page.locator(`tr[data-model-id="${MODEL}"]`).getByText('$40').waitFor();
  // On the other instance: the change reached it before the console's save returned.
  const priced = await chat(second.baseURL, key.body.key);
  expect(priced.status).toBe(200);
  await flushWrites(second);
  const usage = await admin<{ data: Array<{ request_id: string; prompt_tokens: number; completion_tokens: number; cost_usd: number }> }>('GET', `/admin/usage?key_id=${key.body.id}&limit=10`);
  const last = usage.body.data.find((row) => row.request_id === priced.requestId);
  expect(last).toBeDefined();
  expect(last?.cost_usd).toBeCloseTo(((last?.prompt_tokens ?? 0) * 40 + (last?.completion_tokens ?? 0) * 80) / 1e6, 12);
  await photograph(page, 'everyday-models');

  step.name = 'Disabled: its keys answer 403 at once on both instances';
  await page.goto(`${consoleUrl}/operator/accounts`);
  const email = (await admin<{ email: string }>('GET', `/admin/accounts/${account.body.id}`)).body.email;
  await page.getByLabel('Search by email or id').fill(email);
  await page.getByRole('button', { name: email }).click();
  // Both instances have the key cached from the calls above.
  expect((await chat(fixture.gateway.baseURL, key.body.key)).status).toBe(200);
  expect((await chat(second.baseURL, key.body.key)).status).toBe(200);
  await page.getByRole('button', { name: 'Disable account' }).click();
  const confirm = page.getByRole('dialog', { name: 'Disable account' });
  await confirm.getByText('answers 403 at once').waitFor();
  await screenshot(fixture, page, 'everyday-account-disable');
  await confirm.getByRole('button', { name: 'Disable', exact: true }).click();
  await confirm.waitFor({ state: 'hidden' });
  await page.getByTestId('account-status').getByText('disabled').waitFor();
  expect((await chat(fixture.gateway.baseURL, key.body.key)).status).toBe(403);
  expect((await chat(second.baseURL, key.body.key)).status).toBe(403);
  await photograph(page, 'everyday-accounts');
  await page.getByRole('button', { name: 'Enable account' }).click();
  await page.getByRole('dialog', { name: 'Enable account' }).getByRole('button', { name: 'Enable', exact: true }).click();
  await page.getByTestId('account-status').getByText('enabled').waitFor();
  expect((await chat(second.baseURL, key.body.key)).status).toBe(200);

  step.name = 'Deleted, after typing its email';
  await page.getByRole('button', { name: 'Delete account' }).click();
  const removal = page.getByRole('dialog', { name: 'Delete account' });
  const deleteButton = removal.getByRole('button', { name: 'Delete for good' });
  expect(await deleteButton.isDisabled()).toBe(true);
  await removal.getByLabel("Type the account's email to confirm").fill(email);
  await deleteButton.click();
  await removal.waitFor({ state: 'hidden' });
  await page.getByTestId('account-status').getByText('deleted').waitFor();
  expect([401, 403]).toContain((await chat(fixture.gateway.baseURL, key.body.key)).status);
  expect([401, 403]).toContain((await chat(second.baseURL, key.body.key)).status);

  step.name = 'The operator gives new sign-ups of the default tier a $1 credit';
  await page.goto(`${consoleUrl}/operator/offers`);
  await page.getByRole('button', { name: 'Edit tier default' }).click();
  const tierForm = page.getByRole('form', { name: 'Tier default' });
  await tierForm.getByLabel('Sign-up credit (USD)').fill('1');
  await tierForm.getByRole('button', { name: 'Save tier' }).click();
  await page.getByTestId('tiers-table').getByRole('row', { name: /default/ }).getByText('$1.00').waitFor();
  expect((await admin<{ signup_credit_usd: number }>('GET', '/admin/tiers/default')).body.signup_credit_usd).toBe(1);
  await photograph(page, 'everyday-tiers', 'Tiers and sign-up credit');

  step.name = 'A new user: offered credit, verified, a key, a first call with curl';
  const user = await openPage(fixture.browser, { width: 1280, height: 860 });
  const newcomer = `newcomer-${randomBytes(4).toString('hex')}@example.com`;
  await signUpAndVerify(fixture, user.page, newcomer);
  await user.page.goto(`${consoleUrl}/keys`);
  await user.page.getByTestId('funds-notice').getByText('including a $1.00 sign-up credit').waitFor();
  await user.page.getByRole('button', { name: 'Create key' }).click();
  const keyForm = user.page.getByRole('dialog', { name: 'Create an API key' });
  await keyForm.getByLabel('Name').fill('first');
  await keyForm.getByRole('button', { name: 'Create key' }).click();
  const secret = (await user.page.getByTestId('new-key-secret').textContent()) ?? '';
  expect(secret.length).toBeGreaterThan(20);
  const curl = await run('curl', ['-sS', '-w', '\n%{http_code}', `${fixture.gateway.baseURL}/chat/completions`,
    '-H', `Authorization: Bearer ${secret}`, '-H', 'Content-Type: application/json',
    '-d', JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hello' }], max_tokens: 50 })]);
  expect(curl.stdout.trim().split('\n').pop()).toBe('200');
  await user.page.getByRole('button', { name: 'I have copied the key' }).click();
  await photograph(user.page, 'everyday-keys-credit');
  await user.page.goto(`${consoleUrl}/alerts`);
  await user.page.getByRole('heading', { name: 'Alerts', level: 1 }).waitFor();
  await photograph(user.page, 'everyday-alerts');
  await user.context.close();

  step.name = 'A second sign-up from the same address: no credit, and what to do at $0';
  const other = await openPage(fixture.browser, { width: 1280, height: 860 });
  await signUpAndVerify(fixture, other.page, `second-${randomBytes(4).toString('hex')}@example.com`);
  await other.page.goto(`${consoleUrl}/keys`);
  const notice = other.page.getByTestId('funds-notice');
  await notice.getByText('calls with your keys answer 402').waitFor();
  await notice.getByText('an account from your network already had one').waitFor();
  expect(await notice.getByRole('link', { name: 'Top up or redeem a code' }).getAttribute('href')).toBe('/billing');
  await photograph(other.page, 'everyday-keys-empty');
  expectCleanPage(other);
  await other.context.close();

  step.name = 'The operator sees who got the credit and why the second did not';
  await page.goto(`${consoleUrl}/operator/accounts`);
  await page.getByLabel('Search by email or id').fill(newcomer);
  await page.getByRole('button', { name: newcomer }).click();
  await page.getByTestId('account-sign-up-credit').getByText('$1.00 given').waitFor();
  await screenshot(fixture, page, 'everyday-account-sign-up-credit');
}
