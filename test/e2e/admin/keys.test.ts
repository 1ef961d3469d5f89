/**
 * API keys through the admin API — shown once, states (enabled, disabled, revoked, expired, paused)
 * and what each does to a chat call, quota caps, spend, IP allowlists.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushWrites, seedAccount, startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { addSimulatorModel, admin, call, chat, expectError, type HttpAnswer } from './helpers.js';

interface KeyJson {
  id: string;
  key?: string;
  account_id: string;
  name: string;
  status: string;
  quota_usd: number | null;
  spent_usd: number;
  allowed_models: string[] | null;
  ip_allowlist: string[] | null;
  expires_at: string | null;
  rpm: number | null;
}

interface UsageRowJson {
  request_id: string;
  status: number;
  cost_usd: number;
}

/** Cheap model for state tests. */
const MODEL = 'keys-sim-model';
/** Expensive model: one simulated answer (24 output tokens) costs 0.024 USD of output alone. */
const PRICEY = 'keys-sim-pricey';

let gateway: TestGateway;
let accountId: string;

beforeAll(async () => {
  gateway = await startTestGateway();
  await addSimulatorModel(gateway, MODEL);
  await addSimulatorModel(gateway, PRICEY, { input_per_mtok: 1000, output_per_mtok: 1000 });
  accountId = (await seedAccount(gateway, { balanceUsd: 50 })).accountId;
});

afterAll(async () => {
  await gateway?.close();
});

async function createKey(attributes: Record<string, unknown> = {}): Promise<{ id: string; key: string; answer: HttpAnswer<KeyJson> }> {
  const answer = await admin<KeyJson>(gateway, 'POST', `/admin/accounts/${accountId}/keys`, attributes);
  expect(answer.status, answer.text).toBe(201);
  return { id: answer.body.id, key: answer.body.key as string, answer };
}

async function getKey(id: string): Promise<KeyJson> {
  const answer = await admin<KeyJson>(gateway, 'GET', `/admin/keys/${id}`);
  expect(answer.status, answer.text).toBe(200);
  return answer.body;
}

async function patchKey(id: string, patch: Record<string, unknown>): Promise<HttpAnswer<KeyJson>> {
  return admin<KeyJson>(gateway, 'PATCH', `/admin/keys/${id}`, patch);
}

