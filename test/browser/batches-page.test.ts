/**
 * The batches page in Debian's Chromium against the real gateway: batches made over the API with the openai SDK
 * show their status, progress and cost so far (the sum of their lines' usage rows); the owner downloads a finished
 * batch's results and cancels a running one in the page; another account neither sees nor cancels nor downloads
 * them (console API); the empty state; the operator overview shows the batch queue. Screenshots at 1280 px and
 * 390 px, light and dark, without horizontal overflow; no CSP violation, no uncaught error.
 */
import { readFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ensureChromium } from '../support/chromium.js';
import { flushWrites } from '../support/gateway-harness.js';
import { CHAT_MODEL, expectCleanPage, openPage, screenshot, shotsAtBothWidths, signUpAndVerify, startConsoleFixture, type ConsoleFixture } from '../support/console-browser.js';
import { becomeFirstOwner } from '../support/operator-browser.js';

const chromiumPresent = ensureChromium();
let fixture: ConsoleFixture;

beforeAll(async () => {
  if (!chromiumPresent) return;
  // One line at a time on the gateway's own queue (not passed to the mock's Batch API), so a batch of slow lines is
  // still running when the page cancels it.
  fixture = await startConsoleFixture({ BATCH_POLL_MS: '50', BATCH_CONCURRENCY: '1', BATCH_PROVIDER_PASS_THROUGH: 'off' });
}, 300_000);

afterAll(async () => {
  await fixture?.close();
});

function jsonl(count: number, prefix: string): string {
  let text = '';
  for (let index = 0; index < count; index += 1) {
    const body = { model: CHAT_MODEL, messages: [{ role: 'user', content: `${prefix} line ${index}` }], max_tokens: 20 };
    text += `${JSON.stringify({ custom_id: `${prefix}-${index}`, method: 'POST', url: '/v1/chat/completions', body })}\n`;
  }
  return text;
}

async function createBatch(client: OpenAI, count: number, prefix: string): Promise<string> {
  const file = await client.files.create({ file: await toFile(Buffer.from(jsonl(count, prefix)), `${prefix}.jsonl`), purpose: 'batch' });
  return (await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' })).id;
}

async function waitFor(client: OpenAI, id: string, done: (batch: OpenAI.Batches.Batch) => boolean): Promise<OpenAI.Batches.Batch> {
  for (let attempt = 0; attempt < 400; attempt += 1) {
    const batch = await client.batches.retrieve(id);
    if (done(batch)) return batch;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`batch ${id} did not get there`);
}


async function consoleCall(page: Page, method: 'GET' | 'POST', path: string): Promise<{ status: number; body: Record<string, unknown> | null; text: string }> {
  const session = (await (await page.request.get(`${fixture.gateway.consoleUrl}/api/session`)).json()) as { csrf_token: string };
  const answer = await page.request.fetch(`${fixture.gateway.consoleUrl}${path}`, { method, headers: { 'x-csrf-token': session.csrf_token } });
  const text = await answer.text();
  let body: Record<string, unknown> | null = null;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = null;
  }
  return { status: answer.status(), body, text };
}

