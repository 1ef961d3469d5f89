/**
 * The console's keys, usage and playground over real HTTP, against a gateway routing to a mock OpenAI upstream:
 * keys with every attribute, the secret shown once and working with the official SDK, edit / disable / enable /
 * revoke with the API agreeing, spend and usage (filters, cursor, CSV, daily totals, overview), the separations
 * between console sessions and API keys, and the playground streaming through the gateway with a key of its own.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, flushWrites } from '../../support/gateway-harness.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { strongPassword } from '../../support/console-client.js';
import { signUpUser, startConsoleGateway, type ConsoleGateway, type SignedUpUser } from './console-gateway.js';

let setup: ConsoleGateway;
let upstream: MockOpenAIUpstream;
let user: SignedUpUser;

interface KeyJson {
  id: string;
  name: string;
  environment: string | null;
  status: string;
  hint: string;
  quota_usd: number | null;
  spent_usd: number;
  allowed_models: string[] | null;
  ip_allowlist: string[] | null;
  expires_at: string | null;
  rpm: number | null;
  tpm: number | null;
  concurrency: number | null;
  created_by: string | null;
}

beforeAll(async () => {
  upstream = await startMockOpenAIUpstream();
  setup = await startConsoleGateway();
  for (const model of ['house-model', 'other-model']) {
    await addRoutedModel(setup.gateway, {
      model,
      pricing: { input_per_mtok: 2, output_per_mtok: 8 },
      channel: { name: `openai-${model}`, type: 'openai', base_url: upstream.url, api_key: 'sk-upstream-test', models: { [model]: 'gpt-4o-mini' } },
    });
  }
  user = await signUpUser(setup);
  const credit = await setup.gateway.admin('POST', `/admin/accounts/${user.accountId}/credits`, { amount_usd: 5 });
  expect(credit.status).toBe(200);
});

afterAll(async () => {
  await setup?.close();
  await upstream?.close();
});

async function createKey(body: Record<string, unknown>): Promise<{ key: KeyJson; secret: string }> {
  const answer = await user.client.request<{ key: KeyJson; secret: string }>('POST', '/api/keys', body);
  expect(answer.status, answer.text).toBe(201);
  return answer.body;
}

function sdk(secret: string): OpenAI {
  return new OpenAI({ baseURL: setup.gateway.baseURL, apiKey: secret, maxRetries: 0 });
}

describe('keys', () => {
  it('creates a key with every attribute and shows its secret once', async () => {
    const expires = new Date(Date.now() + 30 * 86_400_000).toISOString();
    const { key, secret } = await createKey({
      name: 'backend', environment: 'production', quota_usd: 2.5, allowed_models: ['house-model'], ip_allowlist: ['127.0.0.1', '10.0.0.0/8'],
      expires_at: expires, rpm: 100, tpm: 100_000, concurrency: 4,
    });
    expect(secret).toMatch(/^sk-[A-Za-z0-9]{40}$/);
    expect(key).toMatchObject({
      name: 'backend', environment: 'production', status: 'enabled', quota_usd: 2.5, spent_usd: 0, allowed_models: ['house-model'],
      ip_allowlist: ['127.0.0.1', '10.0.0.0/8'], expires_at: expires, rpm: 100, tpm: 100_000, concurrency: 4, created_by: user.userId,
    });
    expect(key.hint).toBe(`sk-…${secret.slice(-4)}`);
    const listed = await user.client.request<{ data: KeyJson[] }>('GET', '/api/keys');
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((item) => item.id)).toContain(key.id);
    expect(listed.text).not.toContain(secret);
    expect(listed.text).not.toContain(secret.slice(3, 20));
    const single = await user.client.request('GET', `/api/keys/${key.id}`);
    expect(single.text).not.toContain(secret);

    // The secret works with the official SDK, within the key's allowlist only.
    const completion = await sdk(secret).chat.completions.create({ model: 'house-model', messages: [{ role: 'user', content: 'hello there' }] });
    expect(completion.choices[0]?.message.content).toBeTruthy();
    await expect(sdk(secret).chat.completions.create({ model: 'other-model', messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({ status: 403 });
    await flushWrites(setup.gateway);
    const after = await user.client.request<{ data: KeyJson[] }>('GET', '/api/keys');
    const spent = after.body.data.find((item) => item.id === key.id)?.spent_usd ?? 0;
    expect(spent).toBeGreaterThan(0);
  });

  it('validates attributes and names the field', async () => {
    const bad = await user.client.request('POST', '/api/keys', { name: 'x', ip_allowlist: ['not-an-ip'] });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: { code: 'bad_request', param: 'ip_allowlist' } });
    const unknown = await user.client.request('POST', '/api/keys', { name: 'x', colour: 'blue' });
    expect(unknown.status).toBe(400);
  });

  it('edits, disables, enables and revokes, and the API agrees each time', async () => {
    const { key, secret } = await createKey({ name: 'toggle' });
    const client = sdk(secret);
    const ask = (): Promise<unknown> => client.chat.completions.create({ model: 'house-model', messages: [{ role: 'user', content: 'hi' }] });

    const edited = await user.client.request<{ key: KeyJson }>('PATCH', `/api/keys/${key.id}`, { name: 'renamed', environment: 'staging', rpm: 10 });
    expect(edited.status, edited.text).toBe(200);
    expect(edited.body.key).toMatchObject({ name: 'renamed', environment: 'staging', rpm: 10 });

    expect((await user.client.request<{ key: KeyJson }>('PATCH', `/api/keys/${key.id}`, { status: 'disabled' })).body.key.status).toBe('disabled');
    await expect(ask()).rejects.toMatchObject({ status: 403 });
    expect((await user.client.request<{ key: KeyJson }>('PATCH', `/api/keys/${key.id}`, { status: 'enabled' })).body.key.status).toBe('enabled');
    await expect(ask()).resolves.toBeTruthy();

    const viaPatch = await user.client.request('PATCH', `/api/keys/${key.id}`, { status: 'revoked' });
    expect(viaPatch.status).toBe(400);
    const revoked = await user.client.request<{ key: KeyJson }>('POST', `/api/keys/${key.id}/revoke`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.key.status).toBe('revoked');
    await expect(ask()).rejects.toMatchObject({ status: 401 });
    const reenable = await user.client.request('PATCH', `/api/keys/${key.id}`, { status: 'enabled' });
    expect(reenable.status).toBe(409);
  });

  it('lists the models the account may call, with prices', async () => {
    const models = await user.client.request<{ data: Array<{ id: string; pricing: { input_per_mtok: number } }> }>('GET', '/api/models');
    expect(models.status).toBe(200);
    expect(models.body.data.map((model) => model.id)).toEqual(['house-model', 'other-model']);
    expect(models.body.data[0]?.pricing.input_per_mtok).toBe(2);
  });

  it('the admin API takes and shows the environment label too', async () => {
    const created = await setup.gateway.admin<{ id: string; environment: string }>('POST', `/admin/accounts/${user.accountId}/keys`, { name: 'ops', environment: 'development' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ environment: 'development', created_by: null });
  });
});

describe('separations between console sessions and API keys', () => {
  it('revoking a key ends no console session', async () => {
    const { key } = await createKey({ name: 'short-lived' });
    expect((await user.client.request('POST', `/api/keys/${key.id}/revoke`)).status).toBe(200);
    expect((await user.client.request('GET', '/api/session')).body).toMatchObject({ user: { id: user.userId } });
    expect((await user.client.request('GET', '/api/keys')).status).toBe(200);
  });

  it('changing the password invalidates no API key', async () => {
    const { secret } = await createKey({ name: 'survives' });
    const newPassword = strongPassword();
    expect((await user.client.request('POST', '/api/me/password', { current_password: user.password, new_password: newPassword })).status).toBe(204);
    user.password = newPassword;
    await expect(sdk(secret).chat.completions.create({ model: 'house-model', messages: [{ role: 'user', content: 'still here' }] })).resolves.toBeTruthy();
  });
});

describe('usage', () => {
  it('lists this account\'s calls (metadata only), filters them, pages by cursor and exports CSV', async () => {
    const { key, secret } = await createKey({ name: 'usage', allowed_models: ['house-model'] });
    const client = sdk(secret);
    const ids: string[] = [];
    for (let index = 0; index < 3; index += 1) {
      const answer = await client.chat.completions.create({ model: 'house-model', messages: [{ role: 'user', content: `secret prompt ${index}` }] }).withResponse();
      ids.push(answer.response.headers.get('x-request-id') ?? '');
    }
    await expect(client.chat.completions.create({ model: 'other-model', messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({ status: 403 });
    await flushWrites(setup.gateway);

    const first = await user.client.request<{ data: Array<{ request_id: string; key_id: string; status: number }>; next_cursor: string | null }>('GET', `/api/usage?key_id=${key.id}&status=200&limit=2`);
    expect(first.status, first.text).toBe(200);
    expect(first.body.data).toHaveLength(2);
    expect(first.body.next_cursor).not.toBeNull();
    expect(first.text).not.toContain('secret prompt');
    const second = await user.client.request<{ data: Array<{ request_id: string }>; next_cursor: string | null }>('GET', `/api/usage?key_id=${key.id}&status=200&limit=2&cursor=${encodeURIComponent(first.body.next_cursor ?? '')}`);
    expect(second.body.data).toHaveLength(1);
    expect(second.body.next_cursor).toBeNull();
    expect([...first.body.data, ...second.body.data].map((row) => row.request_id).sort()).toEqual([...ids].sort());
    const refused = await user.client.request<{ data: Array<{ status: number; model: string }> }>('GET', `/api/usage?key_id=${key.id}&status=403`);
    expect(refused.body.data).toHaveLength(1);
    const byModel = await user.client.request<{ data: Array<{ model: string }> }>('GET', `/api/usage?key_id=${key.id}&model=house-model`);
    expect(byModel.body.data).toHaveLength(3);
    const future = await user.client.request<{ data: unknown[] }>('GET', `/api/usage?key_id=${key.id}&from=${new Date(Date.now() + 3_600_000).toISOString()}`);
    expect(future.body.data).toHaveLength(0);
    expect((await user.client.request('GET', '/api/usage?cursor=garbage')).status).toBe(400);

    const csv = await user.client.raw('GET', `/api/usage.csv?key_id=${key.id}`);
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(csv.headers.get('content-disposition')).toMatch(/^attachment; filename="usage-\d{4}-\d{2}-\d{2}\.csv"$/);
    const lines = (await csv.text()).trim().split('\r\n');
    expect(lines[0]).toBe('created_at,request_id,key_id,model,endpoint,stream,status,error_code,prompt_tokens,completion_tokens,cached_tokens,reasoning_tokens,total_tokens,cost_usd,latency_ms,ttfb_ms,web_searches,web_fetches,file_searches,hosted_tool_cost_usd');
    expect(lines).toHaveLength(5);
    for (const id of ids) expect(lines.some((line) => line.includes(id))).toBe(true);
  });

  it('sums spend, tokens, requests and errors per day, model and key, and gives the overview', async () => {
    await flushWrites(setup.gateway);
    type Daily = { date: string; model: string; key_id: string | null; requests: number; errors: number; input_tokens: number; output_tokens: number; cost_usd: number };
    const answer = await user.client.request<{ data: Daily[] }>('GET', '/api/usage/daily');
    expect(answer.status, answer.text).toBe(200);
    // One row per day, model and key: summed per day and model here, as the charts do.
    const perModel = new Map<string, Daily>();
    for (const row of answer.body.data) {
      const sum = perModel.get(`${row.date} ${row.model}`);
      perModel.set(`${row.date} ${row.model}`, sum === undefined ? { ...row } : {
        ...sum, requests: sum.requests + row.requests, errors: sum.errors + row.errors, input_tokens: sum.input_tokens + row.input_tokens,
        output_tokens: sum.output_tokens + row.output_tokens, cost_usd: sum.cost_usd + row.cost_usd,
      });
    }
    const daily = { status: answer.status, text: answer.text, body: { data: [...perModel.values()] } };
    expect(daily.status, daily.text).toBe(200);
    const today = new Date().toISOString().slice(0, 10);
    // The daily totals agree with the log's own rows.
    const rows = await user.client.request<{ data: Array<{ model: string; key_id: string | null; status: number; prompt_tokens: number; completion_tokens: number; cost_usd: number }> }>('GET', '/api/usage?limit=200');
    const keyIds = new Set(rows.body.data.map((row) => row.key_id));
    expect(keyIds.size).toBeGreaterThan(0);
    for (const keyId of keyIds) {
      const own = rows.body.data.filter((row) => row.key_id === keyId);
      const days = answer.body.data.filter((row) => row.key_id === keyId);
      expect(days.reduce((sum, row) => sum + row.requests, 0), `requests of key ${keyId}`).toBe(own.length);
      expect(days.reduce((sum, row) => sum + row.cost_usd, 0)).toBeCloseTo(own.reduce((sum, row) => sum + row.cost_usd, 0), 9);
    }
    for (const model of ['house-model', 'other-model']) {
      const own = rows.body.data.filter((row) => row.model === model);
      const total = daily.body.data.find((row) => row.date === today && row.model === model);
      expect(total, model).toBeDefined();
      expect(total?.requests).toBe(own.length);
      expect(total?.errors).toBe(own.filter((row) => row.status >= 400).length);
      expect(total?.input_tokens).toBe(own.reduce((sum, row) => sum + row.prompt_tokens, 0));
      expect(total?.output_tokens).toBe(own.reduce((sum, row) => sum + row.completion_tokens, 0));
      expect(total?.cost_usd).toBeCloseTo(own.reduce((sum, row) => sum + row.cost_usd, 0), 9);
    }
    const house = daily.body.data.find((row) => row.date === today && row.model === 'house-model');
    expect(house?.requests).toBeGreaterThanOrEqual(3);
    expect(house?.cost_usd).toBeGreaterThan(0);
    const other = daily.body.data.find((row) => row.date === today && row.model === 'other-model');
    expect(other?.errors).toBe(other?.requests);
    expect((await user.client.request('GET', '/api/usage/daily?from=2026-01-10&to=2025-01-01')).status).toBe(400);

    const overview = await user.client.request<{ balance_usd: number; spend_today_usd: number; requests_today: number; subscriptions: unknown[] }>('GET', '/api/overview');
    expect(overview.status).toBe(200);
    expect(overview.body.spend_today_usd).toBeCloseTo(daily.body.data.filter((row) => row.date === today).reduce((sum, row) => sum + row.cost_usd, 0), 9);
    expect(overview.body.balance_usd).toBeCloseTo(5 - overview.body.spend_today_usd, 9);
    expect(overview.body.requests_today).toBe(daily.body.data.filter((row) => row.date === today).reduce((sum, row) => sum + row.requests, 0));
    expect(overview.body.subscriptions).toEqual([]);
  });
});

describe('playground', () => {
  it('streams a chat through the gateway with a key of its own, sums it up, logs it and revokes the key', async () => {
    const response = await user.client.raw('POST', '/api/playground/chat', { model: 'house-model', messages: [{ role: 'user', content: 'Tell me a short story' }], max_tokens: 50 });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const text = await response.text();
    const events = text.split('\n\n').filter((block) => block.trim() !== '');
    const deltas = events.filter((block) => block.startsWith('data: {')).map((block) => JSON.parse(block.slice(6)) as { choices: Array<{ delta: { content?: string } }> });
    const content = deltas.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
    expect(content.length).toBeGreaterThan(0);
    expect(events).toContain('data: [DONE]');
    const summaryBlock = events.at(-1) ?? '';
    expect(summaryBlock.startsWith('event: summary\ndata: ')).toBe(true);
    const summary = JSON.parse(summaryBlock.slice('event: summary\ndata: '.length)) as { request_id: string; input_tokens: number; output_tokens: number; cost_usd: number; latency_ms: number; first_token_ms: number };
    expect(summary.request_id).toMatch(/^req_/);
    expect(summary.input_tokens).toBeGreaterThan(0);
    expect(summary.output_tokens).toBeGreaterThan(0);
    expect(summary.cost_usd).toBeGreaterThan(0);
    expect(summary.latency_ms).toBeGreaterThanOrEqual(summary.first_token_ms);

    await flushWrites(setup.gateway);
    const usage = await user.client.request<{ data: Array<{ request_id: string; key_id: string; stream: boolean; cost_usd: number }> }>('GET', '/api/usage?limit=200');
    const row = usage.body.data.find((item) => item.request_id === summary.request_id);
    expect(row).toMatchObject({ stream: true });
    expect(row?.cost_usd).toBeCloseTo(summary.cost_usd, 9);

    // Its key was the account's, revoked after the call, and the keys page does not list it.
    const adminKeys = await setup.gateway.admin<{ data: Array<{ id: string; name: string; status: string }> }>('GET', `/admin/accounts/${user.accountId}/keys?limit=200`);
    const playgroundKey = adminKeys.body.data.find((key) => key.id === row?.key_id);
    expect(playgroundKey).toMatchObject({ name: 'playground', status: 'revoked' });
    const listed = await user.client.request<{ data: KeyJson[] }>('GET', '/api/keys');
    expect(listed.body.data.some((key) => key.id === row?.key_id)).toBe(false);
  });

  it('answers the gateway\'s error before streaming, and refuses models the account cannot call', async () => {
    const unknown = await user.client.request('POST', '/api/playground/chat', { model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ error: { code: 'model_not_found', param: 'model' } });
    const poor = await signUpUser(setup);
    const broke = await poor.client.request('POST', '/api/playground/chat', { model: 'house-model', messages: [{ role: 'user', content: 'hi' }] });
    expect([402, 429]).toContain(broke.status);
    expect(broke.body).toMatchObject({ error: { code: 'insufficient_balance' } });
  });
});