describe('issuing keys', () => {
  it('returns the plaintext key once (sk- form) and never again', async () => {
    const { id, key, answer } = await createKey({ name: 'production backend' });
    expect(key).toMatch(/^sk-[A-Za-z0-9_-]{20,}$/);
    expect(answer.body).toMatchObject({ id, account_id: accountId, name: 'production backend', status: 'enabled', spent_usd: 0 });

    const got = await admin<KeyJson>(gateway, 'GET', `/admin/keys/${id}`);
    expect(got.status).toBe(200);
    expect(got.body).not.toHaveProperty('key');
    expect(got.text).not.toContain(key);
    expect(got.text).not.toContain(key.slice(3, 23));
    expect(got.body).toMatchObject({ id, status: 'enabled', spent_usd: 0 });

    const listed = await admin<{ data: KeyJson[] }>(gateway, 'GET', `/admin/accounts/${accountId}/keys`);
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((item) => item.id)).toContain(id);
    expect(listed.text).not.toContain(key);

    const patched = await patchKey(id, { name: 'renamed' });
    expect(patched.status).toBe(200);
    expect(patched.text).not.toContain(key);
    expect((await admin(gateway, 'GET', `/admin/accounts/${accountId}`)).text).not.toContain(key);

    const answerChat = await chat(gateway, key, MODEL);
    expect(answerChat.status, answerChat.text).toBe(200);
  });

  it('issues the brand form with form: "brand", and it works with the openai SDK', async () => {
    const { key } = await createKey({ form: 'brand' });
    expect(key).toMatch(/^unigate_sk_live_[A-Za-z0-9_-]{20,}$/);
    const sdk = new OpenAI({ baseURL: gateway.baseURL, apiKey: key, maxRetries: 0 });
    const completion = await sdk.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
    expect(completion.choices[0]?.message.role).toBe('assistant');
  });

  it('issues a different secret every time', async () => {
    const keys = new Set<string>();
    for (let index = 0; index < 5; index += 1) keys.add((await createKey()).key);
    expect(keys.size).toBe(5);
  });

  it('validates key attributes (400 naming the field)', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ form: 'pk' }, 'form'],
      [{ quota_usd: -1 }, 'quota_usd'],
      [{ quota_usd: 'lots' }, 'quota_usd'],
      [{ rpm: 0 }, 'rpm'],
      [{ tpm: 1.5 }, 'tpm'],
      [{ concurrency: -2 }, 'concurrency'],
      [{ expires_at: 'next tuesday' }, 'expires_at'],
      [{ allowed_models: 'gpt-4o' }, 'allowed_models'],
      [{ ip_allowlist: ['10.0.0.0/33'] }, 'ip_allowlist'],
      [{ ip_allowlist: ['300.1.2.3'] }, 'ip_allowlist'],
      [{ ip_allowlist: ['localhost'] }, 'ip_allowlist'],
      [{ ip_allowlist: ['10.0.0.0/8/1'] }, 'ip_allowlist'],
      [{ ip_allowlist: ['2001:db8::/129'] }, 'ip_allowlist'],
      [{ ip_allowlist: '127.0.0.1' }, 'ip_allowlist'],
    ];
    const before = (await admin<{ data: KeyJson[] }>(gateway, 'GET', `/admin/accounts/${accountId}/keys?limit=200`)).body.data.length;
    for (const [body, param] of cases) {
      const answer = await admin(gateway, 'POST', `/admin/accounts/${accountId}/keys`, body);
      expectError(answer, { status: 400, param });
    }
    const after = (await admin<{ data: KeyJson[] }>(gateway, 'GET', `/admin/accounts/${accountId}/keys?limit=200`)).body.data.length;
    expect(after).toBe(before);

    const { id } = await createKey();
    expectError(await patchKey(id, { ip_allowlist: ['192.168.1.0/40'] }), { status: 400, param: 'ip_allowlist' });
    expectError(await patchKey(id, { status: 'paused' }), { status: 400, param: 'status' });
    expectError(await patchKey(id, { status: 'expired' }), { status: 400, param: 'status' });
    expect((await getKey(id)).ip_allowlist).toBeNull();
  });

  it('answers 404 for unknown key ids', async () => {
    expectError(await admin(gateway, 'GET', '/admin/keys/key_doesnotexist'), { status: 404, code: 'not_found' });
    expectError(await patchKey('key_doesnotexist', { status: 'disabled' }), { status: 404 });
  });
});

