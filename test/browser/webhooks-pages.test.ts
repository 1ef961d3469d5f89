/**
 * Webhook pages in Debian's Chromium against the real gateway: an account owner adds an endpoint (a receiver on
 * 127.0.0.1 that verifies signatures with the `standardwebhooks` package), copies the secret shown once, sends a
 * test event and reads its delivery in the log; the operator adds an endpoint for channel events on the operator
 * console's Webhooks page. Screenshots at 1280 px and 390 px, light and dark, without horizontal overflow.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ensureChromium } from '../support/chromium.js';
import {
  expectCleanPage, openPage, screenshot, shotsAtBothWidths, signUpAndVerify, startConsoleFixture, type ConsoleFixture,
} from '../support/console-browser.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { becomeFirstOwner } from '../support/operator-browser.js';

const chromiumPresent = ensureChromium();
let fixture: ConsoleFixture;
let receiver: WebhookReceiver;
let receiverUrl: string;

beforeAll(async () => {
  if (!chromiumPresent) return;
  fixture = await startConsoleFixture({ WEBHOOK_ALLOW_HTTP_LOOPBACK: 'true', WEBHOOK_CHECK_MS: '100' });
  receiver = new WebhookReceiver();
  receiverUrl = await receiver.start();
}, 300_000);

afterAll(async () => {
  await fixture?.close();
  await receiver?.stop();
});


async function addEndpoint(page: Page, events: string[], shotName: string): Promise<string> {
  await page.getByRole('button', { name: 'Add endpoint' }).first().click();
  const dialog = page.getByRole('dialog', { name: 'Add a webhook endpoint' });
  await dialog.getByLabel('URL').fill(receiverUrl);
  await dialog.getByLabel('Description').fill('Ops receiver');
  for (const event of events) await dialog.getByRole('checkbox', { name: event }).check();
  await screenshot(fixture, page, `${shotName}-add`);
  await dialog.getByRole('button', { name: 'Add endpoint' }).click();
  const secretDialog = page.getByRole('dialog', { name: 'Signing secret' });
  const secret = (await secretDialog.getByTestId('webhook-secret').textContent()) ?? '';
  expect(secret).toMatch(/^whsec_/);
  await screenshot(fixture, page, `${shotName}-secret`);
  await secretDialog.getByRole('button', { name: 'I have copied the secret' }).click();
  return secret;
}

describe.skipIf(!chromiumPresent)('webhook pages in Chromium', () => {
  it('adds an endpoint, sends a test event and shows its delivery', async () => {
    const watched = await openPage(fixture.browser);
    const { page } = watched;
    await signUpAndVerify(fixture, page, `hooks-${randomBytes(4).toString('hex')}@example.com`);
    await page.goto(`${fixture.gateway.consoleUrl}/webhooks`);
    await page.getByRole('heading', { name: 'Webhooks' }).waitFor();
    await page.getByText('No endpoint yet.').waitFor();
    const secret = await addEndpoint(page, ['key.disabled', 'webhook.test', 'account.balance_low'], 'webhooks');
    receiver.secrets = [secret];
    await page.getByText('Nothing delivered yet.').waitFor();
    await page.getByRole('button', { name: 'Send test' }).click();
    await page.getByText('A test event is on its way.').waitFor();
    await page.getByRole('cell').getByText('succeeded').waitFor({ timeout: 15_000 });
    expect(receiver.processed.size).toBe(1);
    await page.getByText(/^200 · \d+ ms$/).click();
    await page.getByText(/Attempt 1 at/).waitFor();
    await shotsAtBothWidths(fixture, page, 'webhooks');
    expectCleanPage(watched);
    await watched.context.close();
  }, 120_000);

  it('the operator adds an endpoint for channel events', async () => {
    const watched = await openPage(fixture.browser);
    const { page } = watched;
    const consoleUrl = fixture.gateway.consoleUrl;
    await becomeFirstOwner(fixture, page);

    await page.goto(`${consoleUrl}/operator/webhooks`);
    await page.getByRole('heading', { name: 'Webhooks' }).waitFor();
    const secret = await addEndpoint(page, ['channel.down', 'channel.up'], 'operator-webhooks');
    receiver.secrets = [secret];
    await page.getByRole('cell').getByText('channel.down').waitFor();
    await shotsAtBothWidths(fixture, page, 'operator-webhooks');
    // The operator's endpoint is listed by the admin API, never among an account's.
    const listed = await fixture.gateway.admin<{ data: Array<{ event_types: string[] }> }>('GET', '/admin/webhooks');
    expect(listed.body.data).toEqual([expect.objectContaining({ event_types: ['channel.down', 'channel.up'] })]);
    expectCleanPage(watched);
    await watched.context.close();
  }, 120_000);
});
