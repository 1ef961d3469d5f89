/**
 * Guardrails in Debian's Chromium against the real gateway: the operator creates a policy on the operator console's
 * Guardrails page (kind, mode, direction, settings, the accounts-may-use switch), edits it, sees a bound policy refused
 * deletion with where it is bound; an account owner attaches the offered policy to a key in the key form, and the key
 * list says so. Screenshots at 1280 px and 390 px, light and dark, without horizontal overflow.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureChromium } from '../support/chromium.js';
import { expectCleanPage, openPage, screenshot, shotsAtBothWidths, sidewaysTables, startConsoleFixture, type ConsoleFixture } from '../support/console-browser.js';
import { becomeFirstOwner } from '../support/operator-browser.js';

const chromiumPresent = ensureChromium();
let fixture: ConsoleFixture;

beforeAll(async () => {
  if (!chromiumPresent) return;
  fixture = await startConsoleFixture();
  // One policy made in the admin API, offered to nobody: the page lists it too.
  const made = await fixture.gateway.admin('POST', '/admin/guardrails', { name: 'cards-masked', kind: 'pii', mode: 'mask', applies_to: 'both', settings: { detectors: ['card'] } });
  expect(made.status).toBe(201);
}, 300_000);

afterAll(async () => {
  await fixture?.close();
});

describe.skipIf(!chromiumPresent)('guardrail pages in Chromium', () => {
  it('the operator manages policies and an account attaches an offered one to a key', async () => {
    const watched = await openPage(fixture.browser);
    const { page } = watched;
    const consoleUrl = fixture.gateway.consoleUrl;
    await becomeFirstOwner(fixture, page);

    await page.goto(`${consoleUrl}/operator/guardrails`);
    await page.getByRole('heading', { name: 'Guardrails' }).waitFor();
    await page.locator('[data-guardrail="cards-masked"]').waitFor();

    await page.getByRole('button', { name: 'New policy' }).click();
    const dialog = page.getByRole('dialog', { name: 'New guardrail policy' });
    await dialog.getByLabel('Name').fill('no-secrets-words');
    await dialog.getByLabel('Kind').selectOption('deny_list');
    await dialog.getByLabel('Mode').selectOption('block');
    await dialog.getByLabel('Applies to').selectOption('input');
    await dialog.getByLabel('Settings (JSON)').fill('{ "words": ["zanzibar"] ');
    await dialog.getByRole('button', { name: 'Create policy' }).click();
    await dialog.getByText('Settings must be a JSON object.').waitFor();
    await dialog.getByLabel('Settings (JSON)').fill('{ "words": ["zanzibar", "project heron"], "max_prompt_chars": 20000 }');
    await dialog.getByLabel(/^Accounts may use it/).check();
    await screenshot(fixture, page, 'operator-guardrails-new');
    await dialog.getByRole('button', { name: 'Create policy' }).click();
    await page.getByText('Policy no-secrets-words created.').waitFor();
    const created = page.locator('[data-guardrail="no-secrets-words"]');
    await created.getByText('may use').waitFor();
    const listed = await fixture.gateway.admin<{ data: Array<{ name: string; kind: string; mode: string; accounts_may_use: boolean; settings: Record<string, unknown> }> }>('GET', '/admin/guardrails');
    expect(listed.body.data.find((policy) => policy.name === 'no-secrets-words')).toMatchObject({ kind: 'deny_list', mode: 'block', accounts_may_use: true, settings: { words: ['zanzibar', 'project heron'], max_prompt_chars: 20000 } });

    // A webhook answers a verdict: the form offers no mask mode for it.
    await created.getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit guardrail policy' });
    await edit.getByLabel('Kind').selectOption('webhook');
    expect(await edit.getByLabel('Mode').locator('option').allTextContents()).toEqual(['Block', 'Log only']);
    await edit.getByLabel('Kind').selectOption('deny_list');
    await edit.getByLabel('Applies to').selectOption('both');
    await edit.getByRole('button', { name: 'Save policy' }).click();
    await page.getByText('Policy no-secrets-words saved.').waitFor();
    await created.getByText('both').waitFor();

    // The account side: the offered policy in the key form; the operator-only one is not offered.
    await page.goto(`${consoleUrl}/keys`);
    await page.getByRole('button', { name: 'Create key' }).click();
    const keyDialog = page.getByRole('dialog', { name: 'Create an API key' });
    await keyDialog.getByLabel('Name').fill('guarded key');
    const policies = keyDialog.getByRole('group', { name: 'Guardrail policies' });
    expect(await policies.getByText('cards-masked').count()).toBe(0);
    await policies.getByRole('checkbox', { name: /no-secrets-words/ }).check();
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
      await policies.scrollIntoViewIfNeeded();
      expect(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')).toBeLessThanOrEqual(0);
      await screenshot(fixture, page, `key-form-guardrails-${width}`);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    await keyDialog.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('button', { name: 'I have copied the key' }).click();
    await page.getByText('Guardrails: no-secrets-words').waitFor();

    // Bound now: deleting it is refused with where it is bound, shown on the page.
    await page.goto(`${consoleUrl}/operator/guardrails`);
    await created.getByText(/^key$/).waitFor();
    expect(await sidewaysTables(page)).toEqual([]);
    await shotsAtBothWidths(fixture, page, 'operator-guardrails');
    await created.getByRole('button', { name: 'Delete' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete guardrail policy' });
    await confirm.getByRole('button', { name: 'Delete policy' }).click();
    await confirm.getByText(/is bound to key/).waitFor();
    await confirm.getByRole('button', { name: 'Cancel' }).click();

    // The unbound one goes.
    await page.locator('[data-guardrail="cards-masked"]').getByRole('button', { name: 'Delete' }).click();
    await confirm.getByRole('button', { name: 'Delete policy' }).click();
    await page.getByText('Policy cards-masked deleted.').waitFor();
    expect(await page.locator('[data-guardrail="cards-masked"]').count()).toBe(0);
    expectCleanPage(watched);
    await watched.context.close();
  }, 180_000);
});
