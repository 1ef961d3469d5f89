/**
 * Guardrail policies bound to projects, over real HTTP with the OpenAI SDK against the mock upstream (which echoes
 * the last user text): the admin API's and the console's `guardrails` on a project run on the requests of that
 * project's keys, together with the account's, key's and model's, and not on another project's keys of the same
 * account; a PATCH that removes them stops them on the next request; unknown names, policies not offered to accounts
 * and other accounts' projects are refused with nothing changed; a member scoped to one project cannot change the
 * guardrails of another; a deleted project's binding goes with it. Runs on PostgreSQL when TEST_DATABASE_URL names one.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel } from '../../support/gateway-harness.js';
import { linkToken, strongPassword, uniqueEmail, waitForMail, type ConsoleClient } from '../../support/console-client.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { signUpUser, startConsoleGateway, type ConsoleGateway, type SignedUpUser } from '../console/console-gateway.js';

const MODEL = 'chat-openai';
const CARD = '4111 1111 1111 1111';

let setup: ConsoleGateway;
let upstream: MockOpenAIUpstream;
let owner: SignedUpUser;
let stranger: SignedUpUser;

interface ProjectJson { id: string; guardrails: string[] }
interface ErrorJson { error: { code: string; param?: string; message: string } }

beforeAll(async () => {
  upstream = await startMockOpenAIUpstream();
  setup = await startConsoleGateway();
  const { gateway } = setup;
  await addRoutedModel(gateway, { model: MODEL, channel: { name: 'o', type: 'openai', base_url: upstream.url, api_key: 'sk-upstream-test', models: { [MODEL]: 'gpt-4o-mini' } } });
  await gateway.gateway.services.catalog.reload();
  for (const policy of [
    { name: 'cards', kind: 'pii', mode: 'mask', applies_to: 'input', settings: { detectors: ['card'] }, accounts_may_use: true },
    { name: 'no-zanzibar', kind: 'deny_list', mode: 'block', applies_to: 'input', settings: { words: ['zanzibar'] }, accounts_may_use: true },
    { name: 'operator-heron', kind: 'deny_list', mode: 'block', applies_to: 'input', settings: { words: ['heron'] } },
    { name: 'account-log', kind: 'pii', mode: 'log', applies_to: 'input', settings: { detectors: ['email'] } },
  ]) {
    const created = await gateway.admin('POST', '/admin/guardrails', policy);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  }
  owner = await signUpUser(setup);
  stranger = await signUpUser(setup);
  for (const user of [owner, stranger]) expect((await gateway.admin('POST', `/admin/accounts/${user.accountId}/credits`, { amount_usd: 10 })).status).toBe(200);
}, 90_000);

afterAll(async () => {
  await setup?.close();
  await upstream?.close();
});

async function adminProject(accountId: string, body: Record<string, unknown>): Promise<ProjectJson> {
  const made = await setup.gateway.admin<ProjectJson>('POST', `/admin/accounts/${accountId}/projects`, body);
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  return made.body;
}

async function adminKey(accountId: string, projectId: string | null, extra: Record<string, unknown> = {}): Promise<OpenAI> {
  const made = await setup.gateway.admin<{ key: string }>('POST', `/admin/accounts/${accountId}/keys`, { name: `key ${projectId ?? 'default'}`, ...(projectId === null ? {} : { project_id: projectId }), ...extra });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  return new OpenAI({ apiKey: made.body.key, baseURL: `${setup.gateway.url}/v1`, maxRetries: 0 });
}

/** The request's answer, or the API error it was refused with. */
async function ask(client: OpenAI, text: string): Promise<{ answer: string; header: string | null } | InstanceType<typeof OpenAI.APIError>> {
  try {
    const { data, response } = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: text }] }).withResponse();
    return { answer: data.choices[0]?.message.content ?? '', header: response.headers.get('x-gateway-guardrails') };
  } catch (error) {
    if (error instanceof OpenAI.APIError) return error;
    throw error;
  }
}

const lastUpstreamBody = (): string => JSON.stringify(upstream.requests.at(-1)?.body ?? null);

function expectBlocked(result: Awaited<ReturnType<typeof ask>>, policy: string): void {
  expect(result).toBeInstanceOf(OpenAI.APIError);
  const error = result as InstanceType<typeof OpenAI.APIError>;
  expect(error.status).toBe(400);
  expect(error.code).toBe('guardrail_blocked');
  expect(error.message).toContain(policy);
}

