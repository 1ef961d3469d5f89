/**
 * The operator console's MCP servers form in Debian's Chromium against the real gateway (MCP_ALLOW_STDIO on): the
 * owner adds a server that requires OAuth client credentials (a mock token endpoint and server on 127.0.0.1) and a
 * local stdio server (the SDK-built fixture), sees both checked up with their tools, the client secret shown only as
 * set and the environment by name only, and edits the price of the stdio server without restarting its process.
 * Screenshots at 1280 px and 390 px, light and dark, without horizontal overflow.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureChromium } from '../support/chromium.js';
import { expectCleanPage, openPage, screenshot, shotsAtBothWidths, startConsoleFixture, type ConsoleFixture } from '../support/console-browser.js';
import { startMockOAuthMcpServer, type MockOAuthMcpServer } from '../support/mock-oauth-mcp-server.js';
import { becomeFirstOwner } from '../support/operator-browser.js';

const FIXTURE = fileURLToPath(new URL('../support/fixtures/stdio-mcp-server.mjs', import.meta.url));
const chromiumPresent = ensureChromium();
let fixture: ConsoleFixture;
let upstream: MockOAuthMcpServer;

interface ServerJson { id: string; name: string; updated_at: string; oauth: Record<string, unknown> | null; command: string | null; args: string[] | null; env_names: string[] | null; price_per_call: string | null }

beforeAll(async () => {
  if (!chromiumPresent) return;
  upstream = await startMockOAuthMcpServer();
  fixture = await startConsoleFixture({ MCP_ALLOW_PRIVATE_ADDRESSES: 'true', MCP_ALLOW_STDIO: 'true', MCP_HEALTH_CHECK_INTERVAL_SECONDS: '1', MCP_HEALTH_CHECK_TIMEOUT_SECONDS: '5' });
}, 300_000);

afterAll(async () => {
  await fixture?.close();
  await upstream?.close();
});

async function servers(): Promise<ServerJson[]> {
  return (await fixture.gateway.admin<{ data: ServerJson[] }>('GET', '/admin/mcp-servers')).body.data;
}

describe.skipIf(!chromiumPresent)('operator MCP servers form: OAuth and stdio', () => {
  it('adds an OAuth server and a stdio server, shows them up without their secrets, edits one', async () => {
    const watched = await openPage(fixture.browser);
    const { page } = watched;
    await becomeFirstOwner(fixture, page);
    await page.goto(`${fixture.gateway.consoleUrl}/operator`);
    // The operator's page, not the account's own of the same name.
    await page.getByRole('list', { name: 'Operator' }).getByRole('link', { name: 'MCP servers' }).click();
    await page.getByRole('heading', { name: 'MCP servers' }).waitFor();

    await page.getByRole('button', { name: 'Add MCP server' }).click();
    let add = page.getByRole('dialog', { name: 'Add an MCP server' });
    await add.getByLabel('Name', { exact: true }).fill('guarded');
    await add.getByLabel('URL', { exact: true }).fill(upstream.url);
    await add.getByRole('checkbox', { name: /requires OAuth/ }).check();
    await add.getByLabel('Token URL').fill(upstream.tokenUrl);
    await add.getByLabel('Client ID').fill(upstream.clientId);
    await add.getByLabel('Client secret').fill(upstream.clientSecret);
    await add.getByLabel('Scope').fill('tools:call');
    await add.getByLabel('Client authentication').selectOption('client_secret_post');
    await add.getByRole('checkbox', { name: /Public/ }).check();
    await shotsAtBothWidths(fixture, page, 'operator-mcp-add-oauth');
    await add.getByRole('button', { name: 'Add server' }).click();
    await add.waitFor({ state: 'hidden' });

    await page.getByRole('button', { name: 'Add MCP server' }).click();
    add = page.getByRole('dialog', { name: 'Add an MCP server' });
    await add.getByLabel('Name', { exact: true }).fill('local');
    await add.getByLabel('Transport').selectOption('stdio');
    expect(await add.getByLabel('URL', { exact: true }).count()).toBe(0);
    await add.getByLabel('Command').fill(process.execPath);
    await add.getByLabel('Arguments').fill(FIXTURE);
    await add.getByLabel('Environment').fill('FIXTURE_SECRET=console-env-secret-5521');
    await shotsAtBothWidths(fixture, page, 'operator-mcp-add-stdio');
    await add.getByRole('button', { name: 'Add server' }).click();
    await add.waitFor({ state: 'hidden' });

    const table = page.getByTestId('mcp-servers-table');
    const guardedRow = table.locator('tr', { hasText: 'guarded' });
    const localRow = table.locator('tr', { hasText: 'local' });
    await guardedRow.getByText('up', { exact: true }).waitFor({ timeout: 30_000 });
    await localRow.getByText('up', { exact: true }).waitFor({ timeout: 30_000 });
    await guardedRow.getByText(/OAuth gateway-client \(secret set\)/).waitFor();
    await localRow.getByText(/env FIXTURE_SECRET/).waitFor();
    await localRow.getByText(/pid \(read-only\)/).waitFor();
    const content = await page.content();
    expect(content).not.toContain(upstream.clientSecret);
    expect(content).not.toContain('console-env-secret-5521');
    expect(upstream.tokenRequests.some((request) => request.granted && request.method === 'post')).toBe(true);
    await shotsAtBothWidths(fixture, page, 'operator-mcp-oauth-stdio');

    const before = (await servers()).find((server) => server.name === 'local');
    expect(before).toMatchObject({ command: process.execPath, args: [FIXTURE], env_names: ['FIXTURE_SECRET'], oauth: null });
    await table.getByRole('button', { name: 'Edit local' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit MCP server' });
    expect(await edit.getByLabel('Command').inputValue()).toBe(process.execPath);
    expect(await edit.getByLabel('New environment').inputValue()).toBe('');
    await edit.getByLabel('Price per call (USD)').fill('0.001');
    await screenshot(fixture, page, 'operator-mcp-edit-stdio');
    await edit.getByRole('button', { name: 'Save' }).click();
    await edit.waitFor({ state: 'hidden' });
    await localRow.getByText('$0.001 a call').waitFor();
    const after = (await servers()).find((server) => server.name === 'local');
    expect(after).toMatchObject({ price_per_call: '0.001', env_names: ['FIXTURE_SECRET'], command: process.execPath });
    const guarded = (await servers()).find((server) => server.name === 'guarded');
    expect(guarded?.oauth).toMatchObject({ client_id: upstream.clientId, client_secret: 'set', scope: 'tools:call', auth_method: 'client_secret_post' });
    expectCleanPage(watched);
    await watched.context.close();
  }, 240_000);
});
