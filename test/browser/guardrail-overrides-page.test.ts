/**
 * Account overrides of operator guardrail policies in Debian's Chromium against the real gateway: an account owner
 * opens the Guardrails page, turns a policy the operator allows off for the whole account, relaxes another to log
 * for one key, and sees a policy the operator keeps as fixed; the admin API shows the overrides; a viewer reads the
 * page without controls; the operator's Guardrails page sets the allowance and lists who overrides. Screenshots at
 * 1280 px and 390 px, light and dark, without horizontal overflow.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureChromium } from '../support/chromium.js';
import { expectCleanPage, openPage, shotsAtBothWidths, sidewaysTables, signUpAndVerify, startConsoleFixture, type ConsoleFixture } from '../support/console-browser.js';
import { becomeFirstOwner } from '../support/operator-browser.js';

const chromiumPresent = ensureChromium();
let fixture: ConsoleFixture;
const ids: Record<string, string> = {};

beforeAll(async () => {
  if (!chromiumPresent) return;
  fixture = await startConsoleFixture();
  for (const policy of [
    { name: 'mask-cards', kind: 'pii', mode: 'mask', applies_to: 'input', settings: { detectors: ['card'] }, accounts_may_override: 'disable' },
    { name: 'block-words', kind: 'deny_list', mode: 'block', applies_to: 'both', settings: { words: ['zanzibar'] }, accounts_may_override: 'relax' },
    { name: 'operator-fixed', kind: 'deny_list', mode: 'block', applies_to: 'input', settings: { words: ['heron'] } },
  ]) {
    const made = await fixture.gateway.admin<{ id: string }>('POST', '/admin/guardrails', policy);
    expect(made.status).toBe(201);
    ids[policy.name] = made.body.id;
  }
}, 300_000);

afterAll(async () => {
  await fixture?.close();
});

describe.skipIf(!chromiumPresent)('the account Guardrails page in Chromium', () => {
  it('an owner turns off and relaxes policies the operator allows; the operator sees who did', async () => {
    const watched = await openPage(fixture.browser);
    const { page } = watched;
    const consoleUrl = fixture.gateway.consoleUrl;
    const email = `guard-${randomBytes(4).toString('hex')}@example.com`;
    const accountId = await signUpAndVerify(fixture, page, email);
    expect((await fixture.gateway.admin('PATCH', `/admin/accounts/${accountId}`, { guardrails: ['mask-cards', 'block-words', 'operator-fixed'] })).status).toBe(200);
    const key = await page.evaluate(async () => {
      const session = await (await fetch('/api/session')).json() as { csrf_token: string };
      const made = await fetch('/api/keys', { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': session.csrf_token }, body: JSON.stringify({ name: 'support bot' }) });
      return (await made.json()) as { key: { id: string } };
    });

    await page.goto(`${consoleUrl}/guardrails`);
    await page.getByRole('heading', { name: 'Guardrails' }).waitFor();
    const cards = page.locator('[data-guardrail="mask-cards"]');
    await cards.waitFor();
    await page.locator('[data-guardrail="operator-fixed"]').getByText('Fixed by the operator').waitFor();

    // Off for the whole account.
    await cards.getByLabel('For the whole account: mask-cards').selectOption('off');
    await expect.poll(async () => (await fixture.gateway.admin<{ overrides: Array<{ account_id: string; scope: string; mode: string }> }>('GET', `/admin/guardrails/${ids['mask-cards']}`)).body.overrides).toEqual([expect.objectContaining({ account_id: accountId, scope: 'account', mode: 'off' })]);

    // Log only for one key.
    const words = page.locator('[data-guardrail="block-words"]');
    await words.getByRole('button', { name: 'For a project or key… block-words' }).click();
    const dialog = page.getByRole('dialog', { name: 'block-words for a project or key' });
    await dialog.getByLabel('Project or key', { exact: true }).selectOption(`key:${key.key.id}`);
    await dialog.getByLabel('Mode', { exact: true }).selectOption('log');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await words.getByText('support bot').waitFor();
    const overrides = await fixture.gateway.admin<{ overrides: Array<{ scope: string; id: string; mode: string; applied: boolean }> }>('GET', `/admin/guardrails/${ids['block-words']}`);
    expect(overrides.body.overrides).toEqual([expect.objectContaining({ scope: 'key', id: key.key.id, mode: 'log', applied: true })]);
    expect(await sidewaysTables(page)).toEqual([]);
    await shotsAtBothWidths(fixture, page, 'account-guardrails');

    // The operator withdraws the allowance: the page says the override is not applied.
    expect((await fixture.gateway.admin('PATCH', `/admin/guardrails/${ids['mask-cards']}`, { accounts_may_override: 'none' })).status).toBe(200);
    await page.reload();
    await cards.getByText('Not applied: the operator no longer allows it').waitFor();
    expect((await fixture.gateway.admin('PATCH', `/admin/guardrails/${ids['mask-cards']}`, { accounts_may_override: 'disable' })).status).toBe(200);
    expectCleanPage(watched);
    await watched.context.close();

    // The operator's page: the allowance in the form and who overrides.
    const operator = await openPage(fixture.browser);
    await becomeFirstOwner(fixture, operator.page);
    await operator.page.goto(`${consoleUrl}/operator/guardrails`);
    const row = operator.page.locator('[data-guardrail="mask-cards"]');
    // The overriding account by its email, as "Bound to" names it.
    await row.locator('td[data-label="Overridden by"]').getByText(email).waitFor();
    await row.getByRole('button', { name: 'Edit mask-cards' }).click();
    const form = operator.page.getByRole('dialog', { name: 'Edit guardrail policy' });
    expect(await form.getByLabel('Accounts may override it').inputValue()).toBe('disable');
    await form.getByLabel('Accounts may override it').selectOption('relax');
    await form.getByRole('button', { name: 'Save policy' }).click();
    await operator.page.getByText('Policy mask-cards saved.').waitFor();
    await row.getByText('off (not applied)').waitFor();
    expect(await sidewaysTables(operator.page)).toEqual([]);
    await shotsAtBothWidths(fixture, operator.page, 'operator-guardrails-overrides');
    expectCleanPage(operator);
    await operator.context.close();
  });
});
