/**
 * The operator binds guardrail policies to a model and to an account from the console, in Debian's Chromium against
 * the real gateway: the model form offers every policy (offered to accounts or not), the account's page too; each
 * save goes through the admin bridge, the admin API reads the bindings back, a prompt with a denied word is then
 * refused for the model's callers and the account's keys with the spec's error object, and unbinding lets it through.
 * Screenshots at 1280 px light and 390 px dark, without horizontal overflow.
 */
import OpenAI from 'openai';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureChromium } from '../support/chromium.js';
import { CHAT_MODEL, OTHER_MODEL, expectCleanPage, openPage, screenshot, startConsoleFixture, type ConsoleFixture } from '../support/console-browser.js';
import { becomeFirstOwner } from '../support/operator-browser.js';

const chromiumPresent = ensureChromium();
let fixture: ConsoleFixture;

beforeAll(async () => {
  if (!chromiumPresent) return;
  fixture = await startConsoleFixture();
  // Two operator-only policies (not offered to accounts): the operator may still bind them anywhere.
  for (const [name, word] of [['model-words', 'zanzibar'], ['account-words', 'heron']] as const) {
    const made = await fixture.gateway.admin('POST', '/admin/guardrails', { name, kind: 'deny_list', mode: 'block', applies_to: 'input', settings: { words: [word] } });
    expect(made.status).toBe(201);
  }
}, 300_000);

afterAll(async () => {
  await fixture?.close();
});

/** One chat call with `key` through the OpenAI SDK; the status and the error object when refused. */
async function chat(key: string, model: string, text: string): Promise<{ status: number; error?: { type?: string; code?: string | null; message?: string } }> {
  const sdk = new OpenAI({ apiKey: key, baseURL: fixture.gateway.baseURL, maxRetries: 0 });
  try {
    await sdk.chat.completions.create({ model, messages: [{ role: 'user', content: text }] });
    return { status: 200 };
  } catch (error) {
    const failed = error as { status?: number; error?: { type?: string; code?: string | null; message?: string } };
    return { status: failed.status ?? 0, ...(failed.error === undefined ? {} : { error: failed.error }) };
  }
}

/** The page at 1280 px light and 390 px dark, each without sideways scrolling. */
async function photograph(page: Page, name: string, shown: Locator): Promise<void> {
  for (const [width, scheme] of [[1280, 'light'], [390, 'dark']] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
    await page.waitForTimeout(100);
    await shown.scrollIntoViewIfNeeded();
    expect(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'), `${name} ${width}`).toBeLessThanOrEqual(0);
    await screenshot(fixture, page, `${name}-${width}-${scheme}`);
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1280, height: 900 });
}

