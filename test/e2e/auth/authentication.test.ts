import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';

const CHAT = { model: 'sim-chat', messages: [{ role: 'user', content: 'hello' }] };

interface ErrorBody {
  error: { message: string; type: string; code: string };
}

async function chat(gateway: TestGateway, headers: Record<string, string>, body: unknown = CHAT): Promise<{ status: number; body: ErrorBody & Record<string, unknown>; headers: Headers }> {
  const response = await fetch(`${gateway.baseURL}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as ErrorBody & Record<string, unknown>, headers: response.headers };
}

function expectSpecError(body: ErrorBody, code: string): void {
  expect(typeof body.error.message).toBe('string');
  expect(typeof body.error.type).toBe('string');
  expect(body.error.code).toBe(code);
}

describe('authentication and key checks', () => {
  let gateway: TestGateway;
  let account: SeededAccount;

  beforeAll(async () => {
    gateway = await startTestGateway({ env: { MAX_BODY_BYTES: '4096' } });
    await addRoutedModel(gateway, { model: 'sim-chat', channel: { name: 'sim', type: 'simulator', models: ['sim-chat', 'sim-other'] } });
    await gateway.admin('POST', '/admin/models', { id: 'sim-other', pricing: { input_per_mtok: 1 } });
    account = await seedAccount(gateway);
  });

  afterAll(async () => {
    await gateway?.close();
  });

  it('accepts the key as a Bearer token and as x-api-key', async () => {
    expect((await chat(gateway, { authorization: `Bearer ${account.key}` })).status).toBe(200);
    expect((await chat(gateway, { 'x-api-key': account.key })).status).toBe(200);
  });

  it('prefers Authorization over x-api-key', async () => {
    expect((await chat(gateway, { authorization: `Bearer ${account.key}`, 'x-api-key': 'sk-wrongwrongwrongwrongwrongwrong' })).status).toBe(200);
    const refused = await chat(gateway, { authorization: 'Bearer sk-wrongwrongwrongwrongwrongwrong', 'x-api-key': account.key });
    expect(refused.status).toBe(401);
    expectSpecError(refused.body, 'invalid_api_key');
  });

  it('issues and accepts the brand key form', async () => {
    const branded = await gateway.admin<{ key: string }>('POST', `/admin/accounts/${account.accountId}/keys`, { form: 'brand' });
    expect(branded.body.key).toMatch(/^unigate_sk_live_[A-Za-z0-9]{40}$/);
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: branded.body.key, maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] });
    expect(completion.choices[0]?.message.content).toContain('simulated');
  });

  it.each([
    ['missing', {}, 'missing_api_key'],
    ['malformed', { authorization: 'Bearer not-a-key' }, 'invalid_api_key'],
    ['not Bearer', { authorization: 'Basic dXNlcjpwYXNz' }, 'invalid_api_key'],
    ['unknown', { authorization: 'Bearer sk-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }, 'invalid_api_key'],
    ['another brand', { authorization: 'Bearer other_sk_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }, 'invalid_api_key'],
  ])('answers 401 for a %s key', async (_name, headers, code) => {
    const result = await chat(gateway, headers as Record<string, string>);
    expect(result.status).toBe(401);
    expectSpecError(result.body, code);
    expect(result.headers.get('x-request-id')).toMatch(/^req_/);
  });

  it('refuses revoked (401), disabled (403) and expired (401) keys', async () => {
    const revoked = await seedAccount(gateway);
    await gateway.admin('PATCH', `/admin/keys/${revoked.keyId}`, { status: 'revoked' });
    expectSpecError((await chat(gateway, { authorization: `Bearer ${revoked.key}` })).body, 'revoked_api_key');

    const disabled = await seedAccount(gateway);
    await gateway.admin('PATCH', `/admin/keys/${disabled.keyId}`, { status: 'disabled' });
    const disabledResult = await chat(gateway, { authorization: `Bearer ${disabled.key}` });
    expect(disabledResult.status).toBe(403);
    expectSpecError(disabledResult.body, 'key_disabled');

    const expired = await seedAccount(gateway, { key: { expires_at: '2020-01-01T00:00:00Z' } });
    const expiredResult = await chat(gateway, { authorization: `Bearer ${expired.key}` });
    expect(expiredResult.status).toBe(401);
    expectSpecError(expiredResult.body, 'expired_api_key');
  });

  it('refuses a model outside the key allowlist with 403', async () => {
    const limited = await seedAccount(gateway, { key: { allowed_models: ['sim-other'] } });
    const refused = await chat(gateway, { authorization: `Bearer ${limited.key}` });
    expect(refused.status).toBe(403);
    expectSpecError(refused.body, 'model_not_allowed');
    expect((await chat(gateway, { authorization: `Bearer ${limited.key}` }, { ...CHAT, model: 'sim-other' })).status).toBe(200);
    const models = await fetch(`${gateway.baseURL}/models`, { headers: { authorization: `Bearer ${limited.key}` } });
    expect(((await models.json()) as { data: Array<{ id: string }> }).data.map((model) => model.id)).toEqual(['sim-other']);
  });

  it('checks the caller IP against the key allowlist (IPv4 and IPv6 ranges)', async () => {
    const elsewhere = await seedAccount(gateway, { key: { ip_allowlist: ['10.0.0.0/8', '2001:db8::/32'] } });
    const refused = await chat(gateway, { authorization: `Bearer ${elsewhere.key}` });
    expect(refused.status).toBe(403);
    expectSpecError(refused.body, 'ip_not_allowed');
    // Without TRUST_PROXY, X-Forwarded-For is ignored: a caller cannot claim an allowed address.
    expect((await chat(gateway, { authorization: `Bearer ${elsewhere.key}`, 'x-forwarded-for': '10.1.2.3' })).status).toBe(403);
    const local = await seedAccount(gateway, { key: { ip_allowlist: ['127.0.0.1/32', '::1'] } });
    expect((await chat(gateway, { authorization: `Bearer ${local.key}` })).status).toBe(200);
  });

  it('answers 402 insufficient_balance before any upstream call when the account has no funds', async () => {
    const broke = await seedAccount(gateway, { balanceUsd: 0 });
    const result = await chat(gateway, { authorization: `Bearer ${broke.key}` });
    expect(result.status).toBe(402);
    expectSpecError(result.body, 'insufficient_balance');
  });

  it('answers the spec error object for unknown routes, wrong methods, bad JSON and oversize bodies', async () => {
    const unknown = await fetch(`${gateway.url}/v1/nothing-here`);
    expect(unknown.status).toBe(404);
    expectSpecError((await unknown.json()) as ErrorBody, 'not_found');

    const wrongMethod = await fetch(`${gateway.baseURL}/chat/completions`);
    expect(wrongMethod.status).toBe(405);
    expectSpecError((await wrongMethod.json()) as ErrorBody, 'method_not_allowed');

    const badJson = await chat(gateway, { authorization: `Bearer ${account.key}` }, '{"model": "sim-chat", "messages": [');
    expect(badJson.status).toBe(400);
    expectSpecError(badJson.body, 'invalid_json');

    const notObject = await chat(gateway, { authorization: `Bearer ${account.key}` }, '[1,2,3]');
    expect(notObject.status).toBe(400);

    const oversize = await chat(gateway, { authorization: `Bearer ${account.key}` }, { ...CHAT, messages: [{ role: 'user', content: 'x'.repeat(5000) }] });
    expect(oversize.status).toBe(413);
    expectSpecError(oversize.body, 'payload_too_large');
  });

  it('sends rate-limit headers on billed responses and 429 with Retry-After past the key RPM', async () => {
    const limited = await seedAccount(gateway, { key: { rpm: 2 } });
    const first = await chat(gateway, { authorization: `Bearer ${limited.key}` });
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit')).toBe('2');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('1');
    expect(Number(first.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000);
    expect((await chat(gateway, { authorization: `Bearer ${limited.key}` })).status).toBe(200);
    const third = await chat(gateway, { authorization: `Bearer ${limited.key}` });
    expect(third.status).toBe(429);
    expect(third.body.error.type).toBe('rate_limit_error');
    expect(third.body.error.code).toBe('rate_limit_exceeded');
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });
});

describe('trusted proxies decide whether X-Forwarded-For counts', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({ env: { TRUST_PROXY: '127.0.0.1/32,::1' } });
    await addRoutedModel(gateway, { model: 'sim-chat', channel: { name: 'sim', type: 'simulator', models: ['sim-chat'] } });
  });

  afterAll(async () => {
    await gateway?.close();
  });

  it('uses the first untrusted hop of X-Forwarded-For when the peer is a trusted proxy', async () => {
    const office = await seedAccount(gateway, { key: { ip_allowlist: ['203.0.113.0/24'] } });
    expect((await chat(gateway, { authorization: `Bearer ${office.key}`, 'x-forwarded-for': '203.0.113.7' })).status).toBe(200);
    expect((await chat(gateway, { authorization: `Bearer ${office.key}`, 'x-forwarded-for': '203.0.113.7, 198.51.100.1' })).status).toBe(403);
    expect((await chat(gateway, { authorization: `Bearer ${office.key}` })).status).toBe(403);
  });
});
