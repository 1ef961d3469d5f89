/**
 * The console learns whether the signed-in user operates the gateway from the session answer every page loads (200
 * for everyone): a user who is no operator browses every page without one refused request or error in the browser's
 * console, and sees no operator navigation; an operator sees it, and the operator pages tell each standing apart.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { expectCleanPage, openPage, screenshot, signUpAndVerify, startConsoleFixture, type ConsoleFixture } from '../support/console-browser.js';

const PAGES = ['/keys', '/usage', '/playground', '/quickstart', '/billing', '/plans', '/referrals', '/members', '/alerts', '/mcp-servers', '/support', '/security'];

let fixture: ConsoleFixture;

beforeAll(async () => {
  fixture = await startConsoleFixture();
}, 120_000);

afterAll(async () => {
  await fixture?.close();
});

/** Every message the page wrote to the browser's console at warning level or above, and every answer of 400 or more. */
function watchConsole(page: Page): { messages: string[]; refused: string[]; operatorCalls: string[] } {
  const watched = { messages: [] as string[], refused: [] as string[], operatorCalls: [] as string[] };
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') watched.messages.push(`${message.type()}: ${message.text()}`);
  });
  page.on('response', (response) => {
    if (response.status() >= 400) watched.refused.push(`${response.status()} ${new URL(response.url()).pathname}`);
  });
  page.on('request', (request) => {
    if (new URL(request.url()).pathname.startsWith('/api/operator/')) watched.operatorCalls.push(new URL(request.url()).pathname);
  });
  return watched;
}

/** Whether the navigation (opened first at phone width, where it hides behind its toggle) shows the operator part. */
async function operatorHeadingVisible(page: Page): Promise<boolean> {
  const toggle = page.getByRole('button', { name: 'Menu', exact: true });
  if (await toggle.isVisible() && await toggle.getAttribute('aria-expanded') !== 'true') await toggle.click();
  const navigation = page.getByRole('navigation', { name: 'Console' });
  await navigation.getByRole('link', { name: 'API keys' }).waitFor();
  return navigation.getByRole('heading', { name: 'Operator' }).isVisible();
}

describe('operator standing from the session', () => {
  it('a user who is no operator browses every page without a 403 or an error in the browser console', async () => {
    const watched = await openPage(fixture.browser);
    const { page } = watched;
    const console = watchConsole(page);
    await signUpAndVerify(fixture, page, 'no-operator@example.com');
    for (const route of PAGES) {
      await page.goto(`${fixture.gateway.consoleUrl}${route}`);
      await page.getByRole('main').getByRole('heading', { level: 1 }).first().waitFor();
      expect(await operatorHeadingVisible(page), route).toBe(false);
    }
    // Typing the operator address shows why there is nothing for this user, still without asking the operator API.
    await page.goto(`${fixture.gateway.consoleUrl}/operator`);
    await page.getByText('This user is not an operator of the gateway.').waitFor();
    await screenshot(fixture, page, 'operator-refused-1280-light');
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(fixture, page, 'operator-refused-390-dark');
    expect(console.operatorCalls).toEqual([]);
    expect(console.refused).toEqual([]);
    expect(console.messages).toEqual([]);
    expectCleanPage(watched);
    await watched.context.close();
  }, 90_000);

  it('an operator sees the operator navigation; a disabled one is told so; none of it needs a refused request', async () => {
    const watched = await openPage(fixture.browser, { width: 390, height: 844, colorScheme: 'dark' });
    const { page } = watched;
    const console = watchConsole(page);
    await signUpAndVerify(fixture, page, 'operator@example.com');
    const session = (await (await page.request.get(`${fixture.gateway.consoleUrl}/api/session`)).json()) as { user: { id: string }; operator: unknown };
    expect(session.operator).toBeNull();
    const operators = fixture.gateway.gateway.services.storage.operators;
    await operators.upsert({ userId: session.user.id, role: 'viewer', createdAt: fixture.now(), createdBy: null });

    await page.goto(`${fixture.gateway.consoleUrl}/operator`);
    await page.getByText('Operators must use two-factor sign-in.').waitFor();
    await screenshot(fixture, page, 'operator-two-factor-390-dark');
    expect(await operatorHeadingVisible(page)).toBe(true);
    const standing = (await (await page.request.get(`${fixture.gateway.consoleUrl}/api/session`)).json()) as { operator: unknown };
    expect(standing.operator).toEqual({ role: 'viewer', disabled: false, two_factor_required: true, permissions: ['read'] });

    await operators.setDisabled(session.user.id, { at: fixture.now(), by: 'owner' });
    await page.goto(`${fixture.gateway.consoleUrl}/operator`);
    await page.getByText('An owner disabled your operator access').waitFor();
    await screenshot(fixture, page, 'operator-disabled-390-dark');
    expect(await operatorHeadingVisible(page)).toBe(false);
    expect(console.operatorCalls).toEqual([]);
    expect(console.refused).toEqual([]);
    expect(console.messages).toEqual([]);
    expectCleanPage(watched);
    await watched.context.close();
  }, 90_000);
});