describe('key states and chat calls', () => {
  it('refuses missing and unknown keys with 401', async () => {
    expectError(await chat(gateway, null, MODEL), { status: 401, type: 'authentication_error' });
    expectError(await chat(gateway, 'sk-thisKeyWasNeverIssuedByTheGateway0123', MODEL), { status: 401, type: 'authentication_error' });
  });

  it('disabled → 403 key_disabled; enabled again → 200', async () => {
    const { id, key } = await createKey();
    expect((await chat(gateway, key, MODEL)).status).toBe(200);

    const disabled = await patchKey(id, { status: 'disabled' });
    expect(disabled.status, disabled.text).toBe(200);
    expect(disabled.body.status).toBe('disabled');
    expect((await getKey(id)).status).toBe('disabled');
    expectError(await chat(gateway, key, MODEL), { status: 403, code: 'key_disabled' });

    const enabled = await patchKey(id, { status: 'enabled' });
    expect(enabled.body.status).toBe('enabled');
    const answer = await chat(gateway, key, MODEL);
    expect(answer.status, answer.text).toBe(200);
  });

  it('revoked → 401, final: it cannot be re-enabled or changed (409)', async () => {
    const { id, key } = await createKey();
    expect((await chat(gateway, key, MODEL)).status).toBe(200);
    const revoked = await patchKey(id, { status: 'revoked' });
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.body.status).toBe('revoked');

    expectError(await chat(gateway, key, MODEL), { status: 401, type: 'authentication_error' });
    expectError(await patchKey(id, { status: 'enabled' }), { status: 409 });
    expectError(await patchKey(id, { status: 'disabled' }), { status: 409 });
    expect((await getKey(id)).status).toBe('revoked');
    expectError(await chat(gateway, key, MODEL), { status: 401 });
  });

  it('expires_at in the past → 401 expired_api_key and status "expired"; a future expiry works', async () => {
    const past = await createKey({ expires_at: Math.floor(Date.now() / 1000) - 60 });
    expectError(await chat(gateway, past.key, MODEL), { status: 401, code: 'expired_api_key' });
    const got = await getKey(past.id);
    expect(got.status).toBe('expired');
    expect(Date.parse(got.expires_at ?? '')).toBeLessThan(Date.now());

    const isoPast = await createKey({ expires_at: new Date(Date.now() - 3_600_000).toISOString() });
    expectError(await chat(gateway, isoPast.key, MODEL), { status: 401, code: 'expired_api_key' });
    expect((await getKey(isoPast.id)).status).toBe('expired');

    const future = await createKey({ expires_at: new Date(Date.now() + 86_400_000).toISOString() });
    expect((await chat(gateway, future.key, MODEL)).status).toBe(200);
    expect((await getKey(future.id)).status).toBe('enabled');

    // Expiring a working key takes effect at once; clearing the expiry brings it back.
    expect((await patchKey(future.id, { expires_at: Math.floor(Date.now() / 1000) - 1 })).status).toBe(200);
    expectError(await chat(gateway, future.key, MODEL), { status: 401, code: 'expired_api_key' });
    expect((await patchKey(future.id, { expires_at: null })).status).toBe(200);
    expect((await chat(gateway, future.key, MODEL)).status).toBe(200);
  });

  it('allowed_models outside the list → 403', async () => {
    const { id, key } = await createKey({ allowed_models: [PRICEY] });
    expectError(await chat(gateway, key, MODEL), { status: 403, type: 'permission_error' });
    expect((await patchKey(id, { allowed_models: [PRICEY, MODEL] })).status).toBe(200);
    expect((await chat(gateway, key, MODEL)).status).toBe(200);
  });

  it('an IP allowlist without the caller → 403; with it (CIDR or IPv6) → 200', async () => {
    const outside = await createKey({ ip_allowlist: ['10.0.0.0/8', '2001:db8::/32'] });
    expectError(await chat(gateway, outside.key, MODEL), { status: 403, type: 'permission_error' });
    const inside = await createKey({ ip_allowlist: ['10.0.0.0/8', '127.0.0.0/8', '::1'] });
    expect((await getKey(inside.id)).ip_allowlist).toEqual(['10.0.0.0/8', '127.0.0.0/8', '::1']);
    expect((await chat(gateway, inside.key, MODEL)).status).toBe(200);
    expect((await patchKey(outside.id, { ip_allowlist: ['127.0.0.1/32', '::1/128'] })).status).toBe(200);
    expect((await chat(gateway, outside.key, MODEL)).status).toBe(200);
    expect((await patchKey(outside.id, { ip_allowlist: null })).status).toBe(200);
    expect((await chat(gateway, outside.key, MODEL)).status).toBe(200);
  });

  it('a per-key rpm limit answers 429 with Retry-After once reached', async () => {
    const { key } = await createKey({ rpm: 2 });
    const first = await chat(gateway, key, MODEL);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit')).toBe('2');
    expect((await chat(gateway, key, MODEL)).status).toBe(200);
    const limited = await chat(gateway, key, MODEL);
    expectError(limited, { status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded' });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });
});

describe('quota caps and spend', () => {
  it('spent_usd reflects charges; a request whose upper bound exceeds the cap is refused; at the cap the key is paused (429 quota_exhausted)', async () => {
    const { id, key } = await createKey({ quota_usd: 0.01 });
    expect((await getKey(id))).toMatchObject({ status: 'enabled', quota_usd: 0.01, spent_usd: 0 });

    // The upper bound (prompt + 4096 output tokens at 1000 USD per million) cannot be held from a 0.01 cap.
    const tooBig = await chat(gateway, key, PRICEY);
    expectError(tooBig, { status: 429, type: 'rate_limit_error', code: 'quota_exhausted' });
    await flushWrites(gateway);
    expect((await getKey(id)).spent_usd).toBe(0);

    expect((await patchKey(id, { quota_usd: 5 })).status).toBe(200);
    const first = await chat(gateway, key, PRICEY);
    expect(first.status, first.text).toBe(200);
    await flushWrites(gateway);

    const usage = await admin<{ data: UsageRowJson[] }>(gateway, 'GET', `/admin/usage?key_id=${id}&status=200`);
    expect(usage.body.data).toHaveLength(1);
    const cost = usage.body.data[0]?.cost_usd ?? 0;
    expect(cost).toBeGreaterThan(0.01);
    expect(usage.body.data[0]?.request_id).toBe(first.headers.get('x-request-id'));
    expect((await getKey(id)).spent_usd).toBe(cost);

    // The cap lowered to the spend: paused.
    expect((await patchKey(id, { quota_usd: cost })).status).toBe(200);
    const paused = await getKey(id);
    expect(paused.spent_usd).toBe(cost);
    expect(paused.status).toBe('paused');

    const refused = await chat(gateway, key, PRICEY);
    expectError(refused, { status: 429, type: 'rate_limit_error', code: 'quota_exhausted' });
    expect(refused.headers.get('retry-after')).not.toBeNull();
    expectError(await chat(gateway, key, MODEL), { status: 429, code: 'quota_exhausted' });
    await flushWrites(gateway);
    // Refused calls are not charged.
    expect((await getKey(id)).spent_usd).toBe(cost);

    const raised = await patchKey(id, { quota_usd: 10 });
    expect(raised.status, raised.text).toBe(200);
    expect(raised.body.status).toBe('enabled');
    expect((await getKey(id)).status).toBe('enabled');
    const resumed = await chat(gateway, key, PRICEY);
    expect(resumed.status, resumed.text).toBe(200);
    await flushWrites(gateway);

    const rows = (await admin<{ data: UsageRowJson[] }>(gateway, 'GET', `/admin/usage?key_id=${id}&status=200`)).body.data;
    expect(rows).toHaveLength(2);
    const total = rows.reduce((sum, row) => sum + Math.round(row.cost_usd * 1e9), 0) / 1e9;
    expect((await getKey(id)).spent_usd).toBe(total);

    // Removing the cap (null) keeps it enabled whatever it spent.
    expect((await patchKey(id, { quota_usd: null })).body.status).toBe('enabled');
  });

  it('charges the account balance by exactly what the keys spent', async () => {
    // Each request holds an upper bound of about 4.1 USD (4096 output tokens at 1000 USD per million) until settled.
    const seeded = await seedAccount(gateway, { balanceUsd: 30 });
    for (let index = 0; index < 3; index += 1) expect((await chat(gateway, seeded.key, PRICEY, { content: `question ${index}` })).status).toBe(200);
    await flushWrites(gateway);
    const spent = (await getKey(seeded.keyId)).spent_usd;
    expect(spent).toBeGreaterThan(0);
    const rows = (await admin<{ data: UsageRowJson[] }>(gateway, 'GET', `/admin/usage?key_id=${seeded.keyId}`)).body.data;
    const total = rows.reduce((sum, row) => sum + Math.round(row.cost_usd * 1e9), 0);
    expect(Math.round(spent * 1e9)).toBe(total);
    const account = await admin<{ balance_usd: number }>(gateway, 'GET', `/admin/accounts/${seeded.accountId}`);
    expect(Math.round(account.body.balance_usd * 1e9)).toBe(30_000_000_000 - total);
  });

  it('a plain fetch with x-api-key instead of Authorization is also accepted for chat', async () => {
    const { key } = await createKey();
    const answer = await call(gateway.url, 'POST', '/v1/chat/completions', { headers: { 'x-api-key': key }, body: { model: MODEL, messages: [{ role: 'user', content: 'x' }] } });
    expect(answer.status, answer.text).toBe(200);
  });
});
