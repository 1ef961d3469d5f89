/**
 * Account overrides of the operator's guardrail policies, over real HTTP with the OpenAI SDK and a mock upstream: the
 * operator lets accounts relax or turn off a policy (`accounts_may_override`), an account owner sees the policies that
 * apply to the account (GET /api/guardrail-overrides) and turns one off or makes it milder for the account, a project
 * or a key; the next request runs without it (the upstream sees the card, the blocked word passes) and the
 * `x-gateway-guardrails` header and usage row say what ran. Refused: a policy the operator does not let accounts
 * change (403, and it keeps running), a mode that is not milder or not allowed (400), another account's key or project
 * (404), a viewer or developer (403), a change without the CSRF token. When the operator withdraws the allowance the
 * override stops at once. An output policy turned off for a key stops masking its streamed answers; a member scoped
 * to a project sees only its overrides. Runs on PostgreSQL when TEST_DATABASE_URL names one.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, flushWrites } from '../../support/gateway-harness.js';
import { linkToken, strongPassword, uniqueEmail, waitForMail, type ConsoleClient } from '../../support/console-client.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { signUpUser, startConsoleGateway, type ConsoleGateway, type SignedUpUser } from '../console/console-gateway.js';

const MODEL = 'chat-overrides';
const CARD = '4111 1111 1111 1111';

let setup: ConsoleGateway;
let upstream: MockOpenAIUpstream;
let owner: SignedUpUser;
let other: SignedUpUser;
const ids: Record<string, string> = {};

interface ErrorJson { error: { code: string; param?: string; message: string } }
interface OverrideJson { scope: string; id: string; mode: string; applied: boolean }
interface EntryJson { name: string; mode: string; accounts_may_override: string; allowed_modes: string[]; applies_on: { models: boolean; account: boolean; projects: string[]; keys: string[] }; overrides: OverrideJson[] }

beforeAll(async () => {
  upstream = await startMockOpenAIUpstream();
  setup = await startConsoleGateway();
  const { gateway } = setup;
  await addRoutedModel(gateway, { model: MODEL, channel: { name: 'o', type: 'openai', base_url: upstream.url, api_key: 'sk-upstream-test', models: { [MODEL]: 'gpt-4o-mini' } } });
  await gateway.gateway.services.catalog.reload();
  for (const policy of [
    // The model's default: cards masked, which accounts may turn off.
    { name: 'mask-cards', kind: 'pii', mode: 'mask', applies_to: 'input', settings: { detectors: ['card'] }, accounts_may_override: 'disable' },
    // Bound to the accounts: a blocked word accounts may only relax (to log).
    { name: 'block-zanzibar', kind: 'deny_list', mode: 'block', applies_to: 'input', settings: { words: ['zanzibar'] }, accounts_may_override: 'relax' },
    // Bound to the accounts: the operator's alone.
    { name: 'block-heron', kind: 'deny_list', mode: 'block', applies_to: 'input', settings: { words: ['heron'] } },
  ]) {
    const created = await gateway.admin<{ id: string; accounts_may_override: string }>('POST', '/admin/guardrails', policy);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.accounts_may_override).toBe(policy.accounts_may_override ?? 'none');
    ids[policy.name] = created.body.id;
  }
  expect((await gateway.admin('PATCH', `/admin/models/${MODEL}`, { guardrails: ['mask-cards'] })).status).toBe(200);
  owner = await signUpUser(setup);
  other = await signUpUser(setup);
  for (const user of [owner, other]) {
    expect((await gateway.admin('POST', `/admin/accounts/${user.accountId}/credits`, { amount_usd: 10 })).status).toBe(200);
    expect((await gateway.admin('PATCH', `/admin/accounts/${user.accountId}`, { guardrails: ['block-zanzibar', 'block-heron'] })).status).toBe(200);
  }
  await gateway.gateway.services.catalog.reload();
}, 90_000);

afterAll(async () => {
  await setup?.close();
  await upstream?.close();
});

async function newKey(user: SignedUpUser, body: Record<string, unknown> = {}): Promise<{ id: string; name: string; client: OpenAI }> {
  const name = `key ${Math.random()}`;
  const created = await user.client.request<{ key: { id: string }; secret: string }>('POST', '/api/keys', { name, ...body });
  expect(created.status, created.text).toBe(201);
  return { id: created.body.key.id, name, client: new OpenAI({ apiKey: created.body.secret, baseURL: `${setup.gateway.url}/v1`, maxRetries: 0 }) };
}

/** The answer and its guardrails header, or the API error it was refused with. */
async function ask(client: OpenAI, text: string): Promise<{ answer: string; header: string | null; requestId: string | null } | InstanceType<typeof OpenAI.APIError>> {
  try {
    const { data, response } = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: text }] }).withResponse();
    return { answer: data.choices[0]?.message.content ?? '', header: response.headers.get('x-gateway-guardrails'), requestId: response.headers.get('x-request-id') };
  } catch (error) {
    if (error instanceof OpenAI.APIError) return error;
    throw error;
  }
}

