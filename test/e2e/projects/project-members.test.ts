/**
 * Project members over real HTTP (console API, SQLite or PostgreSQL with TEST_DATABASE_URL): an owner makes projects
 * and gives account members a role inside one; such a member sees only that project's keys and usage on every console
 * route that returns keys, usage or key-scoped data (each enumerated below and attacked with the ids of other projects,
 * of the default project and of another account), may change keys only as a project developer, and reaches nothing of
 * the account's billing, members, webhooks or playground. Members without a project role keep the whole account.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AccountRole } from '../../../src/storage/repositories/console-repository.js';
import { addRoutedModel } from '../../support/gateway-harness.js';
import { type ConsoleClient, linkToken, strongPassword, uniqueEmail, waitForMail } from '../../support/console-client.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { signUpUser, startConsoleGateway, type ConsoleGateway, type SignedUpUser } from '../console/console-gateway.js';

const MODEL = 'project-console-model';

let setup: ConsoleGateway;
let upstream: MockOpenAIUpstream;
let owner: SignedUpUser;
let stranger: SignedUpUser;

interface KeyJson { id: string; project_id: string | null; name: string }
interface ProjectJson { id: string; name: string; default: boolean; your_role: string | null; spent_usd: number; budget: { limit_usd: number } | null }

const ids = { projectA: '', projectB: '', strangerProject: '', keyA: '', keyB: '', keyDefault: '', strangerKey: '' };
let viewer: { client: ConsoleClient; userId: string };
let developer: { client: ConsoleClient; userId: string };
let plainViewer: { client: ConsoleClient; userId: string };

async function inviteAndAccept(role: AccountRole): Promise<{ client: ConsoleClient; userId: string }> {
  const email = uniqueEmail(role);
  const invited = await owner.client.request('POST', '/api/members/invitations', { email, role });
  expect(invited.status, invited.text).toBe(201);
  const token = linkToken(await waitForMail(setup.mail, email, /invited you/i));
  const client = setup.client();
  const accepted = await client.request<{ user: { id: string } }>('POST', '/api/invitations/accept', { token, password: strongPassword() });
  expect(accepted.status, accepted.text).toBe(200);
  return { client, userId: accepted.body.user.id };
}

async function call(secret: string): Promise<void> {
  const client = new OpenAI({ baseURL: setup.gateway.baseURL, apiKey: secret, maxRetries: 0 });
  await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hello' }], max_tokens: 5 });
}

async function project(user: SignedUpUser, body: Record<string, unknown>): Promise<string> {
  const made = await user.client.request<{ project: ProjectJson }>('POST', '/api/projects', body);
  expect(made.status, made.text).toBe(201);
  return made.body.project.id;
}

async function key(user: SignedUpUser, body: Record<string, unknown>): Promise<{ id: string; secret: string }> {
  const made = await user.client.request<{ key: KeyJson; secret: string }>('POST', '/api/keys', body);
  expect(made.status, made.text).toBe(201);
  return { id: made.body.key.id, secret: made.body.secret };
}

beforeAll(async () => {
  upstream = await startMockOpenAIUpstream();
  setup = await startConsoleGateway();
  await addRoutedModel(setup.gateway, {
    model: MODEL,
    pricing: { input_per_mtok: 2, output_per_mtok: 8 },
    channel: { name: 'openai-projects', type: 'openai', base_url: upstream.url, api_key: 'sk-upstream-test', models: { [MODEL]: 'gpt-4o-mini' } },
  });
  owner = await signUpUser(setup);
  stranger = await signUpUser(setup);
  for (const user of [owner, stranger]) expect((await setup.gateway.admin('POST', `/admin/accounts/${user.accountId}/credits`, { amount_usd: 5 })).status).toBe(200);

  ids.projectA = await project(owner, { name: 'Alpha', budget: { period: 'month', limit_usd: 2 } });
  ids.projectB = await project(owner, { name: 'Beta' });
  ids.strangerProject = await project(stranger, { name: 'Theirs' });
  const keyA = await key(owner, { name: 'alpha key', project_id: ids.projectA, quota_usd: 1 });
  const keyB = await key(owner, { name: 'beta key', project_id: ids.projectB, quota_usd: 1 });
  const keyDefault = await key(owner, { name: 'default key', quota_usd: 1 });
  const strangerKey = await key(stranger, { name: 'their key', project_id: ids.strangerProject });
  Object.assign(ids, { keyA: keyA.id, keyB: keyB.id, keyDefault: keyDefault.id, strangerKey: strangerKey.id });
  // One request of each key, so every usage route has rows of every project.
  for (const secret of [keyA.secret, keyB.secret, keyDefault.secret, strangerKey.secret]) await call(secret);

  viewer = await inviteAndAccept('viewer');
  developer = await inviteAndAccept('developer');
  plainViewer = await inviteAndAccept('viewer');
  for (const [member, role] of [[viewer, 'viewer'], [developer, 'developer']] as const) {
    const added = await owner.client.request('PUT', `/api/projects/${ids.projectA}/members/${member.userId}`, { role });
    expect(added.status, added.text).toBe(200);
  }
}, 60_000);

afterAll(async () => {
  await setup?.close();
  await upstream?.close();
});

describe('a member scoped to a project', () => {
  const foreignKeys = (): string[] => [ids.keyB, ids.keyDefault, ids.strangerKey];

  it('lists, reads and finds only the project\'s keys (GET /api/keys, GET /api/keys/:id)', async () => {
    for (const member of [viewer, developer]) {
      const listed = await member.client.request<{ data: KeyJson[] }>('GET', '/api/keys');
      expect(listed.status).toBe(200);
      expect(listed.body.data.every((item) => item.project_id === ids.projectA)).toBe(true);
      expect(listed.body.data.map((item) => item.id)).toContain(ids.keyA);
      expect((await member.client.request('GET', `/api/keys/${ids.keyA}`)).status).toBe(200);
      for (const id of foreignKeys()) expect((await member.client.request('GET', `/api/keys/${id}`)).status).toBe(404);
    }
  });

  it('sees only the project\'s usage (GET /api/usage, /api/usage.csv, /api/usage/daily, /api/overview)', async () => {
    const rows = await viewer.client.request<{ data: Array<{ key_id: string }> }>('GET', '/api/usage');
    expect(rows.status).toBe(200);
    expect(rows.body.data.map((row) => row.key_id)).toEqual([ids.keyA]);
    for (const id of foreignKeys()) {
      const filtered = await viewer.client.request<{ data: unknown[] }>('GET', `/api/usage?key_id=${id}`);
      expect([filtered.status, filtered.body.data]).toEqual([200, []]);
    }
    const csv = await viewer.client.request('GET', '/api/usage.csv');
    expect(csv.status).toBe(200);
    expect(csv.text).toContain(ids.keyA);
    for (const id of foreignKeys()) expect(csv.text).not.toContain(id);
    const daily = await viewer.client.request<{ data: Array<{ key_id: string; requests: number }> }>('GET', '/api/usage/daily');
    expect(daily.body.data.map((row) => row.key_id)).toEqual([ids.keyA]);
    const overview = await viewer.client.request<{ requests_today: number }>('GET', '/api/overview');
    expect(overview.body.requests_today).toBe(1);
    const ownerOverview = await owner.client.request<{ requests_today: number }>('GET', '/api/overview');
    expect(ownerOverview.body.requests_today).toBe(3);
  });

  it('sees only the project\'s keys on the models and alerts pages (GET /api/models, /api/console/alerts)', async () => {
    const models = await viewer.client.request<{ data: Array<{ id: string; keys: Array<{ id: string }> }> }>('GET', '/api/models');
    const listedKeys = models.body.data.flatMap((model) => model.keys.map((item) => item.id));
    expect(listedKeys).toContain(ids.keyA);
    for (const id of foreignKeys()) expect(listedKeys).not.toContain(id);
    for (const id of foreignKeys()) expect((await viewer.client.request('GET', `/api/models?key_id=${id}`)).status).toBe(404);
    const alerts = await viewer.client.request<{ keys: Array<{ key_id: string }> }>('GET', '/api/console/alerts');
    expect(alerts.status).toBe(200);
    expect(alerts.body.keys.map((item) => item.key_id)).toEqual([ids.keyA]);
  });

  it('sees only its project (GET /api/projects, /api/projects/:id) and none of the account\'s members', async () => {
    const listed = await viewer.client.request<{ data: ProjectJson[] }>('GET', '/api/projects');
    expect(listed.body.data.map((item) => [item.id, item.your_role])).toEqual([[ids.projectA, 'viewer']]);
    expect((await viewer.client.request('GET', `/api/projects/${ids.projectA}`)).status).toBe(200);
    for (const id of [ids.projectB, 'default', ids.strangerProject, 'prj_nonexistent']) expect((await viewer.client.request('GET', `/api/projects/${id}`)).status).toBe(404);
    expect((await viewer.client.request('GET', `/api/projects/${ids.projectA}/members`)).status).toBe(403);
    expect((await viewer.client.request('GET', '/api/members')).status).toBe(403);
  });

  it('reaches nothing else of the account: transactions, billing, webhooks, playground, project changes, end customers, reports', async () => {
    for (const member of [viewer, developer]) {
      for (const [method, path] of [
        ['GET', '/api/console/transactions'], ['GET', '/api/console/transactions.csv'], ['GET', '/api/console/billing'], ['GET', '/api/console/billing/invoices'],
        ['GET', '/api/console/webhooks'], ['POST', '/api/playground/chat'], ['POST', '/api/projects'], ['PATCH', `/api/projects/${ids.projectA}`],
        ['DELETE', `/api/projects/${ids.projectA}`], ['PUT', `/api/projects/${ids.projectA}/members/${member.userId}`],
        // End customers and the reports by customer, tag and key are the whole account's.
        ['GET', '/api/customer-rules'], ['PUT', '/api/customer-rules'], ['DELETE', '/api/customer-rules'],
        ['GET', '/api/reports/customers'], ['GET', '/api/reports/tags'], ['GET', '/api/reports/keys'], ['GET', '/api/reports/keys?format=csv'],
      ] as const) {
        const answer = await member.client.request(method, path, method === 'GET' ? undefined : { name: 'x', role: 'developer' });
        expect([path, answer.status]).toEqual([path, 403]);
      }
    }
  });

  it('as a viewer changes no key; as a developer changes and makes keys of its project only', async () => {
    expect((await viewer.client.request('POST', '/api/keys', { project_id: ids.projectA })).status).toBe(403);
    expect((await viewer.client.request('PATCH', `/api/keys/${ids.keyA}`, { name: 'renamed' })).status).toBe(403);
    expect((await viewer.client.request('POST', `/api/keys/${ids.keyA}/revoke`)).status).toBe(403);

    for (const projectId of [undefined, 'default', ids.projectB, ids.strangerProject]) {
      const made = await developer.client.request('POST', '/api/keys', projectId === undefined ? { name: 'x' } : { name: 'x', project_id: projectId });
      expect([projectId, made.status]).toEqual([projectId, 403]);
    }
    const made = await developer.client.request<{ key: KeyJson }>('POST', '/api/keys', { name: 'dev key', project_id: ids.projectA });
    expect([made.status, made.body.key.project_id]).toEqual([201, ids.projectA]);
    const renamed = await developer.client.request<{ key: KeyJson }>('PATCH', `/api/keys/${made.body.key.id}`, { name: 'dev key 2' });
    expect([renamed.status, renamed.body.key.name]).toEqual([200, 'dev key 2']);
    // Moving a key out of the project, or touching another project's keys, is refused.
    expect((await developer.client.request('PATCH', `/api/keys/${made.body.key.id}`, { project_id: ids.projectB })).status).toBe(403);
    expect((await developer.client.request('PATCH', `/api/keys/${made.body.key.id}`, { project_id: 'default' })).status).toBe(403);
    for (const id of foreignKeys()) {
      expect((await developer.client.request('PATCH', `/api/keys/${id}`, { name: 'stolen' })).status).toBe(404);
      expect((await developer.client.request('POST', `/api/keys/${id}/revoke`)).status).toBe(404);
    }
    expect((await developer.client.request('POST', `/api/keys/${made.body.key.id}/revoke`)).status).toBe(200);
  });

  it('loses the scope when removed from the project: the account role applies again', async () => {
    const member = await inviteAndAccept('viewer');
    expect((await owner.client.request('PUT', `/api/projects/${ids.projectB}/members/${member.userId}`, { role: 'viewer' })).status).toBe(200);
    expect((await member.client.request<{ data: KeyJson[] }>('GET', '/api/keys')).body.data.map((item) => item.id)).toEqual([ids.keyB]);
    expect((await owner.client.request('DELETE', `/api/projects/${ids.projectB}/members/${member.userId}`)).status).toBe(200);
    const all = (await member.client.request<{ data: KeyJson[] }>('GET', '/api/keys')).body.data.map((item) => item.id);
    expect(all).toEqual(expect.arrayContaining([ids.keyA, ids.keyB, ids.keyDefault]));
  });
});

describe('the owner', () => {
  it('sees every project with the default one first, and members without a project role keep the whole account', async () => {
    const listed = await owner.client.request<{ data: ProjectJson[] }>('GET', '/api/projects');
    expect(listed.body.data.map((item) => item.id)).toEqual(['default', ids.projectA, ids.projectB].sort((left, right) => (left === 'default' ? -1 : right === 'default' ? 1 : left.localeCompare(right))));
    expect(listed.body.data.find((item) => item.id === ids.projectA)?.spent_usd).toBeGreaterThan(0);
    const keys = (await plainViewer.client.request<{ data: KeyJson[] }>('GET', '/api/keys')).body.data.map((item) => item.id);
    expect(keys).toEqual(expect.arrayContaining([ids.keyA, ids.keyB, ids.keyDefault]));
    expect(keys).not.toContain(ids.strangerKey);
  });

  it('cannot reach another account\'s project or give a project role to a non-member, an owner or an admin', async () => {
    expect((await owner.client.request('GET', `/api/projects/${ids.strangerProject}`)).status).toBe(404);
    expect((await owner.client.request('PATCH', `/api/projects/${ids.strangerProject}`, { name: 'stolen' })).status).toBe(404);
    expect((await owner.client.request('DELETE', `/api/projects/${ids.strangerProject}`)).status).toBe(404);
    expect((await owner.client.request('GET', `/api/projects/${ids.strangerProject}/members`)).status).toBe(404);
    expect((await owner.client.request('PUT', `/api/projects/${ids.strangerProject}/members/${viewer.userId}`, { role: 'viewer' })).status).toBe(404);
    expect((await owner.client.request('PUT', `/api/projects/${ids.projectA}/members/${stranger.userId}`, { role: 'viewer' })).status).toBe(404);
    expect((await owner.client.request('PUT', `/api/projects/${ids.projectA}/members/${owner.userId}`, { role: 'viewer' })).status).toBe(409);
    expect((await owner.client.request('PUT', `/api/projects/${ids.projectA}/members/${viewer.userId}`, { role: 'owner' })).status).toBe(400);
    expect((await owner.client.request('POST', '/api/keys', { project_id: ids.strangerProject })).status).toBe(400);
    expect((await stranger.client.request('GET', `/api/keys/${ids.keyA}`)).status).toBe(404);
  });

  it('changes a project\'s budget, limits and allowlist and lists its members', async () => {
    const patched = await owner.client.request<{ project: ProjectJson }>('PATCH', `/api/projects/${ids.projectB}`, { budget: { period: 'day', limit_usd: 1.5 }, rpm: 60, allowed_models: [MODEL] });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.project).toMatchObject({ budget: { limit_usd: 1.5 }, rpm: 60, allowed_models: [MODEL] });
    const members = await owner.client.request<{ data: Array<{ user_id: string; role: string }> }>('GET', `/api/projects/${ids.projectA}/members`);
    expect(members.body.data.map((member) => [member.user_id, member.role])).toEqual([[viewer.userId, 'viewer'], [developer.userId, 'developer']]);
  });
});
