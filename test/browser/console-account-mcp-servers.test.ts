/**
 * The account's own MCP servers in the console, in Chromium, checked against what the server stores: an owner is
 * refused a private address with the API's own words at the URL field (nothing stored), registers a server with a
 * sealed header (never shown back, not in any page or answer) and sees its health and tools from the background
 * check, is refused a name another server holds, changes and disables it, and deletes it only after confirming; a
 * developer of the account finds no MCP servers link, no controls and no refused request on the page, and the API
 * refuses them; on a gateway whose operator has not enabled account servers the page says so, offers no way to add
 * or change one, and still deletes a server kept from before. The healthy server is a mock built with the official
 * SDK on a local address the gateway counts as public (none on the machine: that part is skipped, saying why).
 */
import { randomBytes } from 'node:crypto';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { addressRefusal } from '../../src/webhooks/endpoint-address.js';
import { ensureChromium } from '../support/chromium.js';
import { expectCleanPage, mailedLink, openPage, PASSWORD, screenshot, shotsAtBothWidths, signUpAndVerify, startConsoleFixture, type ConsoleFixture } from '../support/console-browser.js';
import { startTestGateway, type TestGateway } from '../support/gateway-harness.js';
import { startMockMcpServer, type MockMcpServer } from '../support/mock-mcp-server.js';

const chromiumPresent = ensureChromium();

/** A local IPv4 address the gateway would reach for an account (not loopback nor private), or null. */
function publicLocalAddress(): string | null {
  for (const entries of Object.values(networkInterfaces())) {
    for (const entry of entries ?? []) {
      if (entry.family === 'IPv4' && !entry.internal && addressRefusal(entry.address, { allowHttpLoopback: false, allowPrivateAddresses: false }) === null) return entry.address;
    }
  }
  return null;
}

const host = publicLocalAddress();
const UPSTREAM_SECRET = `upstream-secret-${randomBytes(6).toString('hex')}`;
/** A public address (TEST-NET-3) nothing answers on: registered fine, its checks fail. */
const UNREACHABLE_URL = 'http://203.0.113.77:9/mcp';

let fixture: ConsoleFixture;
let off: TestGateway;
let upstream: MockMcpServer | null = null;

beforeAll(async () => {
  if (!chromiumPresent) return;
  // Checks every second, each bounded to two: health shows up while the test watches.
  fixture = await startConsoleFixture({ MCP_ALLOW_ACCOUNT_SERVERS: 'true', MCP_HEALTH_CHECK_INTERVAL_SECONDS: '1', MCP_HEALTH_CHECK_TIMEOUT_SECONDS: '2' });
  // The same mail sink, the switch left off: the operator has not enabled account servers.
  off = await startTestGateway({ database: 'auto', env: { SMTP_URL: fixture.smtp.url(), MAIL_FROM: 'console@example.com', MCP_HEALTH_CHECK_INTERVAL_SECONDS: '0' } });
  if (host !== null) upstream = await startMockMcpServer('acct', 'streamable-http', { host });
  const operators = await fixture.gateway.admin('POST', '/admin/mcp-servers', { name: 'docs', url: 'https://203.0.113.5/mcp', public: true });
  expect(operators.status, JSON.stringify(operators.body)).toBe(201);
}, 300_000);

afterAll(async () => {
  await fixture?.close();
  await off?.close();
  await upstream?.close();
});

interface StoredServer { id: string; name: string; url: string; enabled: boolean; header_names: string[]; owner_account_id: string | null }

async function storedServers(gateway: TestGateway, accountId: string): Promise<StoredServer[]> {
  const listed = await gateway.admin<{ data: StoredServer[] }>('GET', '/admin/mcp-servers');
  expect(listed.status).toBe(200);
  return listed.body.data.filter((server) => server.owner_account_id === accountId);
}