describe.skipIf(!chromiumPresent)('batches page in Chromium', () => {
  it('shows progress and cost, downloads results, cancels a running batch; other accounts reach none of it', async () => {
    const watched = await openPage(fixture.browser);
    const { page } = watched;
    const consoleUrl = fixture.gateway.consoleUrl;
    const accountId = await signUpAndVerify(fixture, page, `batches-${randomBytes(4).toString('hex')}@example.com`);
    expect((await fixture.gateway.admin('POST', `/admin/accounts/${accountId}/credits`, { amount_usd: 20 })).status).toBe(200);
    const key = await fixture.gateway.admin<{ id: string; key: string }>('POST', `/admin/accounts/${accountId}/keys`, { name: 'batch key' });
    const client = new OpenAI({ apiKey: key.body.key, baseURL: fixture.gateway.baseURL, maxRetries: 0 });

    // Empty state first.
    await page.goto(`${consoleUrl}/batches`);
    await page.getByRole('heading', { name: 'Batches' }).waitFor();
    await page.getByTestId('batches-empty').waitFor();
    await shotsAtBothWidths(fixture, page, 'batches-empty');

    // A batch run to the end.
    const finishedId = await createBatch(client, 3, 'done');
    const finished = await waitFor(client, finishedId, (batch) => batch.status === 'completed');
    expect(finished.request_counts).toMatchObject({ total: 3, completed: 3, failed: 0 });
    await flushWrites(fixture.gateway);
    const usage = await fixture.gateway.admin<{ data: Array<{ cost_usd: number; request_id: string }> }>('GET', `/admin/usage?key_id=${key.body.id}&limit=100`);
    expect(usage.body.data).toHaveLength(3);
    const costNano = usage.body.data.reduce((sum, row) => sum + BigInt(Math.round(row.cost_usd * 1e9)), 0n);
    expect(costNano).toBeGreaterThan(0n);

    // A batch whose lines are slow: the first runs while the rest wait, and the page cancels it. Every line is slow
    // (15 s in all, one at a time), so the batch is still running however long the page takes to get there.
    fixture.upstream.setFault({ kind: 'delay', ms: 1500, times: 10 });
    const runningId = await createBatch(client, 10, 'slow');
    await waitFor(client, runningId, (batch) => batch.status === 'in_progress');

    await page.reload();
    const finishedRow = page.locator(`tr[data-batch-id="${finishedId}"]`);
    await finishedRow.waitFor();
    expect(await finishedRow.getAttribute('data-status')).toBe('completed');
    expect(await finishedRow.getByTestId('batch-progress').textContent()).toContain('3 done · 0 failed · 3 lines');
    const shownCost = (await finishedRow.getByTestId('batch-cost').textContent()) ?? '';
    const expectedCost = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 6 }).format(Number(costNano) / 1e9);
    expect(shownCost).toBe(expectedCost);
    // The console's own figure is the integer sum of the lines' usage rows.
    const listed = await consoleCall(page, 'GET', '/api/console/batches');
    const listedRow = (listed.body?.data as Array<{ id: string; cost_nano: string }>).find((row) => row.id === finishedId);
    expect(listedRow?.cost_nano).toBe(costNano.toString());
    const runningRow = page.locator(`tr[data-batch-id="${runningId}"]`);
    await runningRow.waitFor();
    expect(await runningRow.getAttribute('data-status')).toBe('in_progress');
    await shotsAtBothWidths(fixture, page, 'batches');

    // Download the finished batch's results: one line per request, in the OpenAI batch output shape.
    const downloading = page.waitForEvent('download');
    await finishedRow.getByRole('link', { name: `Download the results of ${finishedId}` }).click();
    const download = await downloading;
    expect(download.suggestedFilename()).toBe(`${finishedId}-output.jsonl`);
    const lines = (await readFile(await download.path(), 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { custom_id: string; response: { status_code: number } });
    expect(lines.map((line) => line.custom_id).sort()).toEqual(['done-0', 'done-1', 'done-2']);
    expect(lines.every((line) => line.response.status_code === 200)).toBe(true);

    // Cancel the running batch in the page.
    await runningRow.getByRole('button', { name: `Cancel ${runningId}` }).click();
    const dialog = page.getByRole('dialog', { name: 'Cancel batch' });
    await dialog.waitFor();
    await screenshot(fixture, page, 'batches-cancel-dialog');
    await dialog.getByRole('button', { name: 'Cancel batch' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await expect.poll(async () => runningRow.getAttribute('data-status'), { timeout: 20_000 }).toMatch(/^(cancelling|cancelled)$/);
    const cancelled = await waitFor(client, runningId, (batch) => batch.status === 'cancelled');
    expect(cancelled.request_counts?.completed ?? 0).toBeLessThan(10);
    fixture.upstream.setFault(null);
    await expect.poll(async () => runningRow.getAttribute('data-status'), { timeout: 20_000 }).toBe('cancelled');
    await runningRow.getByRole('button', { name: `Cancel ${runningId}` }).waitFor({ state: 'detached' });
    const notRun = 10 - (cancelled.request_counts?.completed ?? 0) - (cancelled.request_counts?.failed ?? 0);
    expect(await runningRow.getByTestId('batch-progress').textContent()).toContain(`· ${notRun} not run`);
    await runningRow.getByTestId('batch-ended').waitFor();
    await shotsAtBothWidths(fixture, page, 'batches-cancelled');
    expectCleanPage(watched);

    // Another account: sees none of these batches, and its cancel and downloads answer 404 as for no batch at all.
    const other = await openPage(fixture.browser);
    await signUpAndVerify(fixture, other.page, `other-${randomBytes(4).toString('hex')}@example.com`);
    const otherList = await consoleCall(other.page, 'GET', '/api/console/batches');
    expect(otherList.status).toBe(200);
    expect(otherList.body).toMatchObject({ data: [], has_more: false });
    for (const [method, path] of [['POST', `/api/console/batches/${runningId}/cancel`], ['POST', `/api/console/batches/${finishedId}/cancel`], ['GET', `/api/console/batches/${finishedId}/output`], ['GET', `/api/console/batches/${finishedId}/errors`]] as const) {
      const answer = await consoleCall(other.page, method, path);
      expect(answer.status, `${method} ${path}`).toBe(404);
      expect(answer.text).not.toContain('done-0');
    }
    // Nor through the API with its own key.
    const otherAccount = ((await (await other.page.request.get(`${consoleUrl}/api/session`)).json()) as { account: { id: string } }).account.id;
    const otherKey = await fixture.gateway.admin<{ key: string }>('POST', `/admin/accounts/${otherAccount}/keys`, { name: 'other key' });
    const otherClient = new OpenAI({ apiKey: otherKey.body.key, baseURL: fixture.gateway.baseURL, maxRetries: 0 });
    await expect(otherClient.batches.cancel(finishedId)).rejects.toMatchObject({ status: 404 });
    await other.page.goto(`${consoleUrl}/batches`);
    await other.page.getByTestId('batches-empty').waitFor();
    expectCleanPage(other);
    // When the list cannot be read, the page says so instead of showing an empty list.
    await other.page.route('**/api/console/batches', (route) => route.fulfill({
      status: 400, contentType: 'application/json', body: JSON.stringify({ error: { message: 'The batches could not be read.', type: 'invalid_request_error', code: 'bad_request' } }),
    }));
    await other.page.reload();
    await other.page.getByText('The batches could not be read.').waitFor();
    expect(await other.page.getByTestId('batches-empty').count()).toBe(0);
    await screenshot(fixture, other.page, 'batches-error');
    await other.context.close();
    await watched.context.close();
  }, 240_000);

  it('the operator overview shows the batch queue', async () => {
    const watched = await openPage(fixture.browser, { width: 1360, height: 900 });
    const { page } = watched;
    await becomeFirstOwner(fixture, page);
    await page.goto(`${fixture.gateway.consoleUrl}/operator`);
    const queue = page.getByTestId('batch-queue');
    await queue.waitFor();
    const figures = await fixture.gateway.admin<{ pending_lines: number; finished_last_hour: number }>('GET', '/admin/batches/queue');
    await expect.poll(() => page.getByTestId('batch-queue-pending').textContent()).toContain(String(figures.body.pending_lines));
    await expect.poll(() => queue.textContent()).toContain(String(figures.body.finished_last_hour));
    await queue.scrollIntoViewIfNeeded();
    await screenshot(fixture, page, 'operator-batch-queue');
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.setViewportSize({ width: 390, height: 844 });
    await queue.scrollIntoViewIfNeeded();
    expect(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')).toBeLessThanOrEqual(0);
    await screenshot(fixture, page, 'operator-batch-queue-phone-dark');
    expectCleanPage(watched);
    await watched.context.close();
  }, 120_000);
});
