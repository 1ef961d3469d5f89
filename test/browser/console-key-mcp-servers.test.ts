/**
 * A key's MCP server allowlist in the console, in Chromium, checked as the server checks it: the key form offers the
 * servers the operator opened to the account (its public ones, or the account's own grant) and no other; a key made
 * with a ticked server stores exactly that list (none ticked: none); a server the account may not use is refused by
 * the form with the server's own words before anything is sent, and by the server when it stopped being open to the
 * account after the form was loaded; the key's list is left as it was each time.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureChromium } from '../support/chromium.js';
import { expectCleanPage, openPage, screenshot, shotsAtBothWidths, signUpAndVerify, startConsoleFixture, type ConsoleFixture } from '../support/console-browser.js';

const chromiumPresent = ensureChromium();
let fixture: ConsoleFixture;
const serverIds: Record<string, string> = {};

beforeAll(async () => {
  if (!chromiumPresent) return;
  // The servers are never connected to here: no health checks, and their private test addresses allowed.
  fixture = await startConsoleFixture({ MCP_ALLOW_PRIVATE_ADDRESSES: 'true', MCP_HEALTH_CHECK_INTERVAL_SECONDS: '0' });
  for (const [name, open] of [['docs', true], ['billing', true], ['private-crm', false]] as const) {
    const created = await fixture.gateway.admin<{ id: string }>('POST', '/admin/mcp-servers', { name, url: `http://127.0.0.1:9/${name}/mcp`, public: open });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    serverIds[name] = created.body.id;
  }
}, 300_000);

afterAll(async () => {
  await fixture?.close();
});

interface StoredKey { id: string; name: string; allowed_mcp_servers: string[] | null }

async function storedKey(accountId: string, name: string): Promise<StoredKey | undefined> {
  const listed = await fixture.gateway.admin<{ data: StoredKey[] }>('GET', `/admin/accounts/${accountId}/keys`);
  return listed.body.data.find((key) => key.name === name);
}

describe.skipIf(!chromiumPresent)('a key\'s MCP servers in the console', () => {
  it('offers the account\'s servers, stores the ticked ones, and refuses the others as the server does', async () => {
    const email = `mcp-keys-${randomBytes(4).toString('hex')}@example.com`;
    const watched = await openPage(fixture.browser);
    const { page } = watched;
    const consoleUrl = fixture.gateway.consoleUrl;
    const accountId = await signUpAndVerify(fixture, page, email);

    // Create: only the public servers are offered; the one ticked is what the key stores.
    await page.goto(`${consoleUrl}/keys`);
    await page.getByRole('button', { name: 'Create key' }).click();
    const form = page.getByRole('dialog', { name: 'Create an API key' });
    await form.getByLabel('Name', { exact: true }).fill('tools-agent');
    await form.getByLabel('Only allow the MCP servers chosen below').check();
    const picker = form.getByRole('group', { name: 'Allowed MCP servers' });
    await picker.getByText('docs', { exact: true }).waitFor();
    expect((await picker.locator('label').allTextContents()).sort()).toEqual(['billing', 'docs']);
    await picker.getByLabel('docs', { exact: true }).check();
    await picker.scrollIntoViewIfNeeded();
    await shotsAtBothWidths(fixture, page, 'keys-mcp-servers-create');
    await form.getByRole('button', { name: 'Create key' }).click();
    const secretDialog = page.getByRole('dialog', { name: 'Your new API key' });
    await secretDialog.getByRole('button', { name: 'I have copied the key' }).click();
    expect((await storedKey(accountId, 'tools-agent'))?.allowed_mcp_servers).toEqual(['docs']);

    // The operator puts a server on the key the account may not use: the form shows it and refuses to save it,
    // with the words the server refuses it with, and sends nothing.
    const keyId = (await storedKey(accountId, 'tools-agent'))?.id ?? '';
    expect((await fixture.gateway.admin('PATCH', `/admin/keys/${keyId}`, { allowed_mcp_servers: ['docs', 'private-crm'] })).status).toBe(200);
    await page.reload();
    await page.getByRole('button', { name: 'Edit tools-agent' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit API key' });
    const editPicker = edit.getByRole('group', { name: 'Allowed MCP servers' });
    await editPicker.getByText('not available to this account').waitFor();
    expect(await editPicker.getByLabel('docs', { exact: true }).isChecked()).toBe(true);
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await edit.getByText("This account may not use the MCP server 'private-crm'.").waitFor();
    await editPicker.scrollIntoViewIfNeeded();
    await shotsAtBothWidths(fixture, page, 'keys-mcp-servers-refused-by-form');
    await page.setViewportSize({ width: 390, height: 844 });
    await edit.getByText("This account may not use the MCP server 'private-crm'.").scrollIntoViewIfNeeded();
    await screenshot(fixture, page, 'keys-mcp-servers-refused-by-form-phone');
    await page.setViewportSize({ width: 1280, height: 900 });
    expect((await storedKey(accountId, 'tools-agent'))?.allowed_mcp_servers).toEqual(['docs', 'private-crm']);

    // Unticking the server it may not use, and ticking billing, which the operator then closes to the account before
    // the form is sent: the server refuses it in the same words, and the form shows its answer.
    await editPicker.getByText('private-crm', { exact: true }).click();
    await editPicker.getByLabel('billing', { exact: true }).check();
    expect((await fixture.gateway.admin('PATCH', `/admin/mcp-servers/${serverIds.billing}`, { public: false })).status).toBe(200);
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await edit.getByText("This account may not use the MCP server 'billing'.").waitFor();
    await edit.getByText("This account may not use the MCP server 'billing'.").scrollIntoViewIfNeeded();
    await screenshot(fixture, page, 'keys-mcp-servers-refused-by-server');
    expect((await storedKey(accountId, 'tools-agent'))?.allowed_mcp_servers).toEqual(['docs', 'private-crm']);
    await editPicker.getByLabel('billing', { exact: true }).uncheck();
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await edit.waitFor({ state: 'hidden' });
    expect((await storedKey(accountId, 'tools-agent'))?.allowed_mcp_servers).toEqual(['docs']);

    // The operator grants the account its private server: the form offers it, and none ticked stores none.
    expect((await fixture.gateway.admin('PUT', `/admin/accounts/${accountId}/mcp-policy`, { allowed_servers: ['docs', 'private-crm'] })).status).toBe(200);
    await page.reload();
    await page.getByRole('button', { name: 'Edit tools-agent' }).click();
    const regrantedForm = page.getByRole('dialog', { name: 'Edit API key' });
    const regranted = regrantedForm.getByRole('group', { name: 'Allowed MCP servers' });
    await regranted.getByText('private-crm', { exact: true }).waitFor();
    expect((await regranted.locator('label').allTextContents()).sort()).toEqual(['docs', 'private-crm']);
    await regranted.getByLabel('docs', { exact: true }).uncheck();
    await regrantedForm.getByRole('button', { name: 'Save changes' }).click();
    await regrantedForm.waitFor({ state: 'hidden' });
    expect((await storedKey(accountId, 'tools-agent'))?.allowed_mcp_servers).toEqual([]);

    expectCleanPage(watched);
    await watched.context.close();
  }, 180_000);
});
