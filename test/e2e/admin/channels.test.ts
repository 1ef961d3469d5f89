/** /admin/channels — CRUD, paging, validation, secrets never returned, live routing changes. */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { admin, call, chat, collectPages, expectError, uniqueName } from './helpers.js';
import { CHANNEL_TYPES } from '../../../src/upstreams/upstreams.js';
import { startMockOpenAIUpstream } from '../../support/mock-openai-upstream.js';

interface ChannelJson {
  id: string;
  name: string;
  type: string;
  base_url: string | null;
  models: Record<string, string>;
  priority: number;
  weight: number;
  enabled: boolean;
  headers: Record<string, string>;
}

const UPSTREAM_SECRET = 'sk-proj-UPSTREAMSECRETabcdef0123456789XYZW';
const SECOND_SECRET = 'sk-proj-ROTATEDSECRETzyxwvu9876543210QRST';
const HEADER_SECRET = 'hdr-SECRET-value-5f3a9c';

let gateway: TestGateway;
let client: SeededAccount;

beforeAll(async () => {
  gateway = await startTestGateway();
  client = await seedAccount(gateway, { balanceUsd: 10 });
});

afterAll(async () => {
  await gateway?.close();
});

function expectNoSecrets(text: string): void {
  for (const secret of [UPSTREAM_SECRET, SECOND_SECRET, HEADER_SECRET]) {
    expect(text).not.toContain(secret);
    // Not even most of it.
    expect(text).not.toContain(secret.slice(0, 20));
    expect(text).not.toContain(secret.slice(-12));
  }
}