describe('guardrails on projects through the admin API', () => {
  it('runs a project\'s policies on its keys only, with the account\'s and key\'s, and stops them when removed', async () => {
    const guarded = await adminProject(owner.accountId, { name: 'guarded', guardrails: ['cards', 'no-zanzibar', 'cards'] });
    expect(guarded.guardrails).toEqual(['cards', 'no-zanzibar']);
    const open = await adminProject(owner.accountId, { name: 'open' });
    expect(open.guardrails).toEqual([]);
    const read = await setup.gateway.admin<ProjectJson>('GET', `/admin/accounts/${owner.accountId}/projects/${guarded.id}`);
    expect(read.body.guardrails).toEqual(['cards', 'no-zanzibar']);
    const listed = await setup.gateway.admin<{ data: ProjectJson[] }>('GET', `/admin/accounts/${owner.accountId}/projects`);
    expect(listed.body.data.find((project) => project.id === guarded.id)?.guardrails).toEqual(['cards', 'no-zanzibar']);
    // The policy list shows where it is bound.
    const policies = await setup.gateway.admin<{ data: Array<{ name: string; bound_to: Array<{ scope: string; id: string }> }> }>('GET', '/admin/guardrails');
    expect(policies.body.data.find((policy) => policy.name === 'cards')?.bound_to).toContainEqual(expect.objectContaining({ scope: 'project', id: guarded.id, name: 'guarded', account_id: owner.accountId }));

    const inGuarded = await adminKey(owner.accountId, guarded.id);
    const inOpen = await adminKey(owner.accountId, open.id);
    const inDefault = await adminKey(owner.accountId, null);

    const before = upstream.requests.length;
    expectBlocked(await ask(inGuarded, 'tell me about Zanzibar'), 'no-zanzibar');
    expect(upstream.requests.length).toBe(before);
    const masked = await ask(inGuarded, `my card is ${CARD}`);
    expect(masked).not.toBeInstanceOf(Error);
    expect(lastUpstreamBody()).not.toContain(CARD);
    expect(lastUpstreamBody()).toContain('[CARD]');
    expect((masked as { header: string | null }).header).toContain('cards');

    for (const client of [inOpen, inDefault]) {
      const passed = await ask(client, `Zanzibar and ${CARD}`);
      expect(passed).not.toBeInstanceOf(Error);
      expect((passed as { answer: string }).answer).toContain('Zanzibar');
      expect(lastUpstreamBody()).toContain(CARD);
    }

    // The account's and the key's policies run beside the project's; a name bound at two levels runs once.
    expect((await setup.gateway.admin('PATCH', `/admin/accounts/${owner.accountId}`, { guardrails: ['account-log', 'cards'] })).status).toBe(200);
    const withKeyPolicy = await adminKey(owner.accountId, guarded.id, { guardrails: ['operator-heron'] });
    // Every binding named as the operator knows it: the account by its email, the key by its name and its account's.
    const bound = (await setup.gateway.admin<{ data: Array<{ name: string; bound_to: Array<Record<string, unknown>> }> }>('GET', '/admin/guardrails')).body.data;
    expect(bound.find((policy) => policy.name === 'cards')?.bound_to).toEqual(expect.arrayContaining([
      { scope: 'account', id: owner.accountId, name: owner.email },
      expect.objectContaining({ scope: 'project', id: guarded.id, name: 'guarded', account_id: owner.accountId, account_email: owner.email }),
    ]));
    expect(bound.find((policy) => policy.name === 'operator-heron')?.bound_to).toEqual([expect.objectContaining({ scope: 'key', name: `key ${guarded.id}`, account_id: owner.accountId, account_email: owner.email })]);
    expectBlocked(await ask(withKeyPolicy, 'a heron'), 'operator-heron');
    expectBlocked(await ask(withKeyPolicy, 'to Zanzibar'), 'no-zanzibar');
    const both = await ask(withKeyPolicy, `mail a@b.example, card ${CARD}`);
    const header = (both as { header: string | null }).header ?? '';
    expect(header).toContain('account-log');
    expect(header.match(/cards/g)?.length).toBe(1);
    // The account's card masking now reaches the open project too.
    await ask(inOpen, `card ${CARD}`);
    expect(lastUpstreamBody()).not.toContain(CARD);
    expect((await setup.gateway.admin('PATCH', `/admin/accounts/${owner.accountId}`, { guardrails: [] })).status).toBe(200);

    const removed = await setup.gateway.admin<ProjectJson>('PATCH', `/admin/accounts/${owner.accountId}/projects/${guarded.id}`, { guardrails: ['cards'] });
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    expect(removed.body.guardrails).toEqual(['cards']);
    const afterRemove = await ask(inGuarded, 'tell me about Zanzibar');
    expect((afterRemove as { answer: string }).answer).toContain('Zanzibar');
    // A change that leaves guardrails out keeps them.
    const renamed = await setup.gateway.admin<ProjectJson>('PATCH', `/admin/accounts/${owner.accountId}/projects/${guarded.id}`, { name: 'guarded renamed' });
    expect(renamed.body.guardrails).toEqual(['cards']);
    const cleared = await setup.gateway.admin<ProjectJson>('PATCH', `/admin/accounts/${owner.accountId}/projects/${guarded.id}`, { guardrails: null });
    expect(cleared.body.guardrails).toEqual([]);
    await ask(inGuarded, `card ${CARD}`);
    expect(lastUpstreamBody()).toContain(CARD);
  });

  it('refuses unknown names and other accounts\' projects, with nothing changed', async () => {
    const project = await adminProject(owner.accountId, { name: 'refusals', guardrails: ['cards'] });
    const unknown = await setup.gateway.admin<ErrorJson>('POST', `/admin/accounts/${owner.accountId}/projects`, { name: 'never made', guardrails: ['no-such-policy'] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: 'bad_request', param: 'guardrails' });
    expect(unknown.body.error.message).toContain('no-such-policy');
    const malformed = await setup.gateway.admin<ErrorJson>('POST', `/admin/accounts/${owner.accountId}/projects`, { name: 'never made', guardrails: 'cards' });
    expect(malformed.status).toBe(400);
    const names = (await setup.gateway.admin<{ data: Array<{ name: string }> }>('GET', `/admin/accounts/${owner.accountId}/projects`)).body.data.map((listed) => listed.name);
    expect(names).not.toContain('never made');

    const unknownPatch = await setup.gateway.admin<ErrorJson>('PATCH', `/admin/accounts/${owner.accountId}/projects/${project.id}`, { guardrails: ['cards', 'no-such-policy'] });
    expect(unknownPatch.status).toBe(400);
    expect(unknownPatch.body.error.param).toBe('guardrails');
    // Another account's id in the path: not found, and the project keeps its policies.
    const foreign = await setup.gateway.admin<ErrorJson>('PATCH', `/admin/accounts/${stranger.accountId}/projects/${project.id}`, { guardrails: [] });
    expect(foreign.status).toBe(404);
    const defaultProject = await setup.gateway.admin<ErrorJson>('PATCH', `/admin/accounts/${owner.accountId}/projects/default`, { guardrails: ['cards'] });
    expect(defaultProject.status).toBe(404);
    expect((await setup.gateway.admin<ProjectJson>('GET', `/admin/accounts/${owner.accountId}/projects/${project.id}`)).body.guardrails).toEqual(['cards']);

    // A policy bound to a project cannot be deleted; deleting the project releases it.
    const policies = await setup.gateway.admin<{ data: Array<{ id: string; name: string }> }>('GET', '/admin/guardrails');
    const temporary = await setup.gateway.admin<{ id: string }>('POST', '/admin/guardrails', { name: 'temporary', kind: 'pii', mode: 'log', applies_to: 'input' });
    const holder = await adminProject(owner.accountId, { name: 'holder', guardrails: ['temporary'] });
    const busy = await setup.gateway.admin<ErrorJson>('DELETE', `/admin/guardrails/${temporary.body.id}`);
    expect(busy.status).toBe(409);
    expect(busy.body.error.message).toContain(`project '${holder.id}'`);
    expect((await setup.gateway.admin('DELETE', `/admin/accounts/${owner.accountId}/projects/${holder.id}`)).status).toBe(200);
    expect((await setup.gateway.admin('DELETE', `/admin/guardrails/${temporary.body.id}`)).status).toBe(200);
    expect(policies.body.data.length).toBeGreaterThan(0);
  });

  it('follows a key moved between projects: the policies of the project it is in now', async () => {
    const guarded = await adminProject(owner.accountId, { name: 'moves from', guardrails: ['no-zanzibar'] });
    const open = await adminProject(owner.accountId, { name: 'moves to' });
    const made = await setup.gateway.admin<{ id: string; key: string }>('POST', `/admin/accounts/${owner.accountId}/keys`, { name: 'mover', project_id: guarded.id });
    const client = new OpenAI({ apiKey: made.body.key, baseURL: `${setup.gateway.url}/v1`, maxRetries: 0 });
    expectBlocked(await ask(client, 'Zanzibar'), 'no-zanzibar');
    expect((await setup.gateway.admin('PATCH', `/admin/keys/${made.body.id}`, { project_id: open.id })).status).toBe(200);
    expect((await ask(client, 'Zanzibar')) as { answer: string }).toMatchObject({ answer: expect.stringContaining('Zanzibar') });
    expect((await setup.gateway.admin('PATCH', `/admin/keys/${made.body.id}`, { project_id: guarded.id })).status).toBe(200);
    expectBlocked(await ask(client, 'Zanzibar'), 'no-zanzibar');
  });

  it('follows a policy\'s rename into the project', async () => {
    const made = await setup.gateway.admin<{ id: string }>('POST', '/admin/guardrails', { name: 'to-rename', kind: 'deny_list', mode: 'block', applies_to: 'input', settings: { words: ['osprey'] } });
    const project = await adminProject(owner.accountId, { name: 'renames', guardrails: ['to-rename'] });
    const client = await adminKey(owner.accountId, project.id);
    expectBlocked(await ask(client, 'an osprey'), 'to-rename');
    expect((await setup.gateway.admin('PATCH', `/admin/guardrails/${made.body.id}`, { name: 'renamed-policy' })).status).toBe(200);
    expect((await setup.gateway.admin<ProjectJson>('GET', `/admin/accounts/${owner.accountId}/projects/${project.id}`)).body.guardrails).toEqual(['renamed-policy']);
    expectBlocked(await ask(client, 'an osprey'), 'renamed-policy');
  });
});

