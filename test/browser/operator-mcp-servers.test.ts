/**
 * The operator console's MCP servers page in Debian's Chromium against the real gateway and a real SDK-built MCP
 * server on 127.0.0.1: the owner adds the server with a header (never shown again), sees it health-checked up with
 * its tools, sets a price, limits and a per-tool rule, lists the tools live, sees it go down once the server stops,
 * and deletes it. Screenshots at 1280 px and 390 px, light and dark, without horizontal overflow.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureChromium } from '../support/chromium.js';
import { expectCleanPage, openPage, screenshot, shotsAtBothWidths, startConsoleFixture, type ConsoleFixture } from '../support/console-browser.js';
import { startMockMcpServer, type MockMcpServer } from '../support/mock-mcp-server.js';
import { becomeFirstOwner } from '../support/operator-browser.js';

const chromiumPresent = ensureChromium();
let fixture: ConsoleFixture;
let upstream: MockMcpServer;

interface ServerJson { id: string; name: string; header_names: string[]; price_per_call: string | null; calls_per_minute: number | null; concurrency: number | null; tool_rules: { default: string; tools: Record<string, string> } }

beforeAll(async () => {
  if (!chromiumPresent) return;
  upstream = await startMockMcpServer('tools', 'streamable-http');
  fixture = await startConsoleFixture({ MCP_ALLOW_PRIVATE_ADDRESSES: 'true', MCP_HEALTH_CHECK_INTERVAL_SECONDS: '1', MCP_HEALTH_CHECK_TIMEOUT_SECONDS: '2' });
}, 300_000);

afterAll(async () => {
  await fixture?.close();
  await upstream?.close();
});

async function servers(): Promise<ServerJson[]> {
  return (await fixture.gateway.admin<{ data: ServerJson[] }>('GET', '/admin/mcp-servers')).body.data;
}

describe.skipIf(!chromiumPresent)('operator MCP servers page in Chromium', () => {
  it('adds a server, shows its health and tools, edits its price, limits and rules, sees it go down, deletes it', async () => {
    const watched = await openPage(fixture.browser);
    const { page } = watched;
    await becomeFirstOwner(fixture, page);
    await page.goto(`${fixture.gateway.consoleUrl}/operator`);
    // The operator's page, not the account's own of the same name.
    await page.getByRole('list', { name: 'Operator' }).getByRole('link', { name: 'MCP servers' }).click();
    await page.getByRole('heading', { name: 'MCP servers' }).waitFor();
    await page.getByText('No MCP servers yet.').waitFor();

    await page.getByRole('button', { name: 'Add MCP server' }).click();
    const add = page.getByRole('dialog', { name: 'Add an MCP server' });
    await add.getByLabel('Name', { exact: true }).fill('tools');
    await add.getByLabel('URL', { exact: true }).fill(upstream.url);
    await add.getByLabel('Headers', { exact: true }).fill('Authorization: Bearer console-secret-9876');
    await add.getByRole('checkbox', { name: /Public/ }).check();
    await screenshot(fixture, page, 'operator-mcp-add');
    await add.getByRole('button', { name: 'Add server' }).click();
    await add.waitFor({ state: 'hidden' });

    const table = page.getByTestId('mcp-servers-table');
    await table.getByText('up', { exact: true }).waitFor({ timeout: 20_000 });
    await table.getByText(/\badd\b/).first().waitFor();
    expect(await page.content()).not.toContain('console-secret-9876');
    const [created] = await servers();
    expect(created).toMatchObject({ name: 'tools', header_names: ['Authorization'] });

    await table.getByRole('button', { name: 'Edit tools' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit MCP server' });
    expect(await edit.getByLabel('New headers', { exact: true }).inputValue()).toBe('');
    await edit.getByLabel('Price per call (USD)').fill('0.002');
    await edit.getByLabel('Calls per minute, per key').fill('30');
    await edit.getByLabel('Calls at once, per key').fill('2');
    await edit.getByLabel('Rule for every tool').selectOption('read_only');
    await edit.getByLabel('add', { exact: true }).selectOption('refused');
    await screenshot(fixture, page, 'operator-mcp-edit');
    await edit.getByRole('button', { name: 'Save' }).click();
    await edit.waitFor({ state: 'hidden' });
    await table.getByText('$0.002 a call').waitFor();
    await table.getByText('limits: 30/min, 2 at once').waitFor();
    await table.getByText(/every tool only if read-only · add: refused/).waitFor();
    const [edited] = await servers();
    expect(edited).toMatchObject({ header_names: ['Authorization'], price_per_call: '0.002', calls_per_minute: 30, concurrency: 2, tool_rules: { default: 'read_only', tools: { add: 'refused' } } });

    await table.getByRole('button', { name: 'List tools of tools now' }).click();
    await table.getByText(/\d+ tools listed now/).waitFor();
    await table.getByText('up', { exact: true }).waitFor({ timeout: 20_000 });
    await shotsAtBothWidths(fixture, page, 'operator-mcp-servers');

    await upstream.close();
    await table.getByText('down', { exact: true }).waitFor({ timeout: 30_000 });
    await table.getByTestId('mcp-health-detail').waitFor();
    expect(await table.getByTestId('mcp-health-detail').textContent()).not.toContain('console-secret-9876');
    await shotsAtBothWidths(fixture, page, 'operator-mcp-servers-down');

    await table.getByRole('button', { name: 'Delete tools' }).click();
    const removal = page.getByRole('dialog', { name: 'Delete MCP server' });
    await removal.getByRole('button', { name: 'Delete tools' }).click();
    await page.getByText('No MCP servers yet.').waitFor();
    expect(await servers()).toEqual([]);
    expectCleanPage(watched);
    await watched.context.close();
  }, 240_000);
});