describe('channel CRUD', () => {
  it('lists every channel type of the upstream registry with its wire, and a channel can be made of each', async () => {
    const answer = await admin<{ data: Array<{ type: string; protocol: string; streaming: boolean; embeddings: boolean; media: string[] }> }>(gateway, 'GET', '/admin/channel-types');
    expect(answer.status).toBe(200);
    expect(answer.body.data.map((entry) => entry.type)).toEqual([...CHANNEL_TYPES]);
    expect(answer.body.data.find((entry) => entry.type === 'anthropic')).toMatchObject({ protocol: 'anthropic-messages', streaming: true });
    expect(answer.body.data.find((entry) => entry.type === 'groq')).toMatchObject({ protocol: 'openai-chat', embeddings: true });
    expect((await call(gateway.url, 'GET', '/admin/channel-types')).status).toBe(401);
  });

  it("describes each type's form: credential, base URL and its own settings after the common ones", async () => {
    type Form = { credential: string; base_url: string; upstream_model_hint: string | null; settings: Array<{ name: string; input: string; required: boolean }> };
    const answer = await admin<{ data: Array<{ type: string; form: Form }> }>(gateway, 'GET', '/admin/channel-types');
    const form = (type: string): Form => answer.body.data.find((entry) => entry.type === type)?.form as Form;
    expect(form('azure-openai')).toMatchObject({ credential: 'key', base_url: 'required', upstream_model_hint: 'the deployment name' });
    expect(form('azure-openai').settings.map((field) => field.name)).toContain('api_version');
    expect(form('bedrock')).toMatchObject({ credential: 'json' });
    expect(form('bedrock').settings.find((field) => field.name === 'region')).toMatchObject({ required: true, input: 'text' });
    expect(form('vertex-ai').settings.map((field) => field.name)).toEqual(expect.arrayContaining(['project_id', 'location']));
    expect(form('ollama').credential).toBe('optional-key');
    for (const entry of answer.body.data) expect(entry.form.settings.map((field) => field.name)).toContain('first_byte_timeout_ms');
  });

  it('changes single headers with header_changes and keeps the others, whose values it never shows', async () => {
    const created = await admin<ChannelJson>(gateway, 'POST', '/admin/channels', {
      name: uniqueName('headers'), type: 'openai', api_key: UPSTREAM_SECRET, models: { 'mapped-a': 'upstream-a' },
      headers: { 'X-Keep': HEADER_SECRET, 'X-Drop': 'drop-me-123456', 'X-Change': 'old-value-123456' },
    });
    expect(created.status, created.text).toBe(201);
    const patched = await admin<ChannelJson>(gateway, 'PATCH', `/admin/channels/${created.body.id}`, { priority: 3, header_changes: { 'x-drop': null, 'X-Change': 'new-value-654321', 'X-New': 'brand-new-000111' } });
    expect(patched.status, patched.text).toBe(200);
    expect(Object.keys(patched.body.headers).sort()).toEqual(['X-Change', 'X-Keep', 'X-New']);
    expect(patched.body.headers['X-Keep']).toBe(`…${HEADER_SECRET.slice(-4)}`);
    expect(patched.body.headers['X-Change']).toBe('…4321');
    expect(patched.body.models).toEqual({ 'mapped-a': 'upstream-a' });
    expectNoSecrets(patched.text);
    expectError(await admin(gateway, 'POST', '/admin/channels', { name: uniqueName('no'), type: 'openai', api_key: 'k', models: ['m'], header_changes: { a: 'b' } }), { status: 400 });
  });

  it('creates, gets, lists, patches and deletes a channel without ever returning its upstream key', async () => {
    const name = uniqueName('openai-main');
    const created = await admin<ChannelJson>(gateway, 'POST', '/admin/channels', {
      name,
      type: 'openai',
      api_key: UPSTREAM_SECRET,
      models: ['gpt-4o-mini', 'gpt-4o'],
      priority: 5,
      weight: 3,
      headers: { 'X-Upstream-Org': HEADER_SECRET },
    });
    expect(created.status, created.text).toBe(201);
    expect(typeof created.body.id).toBe('string');
    expect(created.body.id.length).toBeGreaterThan(0);
    expect(created.body).toMatchObject({ name, type: 'openai', priority: 5, weight: 3, enabled: true });
    expect(Object.keys(created.body.models).sort()).toEqual(['gpt-4o', 'gpt-4o-mini']);
    expectNoSecrets(created.text);
    const id = created.body.id;

    const got = await admin<ChannelJson>(gateway, 'GET', `/admin/channels/${id}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id, name, type: 'openai', priority: 5, weight: 3, enabled: true });
    expectNoSecrets(got.text);

    const listed = await admin<{ data: ChannelJson[] }>(gateway, 'GET', '/admin/channels?limit=200');
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((channel) => channel.id)).toContain(id);
    expectNoSecrets(listed.text);

    const patched = await admin<ChannelJson>(gateway, 'PATCH', `/admin/channels/${id}`, { priority: -2, weight: 7, enabled: false, api_key: SECOND_SECRET });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ id, name, priority: -2, weight: 7, enabled: false });
    expectNoSecrets(patched.text);
    const afterPatch = await admin<ChannelJson>(gateway, 'GET', `/admin/channels/${id}`);
    expect(afterPatch.body).toMatchObject({ priority: -2, weight: 7, enabled: false });
    expect(Object.keys(afterPatch.body.models).sort()).toEqual(['gpt-4o', 'gpt-4o-mini']);
    expectNoSecrets(afterPatch.text);

    const deleted = await admin(gateway, 'DELETE', `/admin/channels/${id}`);
    expect(deleted.status).toBe(200);
    expectError(await admin(gateway, 'GET', `/admin/channels/${id}`), { status: 404 });
    expectError(await admin(gateway, 'DELETE', `/admin/channels/${id}`), { status: 404 });
    const relisted = await admin<{ data: ChannelJson[] }>(gateway, 'GET', '/admin/channels?limit=200');
    expect(relisted.body.data.map((channel) => channel.id)).not.toContain(id);
  });

  it('accepts models as a list and as a map from public id to upstream name', async () => {
    const list = await admin<ChannelJson>(gateway, 'POST', '/admin/channels', {
      name: uniqueName('as-list'), type: 'openai-compatible', base_url: 'https://llm.example.com/v1', api_key: UPSTREAM_SECRET, models: ['m-one', 'm-two'],
    });
    expect(list.status, list.text).toBe(201);
    expect(Object.keys(list.body.models).sort()).toEqual(['m-one', 'm-two']);
    expect(list.body.base_url).toBe('https://llm.example.com/v1');

    const map = { 'public-fast': 'vendor-fast-2025-01-01', 'public-big': 'vendor-big-latest' };
    const mapped = await admin<ChannelJson>(gateway, 'POST', '/admin/channels', {
      name: uniqueName('as-map'), type: 'openai-compatible', base_url: 'https://llm.example.com/v1', api_key: UPSTREAM_SECRET, models: map,
    });
    expect(mapped.status, mapped.text).toBe(201);
    expect(mapped.body.models).toEqual(map);
    const got = await admin<ChannelJson>(gateway, 'GET', `/admin/channels/${mapped.body.id}`);
    expect(got.body.models).toEqual(map);

    const replaced = await admin<ChannelJson>(gateway, 'PATCH', `/admin/channels/${mapped.body.id}`, { models: ['only-this'] });
    expect(replaced.status).toBe(200);
    expect(Object.keys(replaced.body.models)).toEqual(['only-this']);
  });

  it('answers 404 with the error object for unknown ids', async () => {
    for (const method of ['GET', 'PATCH', 'DELETE']) {
      const answer = await admin(gateway, method, '/admin/channels/ch_doesnotexist', method === 'PATCH' ? { enabled: false } : undefined);
      expectError(answer, { status: 404, code: 'not_found' });
    }
  });

  it('refuses a duplicate name with 409, on create and on rename', async () => {
    const name = uniqueName('dup');
    const first = await admin<ChannelJson>(gateway, 'POST', '/admin/channels', { name, type: 'simulator', models: ['dup-model'] });
    expect(first.status).toBe(201);
    expectError(await admin(gateway, 'POST', '/admin/channels', { name, type: 'simulator', models: ['dup-model'] }), { status: 409 });
    const other = await admin<ChannelJson>(gateway, 'POST', '/admin/channels', { name: uniqueName('dup-other'), type: 'simulator', models: ['dup-model'] });
    expect(other.status).toBe(201);
    expectError(await admin(gateway, 'PATCH', `/admin/channels/${other.body.id}`, { name }), { status: 409 });
    const unchanged = await admin<ChannelJson>(gateway, 'GET', `/admin/channels/${other.body.id}`);
    expect(unchanged.body.name).not.toBe(name);
  });
});

describe('channel validation', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['openai without api_key', { type: 'openai', models: ['m'] }, 'api_key'],
    ['anthropic without api_key', { type: 'anthropic', models: ['m'] }, 'api_key'],
    ['openai-compatible without base_url', { type: 'openai-compatible', api_key: 'sk-x-123456789', models: ['m'] }, 'base_url'],
    ['azure-openai without base_url', { type: 'azure-openai', api_key: 'sk-x-123456789', models: ['m'] }, 'base_url'],
    ['an unknown type', { type: 'carrier-pigeon', api_key: 'sk-x-123456789', models: ['m'] }, 'type'],
    ['no type', { api_key: 'sk-x-123456789', models: ['m'] }, 'type'],
    ['no models', { type: 'openai', api_key: 'sk-x-123456789' }, 'models'],
    ['models of the wrong shape', { type: 'openai', api_key: 'sk-x-123456789', models: 'gpt-4o' }, 'models'],
    ['a base_url that is not http(s)', { type: 'openai-compatible', base_url: 'ftp://llm.example.com', api_key: 'sk-x-123456789', models: ['m'] }, 'base_url'],
    ['a priority that is not a number', { type: 'simulator', models: ['m'], priority: 'high' }, 'priority'],
    ['a negative weight', { type: 'simulator', models: ['m'], weight: -1 }, 'weight'],
    ['enabled that is not a boolean', { type: 'simulator', models: ['m'], enabled: 'yes' }, 'enabled'],
  ];

  it.each(cases)('refuses %s with 400 naming the field', async (_label, body, param) => {
    const name = uniqueName('invalid');
    const answer = await admin(gateway, 'POST', '/admin/channels', { name, ...body });
    expectError(answer, { status: 400, param });
    const listed = await admin<{ data: ChannelJson[] }>(gateway, 'GET', '/admin/channels?limit=200');
    expect(listed.body.data.map((channel) => channel.name)).not.toContain(name);
  });

  it('refuses credentials inside base_url (https://user:password@host) on create and on patch, saying where they go', async () => {
    for (const baseUrl of ['https://team:pw-SECRET-1@llm.example.com/v1', 'http://apikey-SECRET-2@10.0.0.5:8000']) {
      const name = uniqueName('creds');
      const error = expectError(await admin(gateway, 'POST', '/admin/channels', { name, type: 'openai-compatible', base_url: baseUrl, api_key: 'sk-x-123456789', models: ['m'] }), { status: 400, param: 'base_url' });
      expect(error.message).toMatch(/api_key.*headers/);
      expect(error.message).not.toContain('SECRET');
    }
    const created = await admin<ChannelJson>(gateway, 'POST', '/admin/channels', {
      name: uniqueName('creds-patch'), type: 'openai-compatible', base_url: 'https://llm.example.com/v1', api_key: UPSTREAM_SECRET, models: ['m'],
    });
    expect(created.status).toBe(201);
    expectError(await admin(gateway, 'PATCH', `/admin/channels/${created.body.id}`, { base_url: 'https://u:pw-SECRET-3@llm.example.com/v1' }), { status: 400, param: 'base_url' });
    const listed = await admin<{ data: ChannelJson[] }>(gateway, 'GET', '/admin/channels?limit=200');
    expect(JSON.stringify(listed.body)).not.toContain('SECRET');
    expect((await admin<ChannelJson>(gateway, 'GET', `/admin/channels/${created.body.id}`)).body.base_url).toBe('https://llm.example.com/v1');
  });

  it('refuses a missing name with 400 naming the field', async () => {
    expectError(await admin(gateway, 'POST', '/admin/channels', { type: 'simulator', models: ['m'] }), { status: 400, param: 'name' });
  });

  it('refuses unknown fields and bodies that are not JSON objects', async () => {
    const unknown = await admin(gateway, 'POST', '/admin/channels', { name: uniqueName('x'), type: 'simulator', models: ['m'], colour: 'blue' });
    const error = expectError(unknown, { status: 400 });
    expect(error.message).toContain('colour');
    expectError(await call(gateway.url, 'POST', '/admin/channels', { token: gateway.adminToken, rawBody: '{"name": ' }), { status: 400 });
    expectError(await call(gateway.url, 'POST', '/admin/channels', { token: gateway.adminToken, rawBody: '[1,2]' }), { status: 400 });
    expectError(await call(gateway.url, 'POST', '/admin/channels', { token: gateway.adminToken }), { status: 400 });
  });

  it('refuses a patch that leaves an openai-compatible channel without base_url, and keeps the channel unchanged', async () => {
    const created = await admin<ChannelJson>(gateway, 'POST', '/admin/channels', {
      name: uniqueName('compat'), type: 'openai-compatible', base_url: 'https://llm.example.com/v1', api_key: UPSTREAM_SECRET, models: ['m'],
    });
    expect(created.status).toBe(201);
    expectError(await admin(gateway, 'PATCH', `/admin/channels/${created.body.id}`, { base_url: null }), { status: 400, param: 'base_url' });
    expectError(await admin(gateway, 'PATCH', `/admin/channels/${created.body.id}`, { type: 'nope' }), { status: 400, param: 'type' });
    const got = await admin<ChannelJson>(gateway, 'GET', `/admin/channels/${created.body.id}`);
    expect(got.body.base_url).toBe('https://llm.example.com/v1');
    expect(got.body.type).toBe('openai-compatible');
  });
});

describe('a stored channel whose type no registered upstream serves', () => {
  it('is listed, reads as disabled and can be deleted: the type is checked where channels enter, not when storage reads them', async () => {
    const now = Date.now();
    const id = uniqueName('retired');
    // Written as an upstream since removed from the registry would have left it (the admin API refuses the type).
    await gateway.gateway.services.storage.channels.create({
      id, name: id, type: 'retired-upstream', baseUrl: null, apiKeys: [UPSTREAM_SECRET], models: { 'retired-model': '' },
      priority: 0, weight: 1, enabled: true, headers: {}, settings: {}, createdAt: now, updatedAt: now,
    });
    const got = await admin<ChannelJson>(gateway, 'GET', `/admin/channels/${id}`);
    expect(got.status, got.text).toBe(200);
    expect(got.body).toMatchObject({ id, type: 'retired-upstream', enabled: true });
    expectNoSecrets(got.text);
    const listed = await collectPages<ChannelJson>(gateway, '/admin/channels', 200);
    expect(listed.items.map((channel) => channel.id)).toContain(id);
    const health = await admin<{ status: string }>(gateway, 'GET', `/admin/channels/${id}/health`);
    expect(health.status, health.text).toBe(200);
    expect(health.body.status).toBe('disabled');
    expect((await admin(gateway, 'DELETE', `/admin/channels/${id}`)).status).toBe(200);
    expectError(await admin(gateway, 'GET', `/admin/channels/${id}`), { status: 404 });
  });
});

describe('channel list paging', () => {
  it('pages with limit, next_cursor/cursor and has_more, every channel exactly once', async () => {
    const names = Array.from({ length: 7 }, (_, index) => uniqueName(`page-${index}`));
    for (const name of names) {
      const created = await admin(gateway, 'POST', '/admin/channels', { name, type: 'simulator', models: ['paging-model'] });
      expect(created.status).toBe(201);
    }
    const everything = await admin<{ data: ChannelJson[]; has_more: boolean }>(gateway, 'GET', '/admin/channels?limit=200');
    expect(everything.body.has_more).toBe(false);
    const total = everything.body.data.length;
    expect(total).toBeGreaterThanOrEqual(7);

    const first = await admin<{ object: string; data: ChannelJson[]; has_more: boolean; next_cursor: string | null }>(gateway, 'GET', '/admin/channels?limit=2');
    expect(first.body.object).toBe('list');
    expect(first.body.data).toHaveLength(2);
    expect(first.body.has_more).toBe(true);
    expect(typeof first.body.next_cursor).toBe('string');

    const { items, pages } = await collectPages<ChannelJson>(gateway, '/admin/channels', 2);
    expect(pages).toBe(Math.ceil(total / 2));
    const ids = items.map((channel) => channel.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.sort()).toEqual(everything.body.data.map((channel) => channel.id).sort());
    const pagedNames = items.map((channel) => channel.name);
    for (const name of names) expect(pagedNames).toContain(name);
  });

  it('refuses a limit outside 1..200 with 400 naming limit', async () => {
    for (const limit of ['0', '-1', '201', 'abc', '1.5']) {
      expectError(await admin(gateway, 'GET', `/admin/channels?limit=${limit}`), { status: 400, param: 'limit' });
    }
  });
});

describe('channel changes take effect for routing without a restart', () => {
  it('disable the only channel → 503; enable → 200; delete → 503; add again → 200', async () => {
    const model = 'routing-sim-model';
    const priced = await admin(gateway, 'POST', '/admin/models', { id: model, pricing: { input_per_mtok: 1, output_per_mtok: 2 } });
    expect(priced.status).toBe(201);
    // A model without any channel: a clear 503.
    expectError(await chat(gateway, client.key, model), { status: 503 });

    const created = await admin<ChannelJson>(gateway, 'POST', '/admin/channels', { name: uniqueName('routing-sim'), type: 'simulator', models: [model] });
    expect(created.status).toBe(201);
    const sdk = new OpenAI({ baseURL: gateway.baseURL, apiKey: client.key, maxRetries: 0 });
    const completion = await sdk.chat.completions.create({ model, messages: [{ role: 'user', content: 'Say hi' }] });
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]?.message.content ?? '').not.toBe('');

    const disabled = await admin(gateway, 'PATCH', `/admin/channels/${created.body.id}`, { enabled: false });
    expect(disabled.status).toBe(200);
    const refused = await chat(gateway, client.key, model);
    const error = expectError(refused, { status: 503 });
    expect(error.message).toContain(model);
    await expect(sdk.chat.completions.create({ model, messages: [{ role: 'user', content: 'Say hi' }] })).rejects.toMatchObject({ status: 503 });

    expect((await admin(gateway, 'PATCH', `/admin/channels/${created.body.id}`, { enabled: true })).status).toBe(200);
    expect((await chat(gateway, client.key, model)).status).toBe(200);

    expect((await admin(gateway, 'DELETE', `/admin/channels/${created.body.id}`)).status).toBe(200);
    expectError(await chat(gateway, client.key, model), { status: 503 });

    const again = await admin(gateway, 'POST', '/admin/channels', { name: uniqueName('routing-sim-again'), type: 'simulator', models: { [model]: 'simulated-upstream-name' } });
    expect(again.status).toBe(201);
    const answer = await chat(gateway, client.key, model);
    expect(answer.status, answer.text).toBe(200);
  });

  it('a model removed from a channel by PATCH stops routing through it', async () => {
    const model = 'routing-sim-model-2';
    expect((await admin(gateway, 'POST', '/admin/models', { id: model, pricing: { input_per_mtok: 1 } })).status).toBe(201);
    const created = await admin<ChannelJson>(gateway, 'POST', '/admin/channels', { name: uniqueName('routing-models'), type: 'simulator', models: [model] });
    expect((await chat(gateway, client.key, model)).status).toBe(200);
    expect((await admin(gateway, 'PATCH', `/admin/channels/${created.body.id}`, { models: ['some-other-model'] })).status).toBe(200);
    expectError(await chat(gateway, client.key, model), { status: 503 });
  });

  it('an edit that changes how a channel is reached decides pass-through or translation again on the next request', async () => {
    const upstream = await startMockOpenAIUpstream();
    try {
      const model = 'wire-edit-model';
      expect((await admin(gateway, 'POST', '/admin/models', { id: model, pricing: { input_per_mtok: 1, output_per_mtok: 2 } })).status).toBe(201);
      const created = await admin<ChannelJson>(gateway, 'POST', '/admin/channels', {
        name: uniqueName('wire-edit'), type: 'openai-compatible', base_url: upstream.url, api_key: 'sk-upstream-test', models: { [model]: 'gpt-4o-mini' },
      });
      expect(created.status).toBe(201);
      const respond = async (): Promise<string | undefined> => {
        const answer = await call(gateway.url, 'POST', '/v1/responses', { token: client.key, body: { model, input: 'Say hi' } });
        expect(answer.status, answer.text).toBe(200);
        return upstream.requests.at(-1)?.path;
      };
      // An OpenAI-compatible provider is reached through chat completions by default: the request is translated.
      expect(await respond()).toBe('/v1/chat/completions');
      expect(await respond()).toBe('/v1/chat/completions');
      // Told that it serves the Responses API itself, the same channel gets the caller's body as it came.
      expect((await admin(gateway, 'PATCH', `/admin/channels/${created.body.id}`, { settings: { responses_api: true } })).status).toBe(200);
      expect(await respond()).toBe('/v1/responses');
      expect((await admin(gateway, 'PATCH', `/admin/channels/${created.body.id}`, { settings: { responses_api: false } })).status).toBe(200);
      expect(await respond()).toBe('/v1/chat/completions');
    } finally {
      await upstream.close();
    }
  });
});