const lastUpstreamBody = (): string => JSON.stringify(upstream.requests.at(-1)?.body ?? null);

function answered(result: Awaited<ReturnType<typeof ask>>): { answer: string; header: string | null; requestId: string | null } {
  if (result instanceof OpenAI.APIError) throw new Error(`refused: ${result.status} ${result.message}`);
  return result;
}

function expectBlocked(result: Awaited<ReturnType<typeof ask>>, policy: string): void {
  expect(result).toBeInstanceOf(OpenAI.APIError);
  const error = result as InstanceType<typeof OpenAI.APIError>;
  expect(error.status).toBe(400);
  expect(error.code).toBe('guardrail_blocked');
  expect(error.message).toContain(policy);
}

async function entries(client: ConsoleClient): Promise<EntryJson[]> {
  const listed = await client.request<{ data: EntryJson[] }>('GET', '/api/guardrail-overrides');
  expect(listed.status, listed.text).toBe(200);
  return listed.body.data;
}

async function inviteMember(role: string): Promise<{ client: ConsoleClient; userId: string }> {
  const email = uniqueEmail(role);
  expect((await owner.client.request('POST', '/api/members/invitations', { email, role })).status).toBe(201);
  const token = linkToken(await waitForMail(setup.mail, email, /invited you/i));
  const client = setup.client();
  const accepted = await client.request<{ user: { id: string } }>('POST', '/api/invitations/accept', { token, password: strongPassword() });
  expect(accepted.status, accepted.text).toBe(200);
  return { client, userId: accepted.body.user.id };
}

const invite = async (role: string): Promise<ConsoleClient> => (await inviteMember(role)).client;

