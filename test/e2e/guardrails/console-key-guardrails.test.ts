/**
 * Guardrails on keys from the console, over real HTTP: the operator marks which policies accounts may use
 * (`accounts_may_use`), an account owner lists them (GET /api/guardrails) and attaches them to a key when creating or
 * editing it, and the policy then runs on that key's requests (an OpenAI SDK call refused by a deny list). Refused
 * with 400: a policy not offered to accounts, an unknown name, a policy the operator bound only to another account;
 * a policy the operator put on the key stays on it when the account edits its list; a viewer cannot change a key's
 * policies; another account's key is not found. Runs on PostgreSQL when TEST_DATABASE_URL names one.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel } from '../../support/gateway-harness.js';
import { linkToken, strongPassword, uniqueEmail, waitForMail, type ConsoleClient } from '../../support/console-client.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { signUpUser, startConsoleGateway, type ConsoleGateway, type SignedUpUser } from '../console/console-gateway.js';

let setup: ConsoleGateway;
let upstream: MockOpenAIUpstream;
let owner: SignedUpUser;
let other: SignedUpUser;

interface KeyJson { id: string; guardrails?: string[] }
interface ErrorJson { error: { code: string; param?: string; message: string } }

beforeAll(async () => {
  upstream = await startMockOpenAIUpstream();
  setup = await startConsoleGateway();
  const { gateway } = setup;
  await addRoutedModel(gateway, { model: 'chat-openai', channel: { name: 'o', type: 'openai', base_url: upstream.url, api_key: 'sk-upstream-test', models: { 'chat-openai': 'gpt-4o-mini' } } });
  await gateway.gateway.services.catalog.reload();
  for (const policy of [
    { name: 'no-zanzibar', kind: 'deny_list', mode: 'block', applies_to: 'input', settings: { words: ['zanzibar'] }, accounts_may_use: true },
    { name: 'cards', kind: 'pii', mode: 'mask', applies_to: 'both', settings: { detectors: ['card'] }, accounts_may_use: true },
    { name: 'operator-only', kind: 'deny_list', mode: 'log', applies_to: 'input', settings: { words: ['heron'] } },
    { name: 'other-account', kind: 'pii', mode: 'log', applies_to: 'input' },
  ]) {
    const created = await gateway.admin<{ accounts_may_use: boolean }>('POST', '/admin/guardrails', policy);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.accounts_may_use).toBe(policy.accounts_may_use === true);
  }
  owner = await signUpUser(setup);
  other = await signUpUser(setup);
  expect((await gateway.admin('POST', `/admin/accounts/${owner.accountId}/credits`, { amount_usd: 10 })).status).toBe(200);
  expect((await gateway.admin('PATCH', `/admin/accounts/${other.accountId}`, { guardrails: ['other-account'] })).status).toBe(200);
}, 90_000);

afterAll(async () => {
  await setup?.close();
  await upstream?.close();
});

async function inviteViewer(inviter: ConsoleClient): Promise<ConsoleClient> {
  const email = uniqueEmail('viewer');
  expect((await inviter.request('POST', '/api/members/invitations', { email, role: 'viewer' })).status).toBe(201);
  const token = linkToken(await waitForMail(setup.mail, email, /invited you/i));
  const client = setup.client();
  expect((await client.request('POST', '/api/invitations/accept', { token, password: strongPassword() })).status).toBe(200);
  return client;
}

describe('guardrails on keys in the console', () => {
  it('lists only the policies offered to accounts, and the admin API switches the offer', async () => {
    const offered = await owner.client.request<{ data: Array<Record<string, unknown>> }>('GET', '/api/guardrails');
    expect(offered.status, offered.text).toBe(200);
    expect(offered.body.data).toEqual([
      { name: 'cards', kind: 'pii', mode: 'mask', applies_to: 'both' },
      { name: 'no-zanzibar', kind: 'deny_list', mode: 'block', applies_to: 'input' },
    ]);
    // Settings (deny words, webhook addresses) are the operator's: never shown to accounts.
    expect(offered.text).not.toContain('zanzibar"]');

    const list = await setup.gateway.admin<{ data: Array<{ id: string; name: string; accounts_may_use: boolean; bound_to: unknown[] }> }>('GET', '/admin/guardrails');
    const operatorOnly = list.body.data.find((policy) => policy.name === 'operator-only');
    expect(operatorOnly?.accounts_may_use).toBe(false);
    const offer = await setup.gateway.admin<{ accounts_may_use: boolean }>('PATCH', `/admin/guardrails/${operatorOnly?.id}`, { accounts_may_use: true });
    expect(offer.body.accounts_may_use).toBe(true);
    expect((await owner.client.request<{ data: Array<{ name: string }> }>('GET', '/api/guardrails')).body.data.map((policy) => policy.name)).toContain('operator-only');
    const withdraw = await setup.gateway.admin<{ accounts_may_use: boolean; settings: unknown }>('PATCH', `/admin/guardrails/${operatorOnly?.id}`, { accounts_may_use: false });
    expect(withdraw.body).toMatchObject({ accounts_may_use: false, settings: { words: ['heron'] } });
  });

  it('attaches offered policies on create and edit, and they run on the key\'s requests', async () => {
    const created = await owner.client.request<{ key: KeyJson; secret: string }>('POST', '/api/keys', { name: 'guarded', guardrails: ['no-zanzibar'] });
    expect(created.status, created.text).toBe(201);
    expect(created.body.key.guardrails).toEqual(['no-zanzibar']);
    const read = await owner.client.request<{ key: KeyJson }>('GET', `/api/keys/${created.body.key.id}`);
    expect(read.body.key.guardrails).toEqual(['no-zanzibar']);
    const admin = await setup.gateway.admin<{ guardrails: string[] }>('GET', `/admin/keys/${created.body.key.id}`);
    expect(admin.body.guardrails).toEqual(['no-zanzibar']);

    const client = new OpenAI({ apiKey: created.body.secret, baseURL: `${setup.gateway.url}/v1`, maxRetries: 0 });
    const before = upstream.requests.length;
    const refused = await client.chat.completions.create({ model: 'chat-openai', messages: [{ role: 'user', content: 'tell me about Zanzibar' }] }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
    expect((refused as InstanceType<typeof OpenAI.APIError>).code).toBe('guardrail_blocked');
    expect(upstream.requests.length).toBe(before);

    const edited = await owner.client.request<{ key: KeyJson }>('PATCH', `/api/keys/${created.body.key.id}`, { guardrails: ['cards'] });
    expect(edited.status, edited.text).toBe(200);
    expect(edited.body.key.guardrails).toEqual(['cards']);
    const passed = await client.chat.completions.create({ model: 'chat-openai', messages: [{ role: 'user', content: 'tell me about Zanzibar' }] });
    expect(passed.choices[0]?.message.content).toContain('Zanzibar');

    const listed = await owner.client.request<{ data: KeyJson[] }>('GET', '/api/keys');
    expect(listed.body.data.find((key) => key.id === created.body.key.id)?.guardrails).toEqual(['cards']);
    const cleared = await owner.client.request<{ key: KeyJson }>('PATCH', `/api/keys/${created.body.key.id}`, { guardrails: [] });
    expect(cleared.body.key.guardrails).toEqual([]);
    // A change that leaves guardrails out keeps them as they are.
    await owner.client.request('PATCH', `/api/keys/${created.body.key.id}`, { guardrails: ['cards'] });
    expect((await owner.client.request<{ key: KeyJson }>('PATCH', `/api/keys/${created.body.key.id}`, { name: 'renamed' })).body.key.guardrails).toEqual(['cards']);
  });

  it('refuses policies not offered, unknown names and another account\'s, with 400 and nothing changed', async () => {
    const key = await owner.client.request<{ key: KeyJson }>('POST', '/api/keys', { name: 'refusals', guardrails: ['cards'] });
    for (const name of ['operator-only', 'no-such-policy', 'other-account']) {
      const onCreate = await owner.client.request<ErrorJson>('POST', '/api/keys', { name: `with ${name}`, guardrails: [name] });
      expect(onCreate.status, onCreate.text).toBe(400);
      expect(onCreate.body.error).toMatchObject({ code: 'bad_request', param: 'guardrails' });
      expect(onCreate.body.error.message).toContain(name);
      const onEdit = await owner.client.request<ErrorJson>('PATCH', `/api/keys/${key.body.key.id}`, { guardrails: ['cards', name] });
      expect(onEdit.status, onEdit.text).toBe(400);
      expect(onEdit.body.error).toMatchObject({ code: 'bad_request', param: 'guardrails' });
    }
    const malformed = await owner.client.request<ErrorJson>('PATCH', `/api/keys/${key.body.key.id}`, { guardrails: 'cards' });
    expect(malformed.status).toBe(400);
    expect((await owner.client.request<{ key: KeyJson }>('GET', `/api/keys/${key.body.key.id}`)).body.key.guardrails).toEqual(['cards']);
    // No key was made by a refused create.
    const names = (await owner.client.request<{ data: Array<{ name: string }> }>('GET', '/api/keys')).body.data.map((listed) => listed.name);
    expect(names.filter((name) => name.startsWith('with '))).toEqual([]);
  });

  it('keeps a policy the operator put on the key: the account can neither remove it nor add one like it', async () => {
    const key = await owner.client.request<{ key: KeyJson }>('POST', '/api/keys', { name: 'operator bound' });
    expect((await setup.gateway.admin('PATCH', `/admin/keys/${key.body.key.id}`, { guardrails: ['operator-only'] })).status).toBe(200);
    const seen = await owner.client.request<{ key: KeyJson }>('GET', `/api/keys/${key.body.key.id}`);
    expect(seen.body.key.guardrails).toEqual(['operator-only']);
    // Sent back as read plus an offered one: accepted.
    const added = await owner.client.request<{ key: KeyJson }>('PATCH', `/api/keys/${key.body.key.id}`, { guardrails: ['operator-only', 'cards'] });
    expect(added.status, added.text).toBe(200);
    expect(added.body.key.guardrails).toEqual(['operator-only', 'cards']);
    // Left out: it stays.
    const removed = await owner.client.request<{ key: KeyJson }>('PATCH', `/api/keys/${key.body.key.id}`, { guardrails: [] });
    expect(removed.body.key.guardrails).toEqual(['operator-only']);
  });

  it('lets a viewer read a key\'s policies but not change them, and hides other accounts\' keys', async () => {
    const key = await owner.client.request<{ key: KeyJson }>('POST', '/api/keys', { name: 'viewer sees', guardrails: ['no-zanzibar'] });
    const viewer = await inviteViewer(owner.client);
    expect((await viewer.request<{ key: KeyJson }>('GET', `/api/keys/${key.body.key.id}`)).body.key.guardrails).toEqual(['no-zanzibar']);
    expect((await viewer.request('GET', '/api/guardrails')).status).toBe(200);
    const change = await viewer.request<ErrorJson>('PATCH', `/api/keys/${key.body.key.id}`, { guardrails: [] });
    expect(change.status).toBe(403);
    const foreign = await other.client.request<ErrorJson>('PATCH', `/api/keys/${key.body.key.id}`, { guardrails: ['cards'] });
    expect(foreign.status).toBe(404);
    expect((await owner.client.request<{ key: KeyJson }>('GET', `/api/keys/${key.body.key.id}`)).body.key.guardrails).toEqual(['no-zanzibar']);
  });

  it('refuses changing the policies of a revoked key', async () => {
    const key = await owner.client.request<{ key: KeyJson }>('POST', '/api/keys', { name: 'gone' });
    expect((await owner.client.request('POST', `/api/keys/${key.body.key.id}/revoke`)).status).toBe(200);
    const change = await owner.client.request<ErrorJson>('PATCH', `/api/keys/${key.body.key.id}`, { guardrails: ['cards'] });
    expect(change.status).toBe(409);
    expect((await owner.client.request<{ key: KeyJson }>('GET', `/api/keys/${key.body.key.id}`)).body.key.guardrails).toEqual([]);
  });
});