describe.skipIf(!chromiumPresent)('binding guardrails to models and accounts in Chromium', () => {
  it('the operator binds a policy to a model and another to an account, and the gateway applies both', async () => {
    const watched = await openPage(fixture.browser);
    const { page } = watched;
    const consoleUrl = fixture.gateway.consoleUrl;
    await becomeFirstOwner(fixture, page);
    const account = await fixture.gateway.admin<{ id: string; email: string }>('POST', '/admin/accounts', { email: 'guarded-customer@example.com' });
    await fixture.gateway.admin('POST', `/admin/accounts/${account.body.id}/credits`, { amount_usd: 5 });
    const key = (await fixture.gateway.admin<{ key: string }>('POST', `/admin/accounts/${account.body.id}/keys`, { name: 'guarded' })).body.key;
    expect((await chat(key, CHAT_MODEL, 'a trip to zanzibar')).status).toBe(200);

    // The model form: every policy is offered; ticking one binds it to the model for every account.
    await page.goto(`${consoleUrl}/operator/models`);
    await page.getByRole('button', { name: `Edit ${CHAT_MODEL}` }).click();
    const modelForm = page.getByRole('dialog', { name: 'Edit model' });
    const modelPolicies = modelForm.getByRole('group', { name: 'Guardrail policies' });
    await modelPolicies.getByRole('checkbox', { name: /model-words/ }).check();
    expect(await modelPolicies.getByRole('checkbox', { name: /account-words/ }).isChecked()).toBe(false);
    await photograph(page, 'operator-model-guardrails', modelPolicies);
    await modelForm.getByRole('button', { name: 'Save model' }).click();
    await modelForm.waitFor({ state: 'hidden' });
    expect((await fixture.gateway.admin<{ guardrails: string[] }>('GET', `/admin/models/${CHAT_MODEL}`)).body.guardrails).toEqual(['model-words']);
    const refused = await chat(key, CHAT_MODEL, 'a trip to zanzibar');
    expect(refused.status).toBe(400);
    expect(refused.error?.type).toBeDefined();
    expect(refused.error?.message).toMatch(/model-words|guardrail/i);
    // Another model is not bound: the same prompt passes there.
    expect((await chat(key, OTHER_MODEL, 'a trip to zanzibar')).status).toBe(200);
    // Reopened, the form shows it bound; a change elsewhere in the form leaves the binding as it is.
    await page.getByRole('button', { name: `Edit ${CHAT_MODEL}` }).click();
    expect(await modelPolicies.getByRole('checkbox', { name: /model-words/ }).isChecked()).toBe(true);
    await modelForm.getByLabel('Requests per minute').fill('1000');
    await modelForm.getByRole('button', { name: 'Save model' }).click();
    await modelForm.waitFor({ state: 'hidden' });
    expect((await fixture.gateway.admin<{ guardrails: string[] }>('GET', `/admin/models/${CHAT_MODEL}`)).body.guardrails).toEqual(['model-words']);

    // The account's page: bound to this account only, whatever the model.
    await page.goto(`${consoleUrl}/operator/accounts`);
    await page.getByLabel('Search by email or id').fill(account.body.email);
    await page.getByRole('button', { name: account.body.email }).click();
    const section = page.getByTestId('account-guardrails');
    const accountPolicies = section.getByRole('group', { name: 'Guardrail policies' });
    expect(await section.getByRole('button', { name: 'Save guardrails' }).isDisabled()).toBe(true);
    await accountPolicies.getByRole('checkbox', { name: /account-words/ }).check();
    await section.getByRole('button', { name: 'Save guardrails' }).click();
    await section.getByText('Guardrails saved.').waitFor();
    expect((await fixture.gateway.admin<{ guardrails: string[] }>('GET', `/admin/accounts/${account.body.id}`)).body.guardrails).toEqual(['account-words']);
    await photograph(page, 'operator-account-guardrails', section);
    expect((await chat(key, OTHER_MODEL, 'the grey heron')).status).toBe(400);
    // Another account's key is untouched by it.
    const other = await fixture.gateway.admin<{ id: string }>('POST', '/admin/accounts', { email: 'other-customer@example.com' });
    await fixture.gateway.admin('POST', `/admin/accounts/${other.body.id}/credits`, { amount_usd: 5 });
    const otherKey = (await fixture.gateway.admin<{ key: string }>('POST', `/admin/accounts/${other.body.id}/keys`, { name: 'plain' })).body.key;
    expect((await chat(otherKey, OTHER_MODEL, 'the grey heron')).status).toBe(200);

    // Unbound from the account and the model: the prompts pass again.
    await accountPolicies.getByRole('checkbox', { name: /account-words/ }).uncheck();
    await section.getByRole('button', { name: 'Save guardrails' }).click();
    await section.getByText('Guardrails saved.').waitFor();
    expect((await fixture.gateway.admin<{ guardrails: string[] }>('GET', `/admin/accounts/${account.body.id}`)).body.guardrails).toEqual([]);
    await expect.poll(async () => (await chat(key, OTHER_MODEL, 'the grey heron')).status).toBe(200);
    await page.goto(`${consoleUrl}/operator/models`);
    await page.getByRole('button', { name: `Edit ${CHAT_MODEL}` }).click();
    await modelPolicies.getByRole('checkbox', { name: /model-words/ }).uncheck();
    await modelForm.getByRole('button', { name: 'Save model' }).click();
    await modelForm.waitFor({ state: 'hidden' });
    await expect.poll(async () => (await chat(key, CHAT_MODEL, 'a trip to zanzibar')).status).toBe(200);

    // The Guardrails page says where each is bound: every model, account, project and key, by the names an operator
    // knows them by (a project and a key with their account's email).
    await fixture.gateway.admin('PATCH', `/admin/models/${CHAT_MODEL}`, { guardrails: ['model-words'] });
    expect((await fixture.gateway.admin('PATCH', `/admin/accounts/${other.body.id}`, { guardrails: ['model-words'] })).status).toBe(200);
    const project = await fixture.gateway.admin<{ id: string }>('POST', `/admin/accounts/${account.body.id}/projects`, { name: 'support-bots', guardrails: ['model-words'] });
    expect(project.status).toBe(201);
    expect((await fixture.gateway.admin('POST', `/admin/accounts/${other.body.id}/keys`, { name: 'nightly-batch', guardrails: ['model-words'] })).status).toBe(201);
    const listed = await fixture.gateway.admin<{ data: Array<{ name: string; bound_to: Array<{ scope: string; id: string; name: string | null; account_email?: string | null }> }> }>('GET', '/admin/guardrails');
    const bound = listed.body.data.find((policy) => policy.name === 'model-words')?.bound_to ?? [];
    expect(bound.map((binding) => [binding.scope, binding.name, binding.account_email ?? null]).sort()).toEqual([
      ['account', 'other-customer@example.com', null],
      ['key', 'nightly-batch', 'other-customer@example.com'],
      ['model', CHAT_MODEL, null],
      ['project', 'support-bots', 'guarded-customer@example.com'],
    ]);
    await page.goto(`${consoleUrl}/operator/guardrails`);
    const row = page.locator('[data-guardrail="model-words"]');
    await row.getByText(CHAT_MODEL).waitFor();
    expect((await row.locator('[data-bound-scope="model"]').textContent())?.replace(/\s+/g, ' ')).toContain(`1 model: ${CHAT_MODEL}`);
    expect((await row.locator('[data-bound-scope="account"]').textContent())?.replace(/\s+/g, ' ')).toContain('1 account: other-customer@example.com');
    expect((await row.locator('[data-bound-scope="project"]').textContent())?.replace(/\s+/g, ' ')).toContain('1 project: support-bots · guarded-customer@example.com');
    expect((await row.locator('[data-bound-scope="key"]').textContent())?.replace(/\s+/g, ' ')).toContain('1 key: nightly-batch · other-customer@example.com');
    await photograph(page, 'operator-guardrails-bound-everywhere', row);
    expectCleanPage(watched);
    await watched.context.close();
  }, 180_000);
});