describe('account overrides of the operator\'s guardrail policies', () => {
  it('lists the policies that apply, with what the account may do to each, and never their settings', async () => {
    const listed = await entries(owner.client);
    expect(listed.map((entry) => entry.name)).toEqual(['block-heron', 'block-zanzibar', 'mask-cards']);
    expect(listed.find((entry) => entry.name === 'mask-cards')).toMatchObject({ accounts_may_override: 'disable', allowed_modes: ['off', 'log'], applies_on: { models: true, account: false }, overrides: [] });
    expect(listed.find((entry) => entry.name === 'block-zanzibar')).toMatchObject({ accounts_may_override: 'relax', allowed_modes: ['log', 'mask'], applies_on: { models: false, account: true } });
    expect(listed.find((entry) => entry.name === 'block-heron')).toMatchObject({ accounts_may_override: 'none', allowed_modes: [] });
    expect(JSON.stringify(listed)).not.toContain('words');
  });

  it('an allowed opt-out stops masking on the next request, the header and usage row show what ran, and clearing restores it', async () => {
    const key = await newKey(owner);
    const masked = answered(await ask(key.client, `my card is ${CARD}`));
    expect(lastUpstreamBody()).not.toContain(CARD);
    expect(masked.header).toContain('mask-cards/input=masked;1');

    const set = await owner.client.request<EntryJson>('PUT', '/api/guardrail-overrides/mask-cards', { mode: 'off' });
    expect(set.status, set.text).toBe(200);
    expect(set.body.overrides).toEqual([expect.objectContaining({ scope: 'account', id: owner.accountId, mode: 'off', applied: true })]);
    const plain = answered(await ask(key.client, `my card is ${CARD}`));
    expect(lastUpstreamBody()).toContain(CARD);
    // The account's own policies still ran; the one turned off did not.
    expect(plain.header ?? '').not.toContain('mask-cards');
    expect(plain.header).toContain('block-zanzibar/input=passed');

    // Another account is not touched by this one's override.
    const foreign = await newKey(other);
    answered(await ask(foreign.client, `my card is ${CARD}`));
    expect(lastUpstreamBody()).not.toContain(CARD);

    await flushWrites(setup.gateway);
    const usage = await setup.gateway.admin<{ data: Array<{ request_id: string | null; guardrails: Array<{ name: string; outcome: string }> }> }>('GET', `/admin/usage?account_id=${owner.accountId}&limit=50`);
    const rowOf = (requestId: string | null) => usage.body.data.find((row) => row.request_id === requestId);
    expect(rowOf(masked.requestId)?.guardrails.map((hit) => hit.name)).toContain('mask-cards');
    expect(rowOf(plain.requestId)?.guardrails.map((hit) => hit.name)).not.toContain('mask-cards');

    const cleared = await owner.client.request('DELETE', '/api/guardrail-overrides/mask-cards');
    expect(cleared.status, cleared.text).toBe(204);
    answered(await ask(key.client, `my card is ${CARD}`));
    expect(lastUpstreamBody()).not.toContain(CARD);
    const again = await owner.client.request<ErrorJson>('DELETE', '/api/guardrail-overrides/mask-cards');
    expect(again.status).toBe(404);
  });

  it('relaxes a blocking policy to log for one key only; the most specific override wins', async () => {
    const relaxed = await newKey(owner);
    const strict = await newKey(owner);
    expectBlocked(await ask(relaxed.client, 'tell me about Zanzibar'), 'block-zanzibar');
    const set = await owner.client.request<EntryJson>('PUT', '/api/guardrail-overrides/block-zanzibar', { scope: 'key', target_id: relaxed.id, mode: 'log' });
    expect(set.status, set.text).toBe(200);
    const passed = answered(await ask(relaxed.client, 'tell me about Zanzibar'));
    expect(passed.answer).toContain('Zanzibar');
    expect(passed.header).toContain('block-zanzibar/input=logged;1');
    expectBlocked(await ask(strict.client, 'tell me about Zanzibar'), 'block-zanzibar');

    // Turning it off is more than the operator allows here, and block is not milder than block.
    for (const mode of ['off', 'block', 'sideways']) {
      const refused = await owner.client.request<ErrorJson>('PUT', '/api/guardrail-overrides/block-zanzibar', { mode });
      expect(refused.status, refused.text).toBe(400);
    }
    expectBlocked(await ask(strict.client, 'tell me about Zanzibar'), 'block-zanzibar');
    expect((await owner.client.request('DELETE', `/api/guardrail-overrides/block-zanzibar?scope=key&target_id=${relaxed.id}`)).status).toBe(204);
    expectBlocked(await ask(relaxed.client, 'tell me about Zanzibar'), 'block-zanzibar');
  });

  it('refuses a policy the operator keeps, and it keeps running', async () => {
    const key = await newKey(owner);
    const refused = await owner.client.request<ErrorJson>('PUT', '/api/guardrail-overrides/block-heron', { mode: 'log' });
    expect(refused.status, refused.text).toBe(403);
    expect(refused.body.error.code).toBe('forbidden');
    const unknown = await owner.client.request<ErrorJson>('PUT', '/api/guardrail-overrides/no-such-policy', { mode: 'off' });
    expect(unknown.status).toBe(404);
    expectBlocked(await ask(key.client, 'a heron flew by'), 'block-heron');
    expect((await entries(owner.client)).find((entry) => entry.name === 'block-heron')?.overrides).toEqual([]);
  });

  it('stops an override at once when the operator withdraws the allowance, and the operator sees who overrides', async () => {
    const key = await newKey(owner);
    expect((await owner.client.request('PUT', '/api/guardrail-overrides/mask-cards', { scope: 'key', target_id: key.id, mode: 'off' })).status).toBe(200);
    answered(await ask(key.client, `card ${CARD}`));
    expect(lastUpstreamBody()).toContain(CARD);

    const policy = await setup.gateway.admin<{ overrides: Array<{ account_id: string; scope: string; id: string; mode: string; applied: boolean }> }>('GET', `/admin/guardrails/${ids['mask-cards']}`);
    // Named as the operator knows them: the account by its email, the key by its name.
    expect(policy.body.overrides).toContainEqual(expect.objectContaining({ account_id: owner.accountId, account_email: owner.email, scope: 'key', id: key.id, name: key.name, mode: 'off', applied: true }));
    const listed = await setup.gateway.admin<{ data: Array<{ name: string; overrides: unknown[] }> }>('GET', '/admin/guardrails');
    expect(listed.body.data.find((entry) => entry.name === 'mask-cards')?.overrides).toContainEqual(expect.objectContaining({ account_email: owner.email, scope: 'key', id: key.id, name: key.name }));

    // Relaxing only: turning off no longer applies, on the very next request.
    const withdrawn = await setup.gateway.admin<{ accounts_may_override: string; overrides: Array<{ applied: boolean }> }>('PATCH', `/admin/guardrails/${ids['mask-cards']}`, { accounts_may_override: 'relax' });
    expect(withdrawn.status).toBe(200);
    expect(withdrawn.body.overrides.every((override) => !override.applied)).toBe(true);
    const masked = answered(await ask(key.client, `card ${CARD}`));
    expect(lastUpstreamBody()).not.toContain(CARD);
    expect(masked.header).toContain('mask-cards/input=masked;1');
    expect((await entries(owner.client)).find((entry) => entry.name === 'mask-cards')?.overrides).toEqual([expect.objectContaining({ mode: 'off', applied: false })]);

    // Given back, the kept override applies again; 'none' stops every override.
    await setup.gateway.admin('PATCH', `/admin/guardrails/${ids['mask-cards']}`, { accounts_may_override: 'disable' });
    answered(await ask(key.client, `card ${CARD}`));
    expect(lastUpstreamBody()).toContain(CARD);
    await setup.gateway.admin('PATCH', `/admin/guardrails/${ids['mask-cards']}`, { accounts_may_override: 'none' });
    answered(await ask(key.client, `card ${CARD}`));
    expect(lastUpstreamBody()).not.toContain(CARD);
    const refused = await owner.client.request<ErrorJson>('PUT', '/api/guardrail-overrides/mask-cards', { mode: 'off' });
    expect(refused.status).toBe(403);
    await setup.gateway.admin('PATCH', `/admin/guardrails/${ids['mask-cards']}`, { accounts_may_override: 'disable' });
    expect((await owner.client.request('DELETE', `/api/guardrail-overrides/mask-cards?scope=key&target_id=${key.id}`)).status).toBe(204);
  });

  it('refuses another account\'s key and project, lower roles and a change without the CSRF token', async () => {
    const foreignKey = await newKey(other);
    const foreignProject = await other.client.request<{ project: { id: string } }>('POST', '/api/projects', { name: 'theirs' });
    expect(foreignProject.status, foreignProject.text).toBe(201);
    for (const [scope, id] of [['key', foreignKey.id], ['project', foreignProject.body.project.id], ['account', other.accountId]] as const) {
      const refused = await owner.client.request<ErrorJson>('PUT', '/api/guardrail-overrides/mask-cards', { scope, target_id: id, mode: 'off' });
      expect(refused.status, refused.text).toBe(404);
      expect((await owner.client.request('DELETE', `/api/guardrail-overrides/mask-cards?scope=${scope}&target_id=${id}`)).status).toBe(404);
    }
    // The other account's key still masks.
    answered(await ask(foreignKey.client, `card ${CARD}`));
    expect(lastUpstreamBody()).not.toContain(CARD);

    for (const role of ['developer', 'viewer']) {
      const member = await invite(role);
      expect((await entries(member)).map((entry) => entry.name)).toContain('mask-cards');
      const refused = await member.request<ErrorJson>('PUT', '/api/guardrail-overrides/mask-cards', { mode: 'off' });
      expect(refused.status, refused.text).toBe(403);
      expect((await member.request('DELETE', '/api/guardrail-overrides/mask-cards')).status).toBe(403);
    }
    const admin = await invite('admin');
    // The owner's choice, then the admin's replaces it (one override per policy and target).
    expect((await owner.client.request('PUT', '/api/guardrail-overrides/mask-cards', { mode: 'off' })).status).toBe(200);
    const bySession = await admin.request<EntryJson>('PUT', '/api/guardrail-overrides/mask-cards', { mode: 'log' });
    expect(bySession.status, bySession.text).toBe(200);
    const noToken = await admin.request<ErrorJson>('DELETE', '/api/guardrail-overrides/mask-cards', undefined, { csrf: false });
    expect(noToken.status).toBe(403);
    expect((await entries(owner.client)).find((entry) => entry.name === 'mask-cards')?.overrides).toEqual([expect.objectContaining({ scope: 'account', mode: 'log', applied: true })]);
    expect((await admin.request('DELETE', '/api/guardrail-overrides/mask-cards')).status).toBe(204);
  });

  it('overrides for a project apply to its keys and go when the project is deleted', async () => {
    const made = await owner.client.request<{ project: { id: string } }>('POST', '/api/projects', { name: 'relaxed' });
    expect(made.status, made.text).toBe(201);
    const project = { body: made.body.project };
    const inProject = await newKey(owner, { project_id: project.body.id });
    const outside = await newKey(owner);
    expect((await owner.client.request('PUT', '/api/guardrail-overrides/mask-cards', { scope: 'project', target_id: project.body.id, mode: 'off' })).status).toBe(200);
    answered(await ask(inProject.client, `card ${CARD}`));
    expect(lastUpstreamBody()).toContain(CARD);
    answered(await ask(outside.client, `card ${CARD}`));
    expect(lastUpstreamBody()).not.toContain(CARD);
    expect((await owner.client.request('POST', `/api/keys/${inProject.id}/revoke`)).status).toBe(200);
    expect((await owner.client.request('DELETE', `/api/projects/${project.body.id}`)).status).toBe(200);
    const left = (await setup.gateway.admin<{ overrides: Array<{ id: string }> }>('GET', `/admin/guardrails/${ids['mask-cards']}`)).body.overrides;
    expect(left.map((override) => override.id)).not.toContain(project.body.id);
  });

  it('shows a member scoped to a project the overrides of that project only, and lets them change none', async () => {
    const ours = (await owner.client.request<{ project: { id: string } }>('POST', '/api/projects', { name: 'ours' })).body.project;
    const theirs = (await owner.client.request<{ project: { id: string } }>('POST', '/api/projects', { name: 'not ours' })).body.project;
    for (const project of [ours, theirs]) {
      expect((await owner.client.request('PUT', '/api/guardrail-overrides/block-zanzibar', { scope: 'project', target_id: project.id, mode: 'log' })).status).toBe(200);
    }
    const developer = await inviteMember('developer');
    expect((await owner.client.request('PUT', `/api/projects/${ours.id}/members/${developer.userId}`, { role: 'developer' })).status).toBe(200);
    const seen = (await entries(developer.client)).find((entry) => entry.name === 'block-zanzibar');
    expect(seen?.overrides.map((override) => override.id)).toEqual([ours.id]);
    expect((await developer.client.request('PUT', '/api/guardrail-overrides/block-zanzibar', { scope: 'project', target_id: ours.id, mode: 'mask' })).status).toBe(403);
    for (const project of [ours, theirs]) {
      expect((await owner.client.request('DELETE', `/api/guardrail-overrides/block-zanzibar?scope=project&target_id=${project.id}`)).status).toBe(204);
    }
  });

  it('an output policy turned off for a key no longer masks its streamed answers', async () => {
    const made = await setup.gateway.admin<{ id: string }>('POST', '/admin/guardrails', { name: 'mask-cards-out', kind: 'pii', mode: 'mask', applies_to: 'output', settings: { detectors: ['card'] }, accounts_may_override: 'disable' });
    expect(made.status).toBe(201);
    const key = await newKey(owner);
    expect((await setup.gateway.admin('PATCH', `/admin/keys/${key.id}`, { guardrails: ['mask-cards-out'] })).status).toBe(200);
    // The prompt's card reaches the model (the input policy is off for this key), so the answer carries it back.
    expect((await owner.client.request('PUT', '/api/guardrail-overrides/mask-cards', { scope: 'key', target_id: key.id, mode: 'off' })).status).toBe(200);
    const streamed = async (): Promise<{ text: string; header: string | null }> => {
      const { data, response } = await key.client.chat.completions.create({ model: MODEL, stream: true, messages: [{ role: 'user', content: `repeat ${CARD}` }] }).withResponse();
      let text = '';
      for await (const chunk of data) text += chunk.choices[0]?.delta.content ?? '';
      return { text, header: response.headers.get('x-gateway-guardrails') };
    };
    const masked = await streamed();
    expect(masked.text).not.toContain(CARD);
    expect((await owner.client.request('PUT', '/api/guardrail-overrides/mask-cards-out', { scope: 'key', target_id: key.id, mode: 'off' })).status).toBe(200);
    const plain = await streamed();
    expect(plain.text).toContain(CARD);
    expect(plain.header ?? '').not.toContain('mask-cards-out');
    expect((await setup.gateway.admin('PATCH', `/admin/keys/${key.id}`, { guardrails: [] })).status).toBe(200);
    expect((await setup.gateway.admin('DELETE', `/admin/guardrails/${made.body.id}`)).status).toBe(200);
    // Deleting the policy deleted the overrides of it.
    expect((await entries(owner.client)).some((entry) => entry.name === 'mask-cards-out')).toBe(false);
    expect((await owner.client.request('DELETE', `/api/guardrail-overrides/mask-cards?scope=key&target_id=${key.id}`)).status).toBe(204);
  });
});
