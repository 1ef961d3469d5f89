/**
 * The operator adds a rerank model in the console: kind `rerank` and a per-search-unit price, stored as the admin API
 * reads them, and listed with its price. Screenshots at 1280 px and 390 px, light and dark, without horizontal
 * overflow.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureChromium } from '../support/chromium.js';
import { expectCleanPage, openPage, shotsAtBothWidths, startConsoleFixture, type ConsoleFixture } from '../support/console-browser.js';
import { becomeFirstOwner } from '../support/operator-browser.js';

const chromiumPresent = ensureChromium();
let fixture: ConsoleFixture;

beforeAll(async () => {
  if (!chromiumPresent) return;
  fixture = await startConsoleFixture();
}, 300_000);

afterAll(async () => {
  await fixture?.close();
});


describe.skipIf(!chromiumPresent)('a rerank model in the operator console', () => {
  it('is added with kind rerank and a price per search unit', async () => {
    const watched = await openPage(fixture.browser, { width: 1280, height: 900 });
    const { page } = watched;
    await becomeFirstOwner(fixture, page);
    await page.goto(`${fixture.gateway.consoleUrl}/operator/models`);
    await page.getByRole('button', { name: 'Add model' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a model' });
    await dialog.getByLabel('Model id').fill('rerank-v3.5');
    await dialog.getByLabel('Kind').selectOption('rerank');
    await dialog.getByLabel('Per search unit (rerank), USD').fill('0.002');
    await shotsAtBothWidths(fixture, page, 'rerank-model-form');
    await dialog.getByRole('button', { name: 'Create model' }).click();
    await dialog.waitFor({ state: 'hidden' });
    const stored = await fixture.gateway.admin<{ kind: string; pricing: Record<string, unknown> }>('GET', '/admin/models/rerank-v3.5');
    expect(stored.body).toMatchObject({ kind: 'rerank', pricing: { per_search_unit: 0.002 } });
    await page.locator('tr[data-model-id="rerank-v3.5"]').waitFor();
    await shotsAtBothWidths(fixture, page, 'rerank-model-list');
    expectCleanPage(watched);
    await watched.context.close();
  }, 300_000);
});