/** A state-changing console call from the page's session, as a script in the page could make it. */
async function csrfRequest(page: Page, base: string, method: 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<number> {
  const session = (await (await page.request.get(`${base}/api/session`)).json()) as { csrf_token: string };
  const answer = await page.request.fetch(`${base}${path}`, { method, headers: { 'x-csrf-token': session.csrf_token }, ...(body === undefined ? {} : { data: body }) });
  return answer.status();
}

/** Every answer of 400 or more the page received. */
function refusedAnswers(page: Page): string[] {
  const refused: string[] = [];
  page.on('response', (response) => {
    if (response.status() >= 400) refused.push(`${response.status()} ${new URL(response.url()).pathname}`);
  });
  return refused;
}

describe.skipIf(!chromiumPresent)('the account\'s own MCP servers in the console', () => {
  it('registers, shows health and tools, edits and deletes a server; refuses a private address and a taken name; a developer sees no controls', async () => {
    const base = fixture.gateway.consoleUrl;
    const owner = await openPage(fixture.browser);
    const { page } = owner;
    const seen: string[] = [];
    page.on('response', (response) => {
      if (new URL(response.url()).pathname.startsWith('/api/mcp-servers')) void response.text().then((text) => seen.push(text), () => {});
    });
    const accountId = await signUpAndVerify(fixture, page, `mcp-owner-${randomBytes(4).toString('hex')}@example.com`);

    await page.goto(`${base}/keys`);
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'MCP servers' }).click();
    await page.getByRole('heading', { name: 'MCP servers', level: 1 }).waitFor();
    await page.getByText('No MCP server yet.').waitFor();

    // A private address: refused by the API, its message shown at the URL field; nothing is stored.
    await page.getByRole('button', { name: 'Add MCP server' }).click();
    const add = page.getByRole('dialog', { name: 'Add an MCP server' });
    await add.getByLabel('Name', { exact: true }).fill('inside');
    await add.getByLabel('URL', { exact: true }).fill('http://10.1.2.3/mcp');
    await add.getByRole('button', { name: 'Add server' }).click();
    const privateRefusal = 'The address 10.1.2.3 is not a public address; only public addresses are reached. An account\'s MCP server must be on a public address.';
    await add.getByRole('alert').getByText('Not saved: check the URL below.').waitFor();
    const urlField = add.getByLabel('URL', { exact: true });
    expect(await urlField.getAttribute('aria-invalid')).toBe('true');
    expect(await add.locator('.field-error').allTextContents()).toEqual([privateRefusal]);
    await shotsAtBothWidths(fixture, page, 'account-mcp-servers-private-address');
    expect(await storedServers(fixture.gateway, accountId)).toEqual([]);

    // A header line without a colon is caught before anything is sent.
    await urlField.fill(UNREACHABLE_URL);
    await add.getByLabel('Headers', { exact: true }).fill('Authorization Bearer x');
    await add.getByRole('button', { name: 'Add server' }).click();
    await add.getByText('"Authorization Bearer x" needs a "Name: value" form').waitFor();
    expect(await storedServers(fixture.gateway, accountId)).toEqual([]);

    // Registered with a sealed header: the page shows its name only.
    const serverName = `acct-${randomBytes(3).toString('hex')}`;
    const downName = `unreachable-${randomBytes(3).toString('hex')}`;
    await add.getByLabel('Name', { exact: true }).fill(serverName);
    await urlField.fill(upstream?.url ?? UNREACHABLE_URL);
    await add.getByLabel('Transport', { exact: true }).selectOption('streamable-http');
    await add.getByLabel('Headers', { exact: true }).fill(`Authorization: Bearer ${UPSTREAM_SECRET}`);
    await add.getByRole('button', { name: 'Add server' }).click();
    await add.waitFor({ state: 'hidden' });
    await page.getByText(`MCP server ${serverName} added`).waitFor();
    const table = page.getByTestId('account-mcp-servers-table');
    const row = table.getByRole('row').filter({ has: page.getByRole('rowheader', { name: serverName }) });
    await row.getByText('headers Authorization').waitFor();
    const [stored] = await storedServers(fixture.gateway, accountId);
    expect(stored).toMatchObject({ name: serverName, url: upstream?.url ?? UNREACHABLE_URL, enabled: true, header_names: ['Authorization'] });

    // The background check's verdict and the tools it listed, with their names as keys see them.
    if (upstream !== null) {
      await row.getByText('up', { exact: true }).waitFor({ timeout: 45_000 });
      await row.getByText(`${serverName}__echo`, { exact: false }).waitFor();
    } else {
      console.warn('No local IPv4 address the gateway counts as public: the healthy server is not shown, only a down one.');
      await row.getByText('down', { exact: true }).waitFor({ timeout: 45_000 });
    }
    await table.scrollIntoViewIfNeeded();
    await shotsAtBothWidths(fixture, page, 'account-mcp-servers-list');

    // A second server on a public address nothing answers on: down, with the check's error.
    await page.getByRole('button', { name: 'Add MCP server' }).click();
    await add.getByLabel('Name', { exact: true }).fill(downName);
    await add.getByLabel('URL', { exact: true }).fill(UNREACHABLE_URL);
    await add.getByLabel('Transport', { exact: true }).selectOption('sse');
    await add.getByRole('button', { name: 'Add server' }).click();
    await add.waitFor({ state: 'hidden' });
    const downRow = table.getByRole('row').filter({ has: page.getByRole('rowheader', { name: downName }) });
    await downRow.getByText('down', { exact: true }).waitFor({ timeout: 45_000 });
    expect(await downRow.getByTestId('mcp-health-detail').textContent()).toMatch(/checked .+ · \S/);
    await downRow.getByText('HTTP + SSE').waitFor();
    await shotsAtBothWidths(fixture, page, 'account-mcp-servers-health');

    // Check now: the check runs at once for that server only; its verdict is said and kept as the server's health.
    await downRow.getByRole('button', { name: `Check ${downName} now` }).click();
    await page.getByText(`MCP server ${downName} is down:`).waitFor();
    if (upstream !== null) {
      await row.getByRole('button', { name: `Check ${serverName} now` }).click();
      await page.getByText(new RegExp(`MCP server ${serverName} is up: \\d+ tools? listed\\.`)).waitFor();
    }
    await shotsAtBothWidths(fixture, page, 'account-mcp-servers-check-now');
    // Three checks a minute per server: the fourth is refused, and the page says so with the API's words.
    await downRow.getByRole('button', { name: `Check ${downName} now` }).click();
    await page.getByText(`MCP server ${downName} is down:`).waitFor();
    await downRow.getByRole('button', { name: `Check ${downName} now` }).click();
    await page.getByText(`MCP server ${downName} is down:`).waitFor();
    await downRow.getByRole('button', { name: `Check ${downName} now` }).click();
    await page.getByRole('alert').getByText(`${downName} was not checked: Too many MCP server checks.`, { exact: false }).waitFor();
    await screenshot(fixture, page, 'account-mcp-servers-check-limited');

    // The operator's server's name is taken: the API's conflict shown at the name field; nothing changes.
    await row.getByRole('button', { name: `Edit ${serverName}` }).click();
    const edit = page.getByRole('dialog', { name: 'Edit MCP server' });
    await edit.getByText('Kept: Authorization.').waitFor();
    expect(await edit.getByLabel('New headers', { exact: true }).inputValue()).toBe('');
    await edit.getByLabel('Name', { exact: true }).fill('docs');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await edit.getByRole('alert').getByText('Not saved: check the name below.').waitFor();
    expect(await edit.locator('.field-error').allTextContents()).toEqual(['An MCP server named \'docs\' exists already.']);
    await screenshot(fixture, page, 'account-mcp-servers-name-taken');
    expect((await storedServers(fixture.gateway, accountId)).find((server) => server.id === stored?.id)?.name).toBe(serverName);

    // Disabled, its header removed: only what changed is sent, and the row says so.
    await edit.getByLabel('Name', { exact: true }).fill(serverName);
    await edit.getByLabel('Remove every header').check();
    await edit.getByText('Enabled: your keys may use its tools').click();
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await edit.waitFor({ state: 'hidden' });
    await row.getByText('disabled', { exact: true }).waitFor();
    await row.getByText('no headers').waitFor();
    expect((await storedServers(fixture.gateway, accountId)).find((server) => server.id === stored?.id)).toMatchObject({ name: serverName, enabled: false, header_names: [] });

    // Delete asks first; Cancel keeps it.
    await downRow.getByRole('button', { name: `Delete ${downName}` }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete MCP server' });
    await confirm.getByText(`Delete ${downName}?`).waitFor();
    await screenshot(fixture, page, 'account-mcp-servers-delete-confirm');
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'hidden' });
    expect((await storedServers(fixture.gateway, accountId)).map((server) => server.name).sort()).toEqual([serverName, downName]);
    await downRow.getByRole('button', { name: `Delete ${downName}` }).click();
    await confirm.getByRole('button', { name: `Delete ${downName}` }).click();
    await confirm.waitFor({ state: 'hidden' });
    await page.getByText(`MCP server ${downName} deleted.`).waitFor();
    await downRow.waitFor({ state: 'detached' });
    expect((await storedServers(fixture.gateway, accountId)).map((server) => server.name)).toEqual([serverName]);

    // The header's value never came back: not in the page, not in any answer the page received.
    expect(await page.content()).not.toContain(UPSTREAM_SECRET);
    expect(seen.length).toBeGreaterThan(3);
    for (const text of seen) expect(text).not.toContain(UPSTREAM_SECRET);
    expectCleanPage(owner);

    // A developer of the account: no link, an explanation, no controls, nothing asked that is refused; the API refuses them.
    const developerEmail = `mcp-developer-${randomBytes(4).toString('hex')}@example.com`;
    await page.goto(`${base}/members`);
    await page.getByLabel('Email', { exact: true }).fill(developerEmail);
    await page.getByLabel('Role', { exact: true }).selectOption('developer');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    await page.getByText('Invitation sent.').waitFor();
    const developer = await openPage(fixture.browser);
    const refused = refusedAnswers(developer.page);
    await developer.page.goto(await mailedLink(fixture.smtp, developerEmail, 'invitation'));
    await developer.page.getByLabel('Choose a password').fill(PASSWORD);
    await developer.page.getByRole('button', { name: 'Accept and sign in' }).click();
    await developer.page.waitForURL('**/keys');
    const navigation = developer.page.getByRole('navigation', { name: 'Console' });
    await navigation.getByRole('link', { name: 'API keys' }).waitFor();
    expect(await navigation.getByRole('link', { name: 'MCP servers' }).count()).toBe(0);
    await developer.page.goto(`${base}/mcp-servers`);
    await developer.page.getByText('Only owners and admins of the account manage its MCP servers.').waitFor();
    expect(await developer.page.getByRole('button', { name: /Add MCP server|Edit|Delete|Check/ }).count()).toBe(0);
    expect(await developer.page.getByText(serverName).count()).toBe(0);
    await shotsAtBothWidths(fixture, developer.page, 'account-mcp-servers-developer');
    expect(refused).toEqual([]);
    expect(await csrfRequest(developer.page, base, 'POST', '/api/mcp-servers', { name: 'by-developer', url: UNREACHABLE_URL })).toBe(403);
    expect(await csrfRequest(developer.page, base, 'DELETE', `/api/mcp-servers/${stored?.id ?? ''}`)).toBe(403);
    expect(await csrfRequest(developer.page, base, 'POST', `/api/mcp-servers/${stored?.id ?? ''}/check`)).toBe(403);
    expect((await storedServers(fixture.gateway, accountId)).map((server) => server.name)).toEqual([serverName]);
    expectCleanPage(developer);
    await developer.context.close();
    await owner.context.close();
  }, 300_000);

  it('says so when the operator has not enabled account servers, and still deletes one kept from before', async () => {
    const watched = await openPage(fixture.browser);
    const { page } = watched;
    const accountId = await signUpAndVerify({ ...fixture, gateway: off }, page, `mcp-off-${randomBytes(4).toString('hex')}@example.com`);
    await page.goto(`${off.consoleUrl}/mcp-servers`);
    const notEnabled = page.getByText('The operator of this gateway has not enabled MCP servers of accounts');
    await notEnabled.waitFor();
    expect(await page.getByRole('button', { name: 'Add MCP server' }).count()).toBe(0);
    await shotsAtBothWidths(fixture, page, 'account-mcp-servers-not-enabled');

    // A server the account registered while the switch was on: listed, not editable, deletable.
    const now = Date.now();
    await off.gateway.services.storage.mcpServers.create({
      id: `mcp_kept_${randomBytes(4).toString('hex')}`, name: 'kept-tools', url: UNREACHABLE_URL, transport: 'streamable-http', headers: { 'X-Api-Key': UPSTREAM_SECRET },
      public: false, enabled: true, createdAt: now, updatedAt: now, ownerAccountId: accountId,
    });
    await page.reload();
    await page.getByText('the ones below are not served to your keys. You may still delete them.').waitFor();
    const row = page.getByTestId('account-mcp-servers-table').getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'kept-tools' }) });
    await row.getByText('headers X-Api-Key').waitFor();
    await row.getByText('not served', { exact: true }).waitFor();
    expect(await row.getByRole('button', { name: 'Edit kept-tools' }).count()).toBe(0);
    expect(await row.getByRole('button', { name: 'Check kept-tools now' }).count()).toBe(0);
    await shotsAtBothWidths(fixture, page, 'account-mcp-servers-not-enabled-kept');
    expect(await csrfRequest(page, off.consoleUrl, 'PATCH', `/api/mcp-servers/${(await storedServers(off, accountId))[0]?.id ?? ''}`, { enabled: false })).toBe(403);
    await row.getByRole('button', { name: 'Delete kept-tools' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete MCP server' });
    await confirm.getByRole('button', { name: 'Delete kept-tools' }).click();
    await page.getByText('MCP server kept-tools deleted.').waitFor();
    expect(await storedServers(off, accountId)).toEqual([]);
    expect(await page.content()).not.toContain(UPSTREAM_SECRET);
    expectCleanPage(watched);
    await watched.context.close();
  }, 180_000);
});