async function inviteAndAccept(role: 'developer' | 'viewer'): Promise<{ client: ConsoleClient; userId: string }> {
  const email = uniqueEmail(role);
  expect((await owner.client.request('POST', '/api/members/invitations', { email, role })).status).toBe(201);
  const token = linkToken(await waitForMail(setup.mail, email, /invited you/i));
  const client = setup.client();
  const accepted = await client.request<{ user: { id: string } }>('POST', '/api/invitations/accept', { token, password: strongPassword() });
  expect(accepted.status, accepted.text).toBe(200);
  return { client, userId: accepted.body.user.id };
}

describe('guardrails on projects in the console', () => {
  it('lets the owner attach offered policies, which run on the project\'s keys only', async () => {
    const made = await owner.client.request<{ project: ProjectJson }>('POST', '/api/projects', { name: 'console guarded', guardrails: ['no-zanzibar'] });
    expect(made.status, made.text).toBe(201);
    expect(made.body.project.guardrails).toEqual(['no-zanzibar']);
    const other = await owner.client.request<{ project: ProjectJson }>('POST', '/api/projects', { name: 'console open' });
    const keyOf = async (projectId: string): Promise<OpenAI> => {
      const key = await owner.client.request<{ secret: string }>('POST', '/api/keys', { name: `in ${projectId}`, project_id: projectId });
      expect(key.status, key.text).toBe(201);
      return new OpenAI({ apiKey: key.body.secret, baseURL: `${setup.gateway.url}/v1`, maxRetries: 0 });
    };
    const guardedKey = await keyOf(made.body.project.id);
    const openKey = await keyOf(other.body.project.id);
    expectBlocked(await ask(guardedKey, 'Zanzibar'), 'no-zanzibar');
    expect((await ask(openKey, 'Zanzibar')) as { answer: string }).toMatchObject({ answer: expect.stringContaining('Zanzibar') });

    const listed = await owner.client.request<{ data: ProjectJson[] }>('GET', '/api/projects');
    expect(listed.body.data.find((project) => project.id === made.body.project.id)?.guardrails).toEqual(['no-zanzibar']);
    expect(listed.body.data[0]?.guardrails).toEqual([]);

    const changed = await owner.client.request<{ project: ProjectJson }>('PATCH', `/api/projects/${made.body.project.id}`, { guardrails: ['cards'] });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body.project.guardrails).toEqual(['cards']);
    expect((await ask(guardedKey, 'Zanzibar')) as { answer: string }).toMatchObject({ answer: expect.stringContaining('Zanzibar') });
    await ask(guardedKey, `card ${CARD}`);
    expect(lastUpstreamBody()).not.toContain(CARD);
  });

  it('refuses policies not offered, unknown names and other accounts\' projects', async () => {
    const made = await owner.client.request<{ project: ProjectJson }>('POST', '/api/projects', { name: 'console refusals', guardrails: ['cards'] });
    for (const name of ['operator-heron', 'no-such-policy']) {
      const onCreate = await owner.client.request<ErrorJson>('POST', '/api/projects', { name: `with ${name}`, guardrails: [name] });
      expect(onCreate.status, onCreate.text).toBe(400);
      expect(onCreate.body.error).toMatchObject({ code: 'bad_request', param: 'guardrails' });
      const onEdit = await owner.client.request<ErrorJson>('PATCH', `/api/projects/${made.body.project.id}`, { guardrails: ['cards', name] });
      expect(onEdit.status, onEdit.text).toBe(400);
      expect(onEdit.body.error.param).toBe('guardrails');
    }
    const foreign = await stranger.client.request<ErrorJson>('PATCH', `/api/projects/${made.body.project.id}`, { guardrails: [] });
    expect(foreign.status).toBe(404);
    expect((await owner.client.request<{ project: ProjectJson }>('GET', `/api/projects/${made.body.project.id}`)).body.project.guardrails).toEqual(['cards']);
    const names = (await owner.client.request<{ data: Array<{ name: string }> }>('GET', '/api/projects')).body.data.map((listed) => listed.name);
    expect(names.filter((name) => name.startsWith('with '))).toEqual([]);
  });

  it('keeps a policy the operator put on the project, and lets no project member change another project\'s', async () => {
    const mine = await owner.client.request<{ project: ProjectJson }>('POST', '/api/projects', { name: 'developer home' });
    const theirs = await owner.client.request<{ project: ProjectJson }>('POST', '/api/projects', { name: 'not the developer\'s', guardrails: ['no-zanzibar'] });
    expect((await setup.gateway.admin('PATCH', `/admin/accounts/${owner.accountId}/projects/${theirs.body.project.id}`, { guardrails: ['operator-heron', 'no-zanzibar'] })).status).toBe(200);
    // The operator's policy stays when the owner edits the list; it is sent back as read.
    const kept = await owner.client.request<{ project: ProjectJson }>('PATCH', `/api/projects/${theirs.body.project.id}`, { guardrails: [] });
    expect(kept.status, kept.text).toBe(200);
    expect(kept.body.project.guardrails).toEqual(['operator-heron']);
    const back = await owner.client.request<{ project: ProjectJson }>('PATCH', `/api/projects/${theirs.body.project.id}`, { guardrails: ['operator-heron', 'no-zanzibar'] });
    expect(back.body.project.guardrails).toEqual(['operator-heron', 'no-zanzibar']);

    const developer = await inviteAndAccept('developer');
    expect((await owner.client.request('PUT', `/api/projects/${mine.body.project.id}/members/${developer.userId}`, { role: 'developer' })).status).toBe(200);
    for (const id of [theirs.body.project.id, mine.body.project.id]) {
      const change = await developer.client.request<ErrorJson>('PATCH', `/api/projects/${id}`, { guardrails: [] });
      expect([403, 404]).toContain(change.status);
    }
    const unchanged = await owner.client.request<{ project: ProjectJson }>('GET', `/api/projects/${theirs.body.project.id}`);
    expect(unchanged.body.project.guardrails).toEqual(['operator-heron', 'no-zanzibar']);
    // The developer reads the policies of their own project.
    const seen = await developer.client.request<{ project: ProjectJson }>('GET', `/api/projects/${mine.body.project.id}`);
    expect(seen.status).toBe(200);
    expect(seen.body.project.guardrails).toEqual([]);
  });
});
