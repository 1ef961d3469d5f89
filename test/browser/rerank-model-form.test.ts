/**
 * The operator adds a rerank model in the console: kind `rerank` and a per-search-unit price, stored as the admin API
 * reads them, and listed with its price. Screenshots at 1280 px and 390 px, light and dark, without horizontal
 * overflow.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ensureChromium } from '../support/chromium.js';
import { expectCleanPage, openPage, screenshot, startConsoleFixture, type ConsoleFixture } from '../support/console-browser.js';
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

async function shots(page: Page, name: string): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
      await page.waitForTimeout(100);
      expect(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'), `${name} ${width} ${scheme}`).toBeLessThanOrEqual(0);
      await screenshot(fixture, page, `${name}-${width}-${scheme}`);
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1280, height: 900 });
}

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
    await shots(page, 'rerank-model-form');
    await dialog.getByRole('button', { name: 'Create model' }).click();
    await dialog.waitFor({ state: 'hidden' });
    const stored = await fixture.gateway.admin<{ kind: string; pricing: Record<string, unknown> }>('GET', '/admin/models/rerank-v3.5');
    expect(stored.body).toMatchObject({ kind: 'rerank', pricing: { per_search_unit: 0.002 } });
    await page.locator('tr[data-model-id="rerank-v3.5"]').waitFor();
    await shots(page, 'rerank-model-list');
    expectCleanPage(watched);
    await watched.context.close();
  }, 300_000);
});
