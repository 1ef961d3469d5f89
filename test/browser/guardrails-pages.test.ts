/**
 * Guardrails in Debian's Chromium against the real gateway: the operator creates a policy on the operator console's
 * Guardrails page with the settings form of its kind (words and regular expressions, with the browser's and the
 * server's errors shown at the field; a webhook's address, timeout, failure choice and sealed headers; a moderation
 * policy billed to the operator; personal-data detectors), edits it, sees a bound policy refused deletion with where
 * it is bound; an account owner attaches the offered policy to a key in the key form and to a project in the project
 * form, and the lists say so. Screenshots at 1280 px and 390 px, light and dark, without horizontal overflow.
 */
import type { Page } from 'playwright-core';
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

/** The signed-in user's account id, as the console's session says. */
async function accountIdOf(page: Page): Promise<string> {
  const session = await page.evaluate(async () => (await fetch('/api/session')).json()) as { account?: { id?: string } };
  return session.account?.id ?? '';
}

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
    await dialog.getByLabel('Name', { exact: true }).fill('no-secrets-words');
    await dialog.getByLabel('Kind').selectOption('deny_list');
    await dialog.getByLabel('Mode', { exact: true }).selectOption('block');
    await dialog.getByLabel('Applies to').selectOption('input');
    await dialog.getByLabel('Words').fill('zanzibar\nproject heron\n');
    // A pattern that does not compile is caught in the browser, at its line.
    await dialog.getByLabel('Regular expressions').fill('order-\\d{6}\n(unclosed');
    await dialog.getByRole('button', { name: 'Create policy' }).click();
    await dialog.locator('.field-error', { hasText: 'Line 2 is not a valid regular expression' }).waitFor();
    // One that compiles but could run for ever is refused by the server, shown at the field too.
    await dialog.getByLabel('Regular expressions').fill('order-\\d{6}\n(a+)+b');
    await dialog.getByRole('button', { name: 'Create policy' }).click();
    await dialog.locator('.field-error', { hasText: /^Line 2: pattern/ }).waitFor();
    expect(await dialog.getByLabel('Regular expressions').getAttribute('aria-invalid')).toBe('true');
    await screenshot(fixture, page, 'operator-guardrails-pattern-error');
    await dialog.getByLabel('Regular expressions').fill('order-\\d{6}');
    await dialog.getByLabel('Longest prompt (characters)').fill('20000');
    await dialog.getByLabel(/^Accounts may use it/).check();
    await screenshot(fixture, page, 'operator-guardrails-new');
    await dialog.getByRole('button', { name: 'Create policy' }).click();
    await page.getByText('Policy no-secrets-words created.').waitFor();
    const created = page.locator('[data-guardrail="no-secrets-words"]');
    await created.getByText('may use').waitFor();
    const listed = await fixture.gateway.admin<{ data: Array<{ name: string; kind: string; mode: string; accounts_may_use: boolean; settings: Record<string, unknown> }> }>('GET', '/admin/guardrails');
    expect(listed.body.data.find((policy) => policy.name === 'no-secrets-words')).toMatchObject({
      kind: 'deny_list', mode: 'block', accounts_may_use: true, settings: { words: ['zanzibar', 'project heron'], patterns: ['order-\\d{6}'], max_prompt_chars: 20000 },
    });

    // A webhook: address, timeout, fail open, and a header whose value is sealed (shown by name only afterwards).
    await page.getByRole('button', { name: 'New policy' }).click();
    await dialog.getByLabel('Name', { exact: true }).fill('external-check');
    await dialog.getByLabel('Kind').selectOption('webhook');
    await dialog.getByRole('button', { name: 'Create policy' }).click();
    await dialog.locator('.field-error', { hasText: 'Enter the guardrail service\'s address' }).waitFor();
    await dialog.getByLabel('Guardrail URL').fill('https://user:pw@guardrail.example.com/check');
    await dialog.getByLabel('Timeout (ms)').fill('1500');
    await dialog.getByLabel(/When the guardrail fails/).selectOption('open');
    await dialog.getByRole('button', { name: 'Add header' }).click();
    await dialog.getByLabel('Header 1 name').fill('X-Api-Key');
    await dialog.getByLabel('Header 1 value').fill('sk-guardrail-secret');
    await dialog.getByRole('button', { name: 'Create policy' }).click();
    // The server refuses credentials in the address, at the URL field.
    await dialog.locator('.field-error', { hasText: 'no user name, password or fragment' }).waitFor();
    await dialog.getByLabel('Guardrail URL').fill('https://guardrail.example.com/check');
    await screenshot(fixture, page, 'operator-guardrails-webhook');
    await dialog.getByRole('button', { name: 'Create policy' }).click();
    await page.getByText('Policy external-check created.').waitFor();
    const webhook = (await fixture.gateway.admin<{ data: Array<{ id: string; name: string; settings: Record<string, unknown>; header_names?: string[] }> }>('GET', '/admin/guardrails')).body.data.find((policy) => policy.name === 'external-check');
    expect(webhook).toMatchObject({ settings: { url: 'https://guardrail.example.com/check', timeout_ms: 1500, fail_open: true }, header_names: ['X-Api-Key'] });
    // Edited without touching the headers: they are kept; then removed.
    await page.locator('[data-guardrail="external-check"]').getByRole('button', { name: 'Edit' }).click();
    const editWebhook = page.getByRole('dialog', { name: 'Edit guardrail policy' });
    expect(await editWebhook.getByLabel('Headers it sends').inputValue()).toBe('keep');
    await editWebhook.getByText('X-Api-Key').waitFor();
    expect(await editWebhook.getByLabel('Guardrail URL').inputValue()).toBe('https://guardrail.example.com/check');
    await editWebhook.getByLabel('Timeout (ms)').fill('2500');
    await editWebhook.getByRole('button', { name: 'Save policy' }).click();
    await page.getByText('Policy external-check saved.').waitFor();
    const kept = (await fixture.gateway.admin<{ settings: Record<string, unknown>; header_names?: string[] }>('GET', `/admin/guardrails/${webhook?.id}`)).body;
    expect(kept).toMatchObject({ settings: { timeout_ms: 2500 }, header_names: ['X-Api-Key'] });
    await page.locator('[data-guardrail="external-check"]').getByRole('button', { name: 'Edit' }).click();
    await editWebhook.getByLabel('Headers it sends').selectOption('remove');
    await editWebhook.getByRole('button', { name: 'Save policy' }).click();
    await page.getByText('Policy external-check saved.').waitFor();
    expect((await fixture.gateway.admin<{ header_names?: string[] }>('GET', `/admin/guardrails/${webhook?.id}`)).body.header_names).toEqual([]);

    // Moderation billed to the operator needs the operator's key; personal data with some detectors, reversible.
    await page.getByRole('button', { name: 'New policy' }).click();
    await dialog.getByLabel('Name', { exact: true }).fill('moderated');
    await dialog.getByLabel('Kind').selectOption('moderation');
    expect(await dialog.getByLabel('Moderation model').inputValue()).toBe('omni-moderation-latest');
    await dialog.getByLabel('Categories').fill('violence, self-harm/intent');
    await dialog.getByLabel('Score threshold').fill('1.5');
    await dialog.getByLabel('Billed to').selectOption('operator');
    await dialog.getByRole('button', { name: 'Create policy' }).click();
    await dialog.locator('.field-error', { hasText: 'Enter a score from 0 to 1' }).waitFor();
    await dialog.locator('.field-error', { hasText: 'Name the key (its id)' }).waitFor();
    await dialog.getByLabel('Score threshold').fill('0.4');
    await dialog.getByLabel('Operator key id').fill('key_operator_moderation');
    await screenshot(fixture, page, 'operator-guardrails-moderation');
    await dialog.getByRole('button', { name: 'Create policy' }).click();
    await page.getByText('Policy moderated created.').waitFor();
    await page.getByRole('button', { name: 'New policy' }).click();
    await dialog.getByLabel('Name', { exact: true }).fill('some-pii');
    for (const detector of ['Phone numbers', 'National ids', 'IP addresses', 'Secrets and API keys', 'Email addresses']) await dialog.getByRole('group', { name: 'Detectors' }).getByLabel(detector).uncheck();
    await dialog.getByLabel(/^Reversible masking/).check();
    await dialog.getByRole('button', { name: 'Create policy' }).click();
    await page.getByText('Policy some-pii created.').waitFor();
    const made = (await fixture.gateway.admin<{ data: Array<{ name: string; settings: Record<string, unknown> }> }>('GET', '/admin/guardrails')).body.data;
    expect(made.find((policy) => policy.name === 'moderated')?.settings).toEqual({ model: 'omni-moderation-latest', categories: ['violence', 'self-harm/intent'], threshold: 0.4, billed_to: 'operator', operator_key_id: 'key_operator_moderation', fail_open: false });
    expect(made.find((policy) => policy.name === 'some-pii')?.settings).toEqual({ detectors: ['card', 'iban'], reversible: true });

    // A webhook answers a verdict: the form offers no mask mode for it.
    await created.getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit guardrail policy' });
    await edit.getByLabel('Kind').selectOption('webhook');
    expect(await edit.getByLabel('Mode', { exact: true }).locator('option').allTextContents()).toEqual(['Block', 'Log only']);
    await edit.getByLabel('Kind').selectOption('deny_list');
    await edit.getByLabel('Applies to').selectOption('both');
    await edit.getByRole('button', { name: 'Save policy' }).click();
    await page.getByText('Policy no-secrets-words saved.').waitFor();
    await created.getByText('both').waitFor();

    // The account side: the offered policy in the key form; the operator-only one is not offered.
    await page.goto(`${consoleUrl}/keys`);
    await page.getByRole('button', { name: 'Create key' }).click();
    const keyDialog = page.getByRole('dialog', { name: 'Create an API key' });
    await keyDialog.getByLabel('Name', { exact: true }).fill('guarded key');
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

    // A project with the offered policy: its form offers it, the list and the project's page say so.
    await page.goto(`${consoleUrl}/projects`);
    await page.getByRole('button', { name: 'New project' }).click();
    const projectDialog = page.getByRole('dialog', { name: 'New project' });
    await projectDialog.getByLabel('Name', { exact: true }).fill('Guarded team');
    const projectPolicies = projectDialog.getByRole('group', { name: 'Guardrail policies' });
    expect(await projectPolicies.getByText('cards-masked').count()).toBe(0);
    await projectPolicies.getByRole('checkbox', { name: /no-secrets-words/ }).check();
    await projectPolicies.scrollIntoViewIfNeeded();
    await shotsAtBothWidths(fixture, page, 'project-form-guardrails');
    await projectDialog.getByRole('button', { name: 'Create project' }).click();
    await page.getByText('Guardrails: no-secrets-words').waitFor();
    expect(await sidewaysTables(page)).toEqual([]);
    await shotsAtBothWidths(fixture, page, 'projects-guardrails');
    const projects = await fixture.gateway.admin<{ data: Array<{ id: string; name: string; guardrails: string[] }> }>('GET', `/admin/accounts/${await accountIdOf(page)}/projects`);
    const project = projects.body.data.find((row) => row.name === 'Guarded team');
    expect(project?.guardrails).toEqual(['no-secrets-words']);
    await page.getByRole('link', { name: 'Guarded team' }).click();
    await page.getByTestId('project-budget').getByText('no-secrets-words').waitFor();
    // Unticked on the project's page: the binding goes.
    await page.getByRole('group', { name: 'Guardrail policies' }).getByRole('checkbox', { name: /no-secrets-words/ }).uncheck();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Saved. Every instance applies it to the next request.').waitFor();
    await expect.poll(async () => (await fixture.gateway.admin<{ guardrails: string[] }>('GET', `/admin/accounts/${await accountIdOf(page)}/projects/${project?.id}`)).body.guardrails).toEqual([]);
    await page.getByRole('group', { name: 'Guardrail policies' }).getByRole('checkbox', { name: /no-secrets-words/ }).check();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByTestId('project-budget').getByText('no-secrets-words').waitFor();
    await shotsAtBothWidths(fixture, page, 'project-detail-guardrails');

    // Bound now: deleting it is refused with where it is bound, shown on the page.
    await page.goto(`${consoleUrl}/operator/guardrails`);
    await created.locator('[data-bound-scope="key"]').getByText(/^1 key:$/).waitFor();
    await created.locator('[data-bound-scope="project"]').getByText(/^Guarded team · /).waitFor();
    expect(await sidewaysTables(page)).toEqual([]);
    await shotsAtBothWidths(fixture, page, 'operator-guardrails');
    await created.getByRole('button', { name: 'Delete' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete guardrail policy' });
    await confirm.getByRole('button', { name: 'Delete policy' }).click();
    await confirm.getByText(/is bound to (key|project)/).waitFor();
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
