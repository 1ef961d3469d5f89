/**
 * Projects in the console, in Chromium at desktop width and at 390 px: the projects list (the default project first),
 * a project made through its form with a daily budget, its detail page with budget, keys and members (a member of
 * the account given a project role there), and the key form's project picker, whose choice the server stored.
 * Screenshots of each are written for a person to look at.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureChromium } from '../support/chromium.js';
import { ConsoleClient, strongPassword } from '../support/console-client.js';
import { expectCleanPage, mailedLink, openPage, screenshot, sidewaysTables, signUpAndVerify, startConsoleFixture, type ConsoleFixture } from '../support/console-browser.js';

const chromiumPresent = ensureChromium();
let fixture: ConsoleFixture;

beforeAll(async () => {
  if (chromiumPresent) fixture = await startConsoleFixture();
}, 300_000);

afterAll(async () => {
  await fixture?.close();
});

describe.skipIf(!chromiumPresent)('projects in the console', () => {
  it('lists, creates and shows a project with its budget, keys and members; the key form picks a project', async () => {
    const email = `projects-${randomBytes(4).toString('hex')}@example.com`;
    const watched = await openPage(fixture.browser);
    const { page } = watched;
    const consoleUrl = fixture.gateway.consoleUrl;
    const accountId = await signUpAndVerify(fixture, page, email);
    expect((await fixture.gateway.admin('POST', `/admin/accounts/${accountId}/credits`, { amount_usd: 5 })).status).toBe(200);

    await page.goto(`${consoleUrl}/projects`);
    await page.getByTestId('projects-table').getByText('Keys without a project').waitFor();
    await page.getByRole('button', { name: 'New project' }).click();
    const form = page.getByRole('dialog', { name: 'New project' });
    await form.getByLabel('Name', { exact: true }).fill('Search team');
    await form.getByLabel('Budget period').selectOption('day');
    await form.getByLabel('Budget limit (USD)').fill('2.5');
    await form.getByLabel('Requests per minute').fill('120');
    await screenshot(fixture, page, 'projects-create');
    await form.getByRole('button', { name: 'Create project' }).click();
    await page.getByRole('link', { name: 'Search team' }).waitFor();
    const projects = (await fixture.gateway.admin<{ data: Array<{ id: string; name: string; budget: { limit_usd: number; period: string } | null; rpm: number | null }> }>('GET', `/admin/accounts/${accountId}/projects`)).body.data;
    const made = projects.find((project) => project.name === 'Search team');
    expect(made).toMatchObject({ budget: { limit_usd: 2.5, period: 'day' }, rpm: 120 });
    const projectId = made?.id ?? '';

    // A key made in the project through the key form's picker.
    await page.goto(`${consoleUrl}/keys`);
    await page.getByRole('button', { name: 'Create key' }).click();
    const keyForm = page.getByRole('dialog', { name: 'Create an API key' });
    await keyForm.getByLabel('Name', { exact: true }).fill('search backend');
    await keyForm.getByLabel('Project').selectOption(projectId);
    await keyForm.getByText('The project\'s budget, limits and allowed models apply').waitFor();
    await screenshot(fixture, page, 'keys-create-project-picker');
    await keyForm.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('button', { name: 'I have copied the key' }).click();
    await page.getByText('Project: Search team').waitFor();
    await screenshot(fixture, page, 'keys-list-with-project');
    const keys = (await fixture.gateway.admin<{ data: Array<{ name: string; project_id: string | null }> }>('GET', `/admin/accounts/${accountId}/keys`)).body.data;
    expect(keys.find((key) => key.name === 'search backend')?.project_id).toBe(projectId);

    // A member of the account, given a role in the project on its page.
    const memberEmail = `member-${randomBytes(4).toString('hex')}@example.com`;
    await page.goto(`${consoleUrl}/members`);
    await page.getByLabel('Email').fill(memberEmail);
    await page.getByLabel('Role', { exact: true }).selectOption('developer');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    const link = await mailedLink(fixture.smtp, memberEmail, 'invitation');
    const token = new URL(link).searchParams.get('token') ?? '';
    const member = new ConsoleClient(consoleUrl);
    expect((await member.request('POST', '/api/invitations/accept', { token, password: strongPassword() })).status).toBe(200);

    await page.goto(`${consoleUrl}/projects/${projectId}`);
    await page.getByTestId('project-budget').waitFor();
    await page.getByLabel('Member', { exact: true }).selectOption({ label: `${memberEmail} (developer)` });
    await page.getByLabel('Project role', { exact: true }).selectOption('viewer');
    await page.getByRole('button', { name: 'Add to project' }).click();
    await page.getByTestId('project-members-table').getByRole('rowheader', { name: memberEmail }).waitFor();
    await page.getByTestId('project-keys-table').getByText('search backend').waitFor();
    await page.evaluate('window.scrollTo(0, 0)');
    await screenshot(fixture, page, 'project-detail');
    await page.screenshot({ path: `${fixture.screenshots}/project-detail-full.png`, fullPage: true });
    // The member now sees only this project.
    const seen = await member.request<{ data: Array<{ id: string; your_role: string }> }>('GET', '/api/projects');
    expect(seen.body.data.map((project) => [project.id, project.your_role])).toEqual([[projectId, 'viewer']]);

    await page.goto(`${consoleUrl}/projects`);
    await page.getByRole('link', { name: 'Search team' }).waitFor();
    await screenshot(fixture, page, 'projects-list');
    expectCleanPage(watched);
    await watched.context.close();

    // At phone width every table turns into cards that fit.
    const phone = await openPage(fixture.browser, { width: 390, height: 844 });
    await phone.context.addCookies(await page.context().cookies().catch(() => []));
    await phone.page.goto(`${consoleUrl}/sign-in`);
    await phone.page.getByLabel('Email').fill(email);
    await phone.page.getByLabel('Password').fill('correct horse battery staple 42');
    await phone.page.getByRole('button', { name: 'Sign in' }).click();
    await phone.page.waitForURL('**/keys');
    await phone.page.goto(`${consoleUrl}/projects`);
    await phone.page.getByRole('link', { name: 'Search team' }).waitFor();
    await screenshot(fixture, phone.page, 'projects-list-390');
    expect(await sidewaysTables(phone.page)).toEqual([]);
    await phone.page.goto(`${consoleUrl}/projects/${projectId}`);
    await phone.page.getByTestId('project-members-table').getByRole('rowheader', { name: memberEmail }).waitFor();
    await screenshot(fixture, phone.page, 'project-detail-390');
    await phone.page.screenshot({ path: `${fixture.screenshots}/project-detail-390-full.png`, fullPage: true });
    expect(await sidewaysTables(phone.page)).toEqual([]);
    expectCleanPage(phone);
    await phone.context.close();
  }, 180_000);
});
