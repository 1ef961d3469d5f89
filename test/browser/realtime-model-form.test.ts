/**
 * The operator sets a realtime model's audio token prices in the console: the three audio prices are stored as the
 * admin API reads them, and changing one later sends that price alone (the others stay as stored). Screenshots at
 * 1280 px and 390 px, light and dark, without horizontal overflow.
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

const AUDIO_INPUT = 'Audio input, USD per million tokens (empty: the input price)';
const CACHED_AUDIO_INPUT = 'Cached audio input, USD per million tokens (empty: the audio input price)';
const AUDIO_OUTPUT = 'Audio output, USD per million tokens (empty: the output price)';

describe.skipIf(!chromiumPresent)('a realtime model in the operator console', () => {
  it('is added with its audio token prices, and one of them is changed alone', async () => {
    const watched = await openPage(fixture.browser, { width: 1280, height: 900 });
    const { page } = watched;
    await becomeFirstOwner(fixture, page);
    await page.goto(`${fixture.gateway.consoleUrl}/operator/models`);
    await page.getByRole('button', { name: 'Add model' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a model' });
    await dialog.getByLabel('Model id').fill('voice-realtime');
    await dialog.getByLabel('Input, USD per million tokens', { exact: true }).fill('4');
    await dialog.getByLabel('Output, USD per million tokens', { exact: true }).fill('16');
    await dialog.getByLabel(AUDIO_INPUT, { exact: true }).fill('32');
    await dialog.getByLabel(CACHED_AUDIO_INPUT, { exact: true }).fill('0.4');
    await dialog.getByLabel(AUDIO_OUTPUT, { exact: true }).fill('64');
    await dialog.getByLabel(AUDIO_OUTPUT, { exact: true }).scrollIntoViewIfNeeded();
    await shotsAtBothWidths(fixture, page, 'realtime-model-form');
    await dialog.getByRole('button', { name: 'Create model' }).click();
    await dialog.waitFor({ state: 'hidden' });
    const stored = await fixture.gateway.admin<{ pricing: Record<string, unknown> }>('GET', '/admin/models/voice-realtime');
    expect(stored.body.pricing).toMatchObject({ input_per_mtok: 4, output_per_mtok: 16, input_audio_per_mtok: 32, cached_input_audio_per_mtok: 0.4, output_audio_per_mtok: 64 });

    await page.locator('tr[data-model-id="voice-realtime"]').waitFor();
    await page.getByRole('button', { name: 'Edit voice-realtime' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit model' });
    await expect.poll(() => edit.getByLabel(AUDIO_INPUT, { exact: true }).inputValue()).toBe('32');
    await edit.getByLabel(AUDIO_OUTPUT, { exact: true }).fill('80');
    const patched = page.waitForRequest((request) => request.method() === 'PATCH' && request.url().includes('admin/models/voice-realtime'));
    await edit.getByRole('button', { name: 'Save model' }).click();
    expect(JSON.parse((await patched).postData() ?? '{}')).toEqual({ pricing: { output_audio_per_mtok: '80' } });
    await edit.waitFor({ state: 'hidden' });
    const changed = await fixture.gateway.admin<{ pricing: Record<string, unknown> }>('GET', '/admin/models/voice-realtime');
    expect(changed.body.pricing).toMatchObject({ input_audio_per_mtok: 32, cached_input_audio_per_mtok: 0.4, output_audio_per_mtok: 80 });
    expectCleanPage(watched);
    await watched.context.close();
  }, 300_000);
});
