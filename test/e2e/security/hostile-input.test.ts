/**
 * Attack probes against one gateway: bodies nested far too deep, money and limits past their columns, and
 * credential guessing. Each answers a clear 4xx in the caller's family, never a 500, and leaves state consistent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, flushWrites, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { familyErrorProblem, type Family } from '../../support/family-error.js';
import { MAX_JSON_DEPTH } from '../../../src/wire/json-depth.js';
import { call } from '../admin/helpers.js';

const MODEL = 'hostile-model';
const DEEP = 100_000;

/** `[[[ … 0 … ]]]` nested `depth` levels, as raw JSON text (JSON.stringify itself could not build it). */
function nested(depth: number): string {
  return `${'['.repeat(depth)}0${']'.repeat(depth)}`;
}

interface Probe {
  name: string;
  family: Family;
  path: string;
  headers: (key: string) => Record<string, string>;
  /** The body with `INNER` where the nested value goes. */
  template: string;
}

const openAIHeaders = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });
const PROBES: Probe[] = [
  { name: 'chat, extra field', family: 'openai', path: '/v1/chat/completions', headers: openAIHeaders,
    template: `{"model":"${MODEL}","messages":[{"role":"user","content":"hi"}],"extra":INNER}` },
  { name: 'chat, tool parameters', family: 'openai', path: '/v1/chat/completions', headers: openAIHeaders,
    template: `{"model":"${MODEL}","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"x":INNER}}}}]}` },
  { name: 'messages (translated to Anthropic wire)', family: 'anthropic', path: '/v1/messages',
    headers: (key) => ({ 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' }),
    template: `{"model":"${MODEL}","max_tokens":8,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":{"type":"object","properties":{"x":INNER}}}]}` },
  { name: 'Gemini generateContent', family: 'gemini', path: `/v1beta/models/${MODEL}:generateContent`,
    headers: (key) => ({ 'x-goog-api-key': key, 'content-type': 'application/json' }),
    template: '{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"extra":INNER}' },
  { name: 'Responses', family: 'openai', path: '/v1/responses', headers: openAIHeaders,
    template: `{"model":"${MODEL}","input":"hi","metadata_extra":INNER}` },
];

async function post(gateway: TestGateway, probe: Probe, key: string, inner: string): Promise<{ status: number; text: string }> {
  const response = await fetch(gateway.url + probe.path, { method: 'POST', headers: probe.headers(key), body: probe.template.replace('INNER', inner) });
  return { status: response.status, text: await response.text() };
}

describe('hostile input', () => {
  let gateway: TestGateway;
  let account: SeededAccount;
  let channelId = '';

  beforeAll(async () => {
    gateway = await startTestGateway({ env: { MAX_BODY_BYTES: String(4 * 1024 * 1024) } });
    channelId = (await addRoutedModel(gateway, { model: MODEL, channel: { name: 'hostile-sim', type: 'simulator', models: [MODEL] } })).channelId;
    account = await seedAccount(gateway, { balanceUsd: 5 });
  });

  afterAll(async () => {
    await gateway?.close();
  });

  it.each(PROBES)(`refuses $name nested ${DEEP} levels deep with 400 in its family's shape`, async (probe) => {
    const answer = await post(gateway, probe, account.key, nested(DEEP));
    expect(answer.status, answer.text.slice(0, 300)).toBe(400);
    expect(familyErrorProblem(probe.family, answer.text)).toBeNull();
    expect(answer.text).toContain(`deeper than ${MAX_JSON_DEPTH} levels`);
  });

  it.each(PROBES)('accepts $name nested just within the limit (not refused for depth)', async (probe) => {
    // The template itself adds a few levels around INNER; 50 more stays under the limit of 64.
    const answer = await post(gateway, probe, account.key, nested(50));
    expect(answer.text).not.toContain('levels');
    expect(answer.status, answer.text.slice(0, 300)).toBeLessThan(500);
  });

  it('counts brackets inside strings as text, not nesting', async () => {
    const probe = PROBES[0] as Probe;
    const answer = await post(gateway, probe, account.key, JSON.stringify(`${'['.repeat(5000)}\\"{{{"`));
    expect(answer.status, answer.text.slice(0, 300)).toBe(200);
  });

  it(`refuses a channel PATCH whose settings nest ${DEEP} levels deep with 400`, async () => {
    const response = await fetch(`${gateway.url}/admin/channels/${channelId}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${gateway.adminToken}`, 'content-type': 'application/json' },
      body: `{"settings":{"x":${nested(DEEP)}}}`,
    });
    const text = await response.text();
    expect(response.status, text.slice(0, 300)).toBe(400);
    expect(familyErrorProblem('openai', text)).toBeNull();
    expect((await gateway.admin<{ settings: Record<string, unknown> }>('GET', `/admin/channels/${channelId}`)).body.settings).not.toHaveProperty('x');
  });

  it('refuses credits that would take a balance past 1,000,000,000 USD with 400 and keeps the ledger consistent', async () => {
    const rich = await seedAccount(gateway, { balanceUsd: 0 });
    const statuses: number[] = [];
    for (let index = 0; index < 10; index += 1) {
      const answer = await call(gateway.url, 'POST', `/admin/accounts/${rich.accountId}/credits`, { token: gateway.adminToken, body: { amount_usd: 1e9 } });
      statuses.push(answer.status);
      if (answer.status !== 200) {
        expect(familyErrorProblem('openai', answer.text)).toBeNull();
        expect(answer.body).toMatchObject({ error: { code: 'bad_request', param: 'amount_usd' } });
      }
    }
    expect(statuses).toEqual([200, 400, 400, 400, 400, 400, 400, 400, 400, 400]);
    // A debt of the same size is the other end of the range.
    expect((await call(gateway.url, 'POST', `/admin/accounts/${rich.accountId}/credits`, { token: gateway.adminToken, body: { amount_usd: -1e9 } })).status).toBe(200);
    expect((await call(gateway.url, 'POST', `/admin/accounts/${rich.accountId}/credits`, { token: gateway.adminToken, body: { amount_usd: -1e9 } })).status).toBe(200);
    expect((await call(gateway.url, 'POST', `/admin/accounts/${rich.accountId}/credits`, { token: gateway.adminToken, body: { amount_usd: -0.01 } })).status).toBe(400);
    const accountJson = await gateway.admin<{ balance_usd: number }>('GET', `/admin/accounts/${rich.accountId}`);
    expect(accountJson.body.balance_usd).toBe(-1e9);
    const ledger = await gateway.admin<{ data: Array<{ amount_usd: number }> }>('GET', `/admin/accounts/${rich.accountId}/ledger?limit=50`);
    expect(ledger.body.data.map((entry) => entry.amount_usd).sort()).toEqual([-1e9, -1e9, 1e9].sort());
    expect(await gateway.gateway.services.storage.ledger.sumByAccount(rich.accountId)).toBe(-1_000_000_000n * 1_000_000_000n);
  });

  it('logs usage of requests naming NUL-laden or enormous models without blocking the usage writer', async () => {
    const answers = await Promise.all([
      fetch(`${gateway.url}/v1beta/models/%00bad${'m'.repeat(3000)}:generateContent`, { method: 'POST', headers: { 'x-goog-api-key': account.key, 'content-type': 'application/json' }, body: '{"contents":[{"parts":[{"text":"hi"}]}]}' }),
      fetch(`${gateway.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'x\u0000y', messages: [{ role: 'user', content: 'hi' }] }) }),
    ]);
    for (const answer of answers) expect(answer.status).toBe(400);
    const flushed = await Promise.race([flushWrites(gateway).then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), 5000))]);
    expect(flushed, 'usage rows written within 5 s').toBe(true);
    const usage = await gateway.admin<{ data: Array<{ model: string | null; status: number }> }>('GET', `/admin/usage?key_id=${account.keyId}&status=400&limit=200`);
    expect(usage.status).toBe(200);
    expect(usage.body.data.some((row) => row.model?.startsWith('x\uFFFDy') === true)).toBe(true);
  });

  it('refuses admin text with a NUL character with 400 (PostgreSQL cannot store it)', async () => {
    for (const [route, body] of [
      [`/admin/accounts/${account.accountId}/keys`, { name: 'a\u0000b' }],
      ['/admin/announcements', { title: 'x\u0000' }],
      ['/admin/channels', { name: 'c\u0000', type: 'simulator', models: [MODEL] }],
      [`/admin/accounts/${account.accountId}/credits`, { amount_usd: 1, reason: '\u0000' }],
      [`/admin/channels`, { name: 'ok-name', type: 'simulator', models: [MODEL], settings: { 'k\u0000': 1 } }],
    ] as const) {
      const answer = await call(gateway.url, 'POST', route, { token: gateway.adminToken, body });
      expect(answer.status, `${route}: ${answer.text}`).toBe(400);
      expect(familyErrorProblem('openai', answer.text)).toBeNull();
    }
    const literal = await call(gateway.url, 'POST', `/admin/accounts/${account.accountId}/keys`, { token: gateway.adminToken, body: { name: 'backslash \\u0000 is text' } });
    expect(literal.status, literal.text).toBe(201);
  });

  it('refuses a redemption code that would take the balance past the maximum, leaving the code unredeemed', async () => {
    const rich = await seedAccount(gateway, { balanceUsd: 999_999_999 });
    const created = await gateway.admin<{ data: Array<{ id: string; code: string }> }>('POST', '/admin/redemption-codes', { amount_usd: 2, count: 1 });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const code = created.body.data[0] as { id: string; code: string };
    const answer = await call(gateway.url, 'POST', '/v1/dashboard/billing/redeem', { token: rich.key, body: { code: code.code } });
    expect(answer.status, answer.text).toBe(400);
    expect(familyErrorProblem('openai', answer.text)).toBeNull();
    expect((await gateway.admin<{ balance_usd: number }>('GET', `/admin/accounts/${rich.accountId}`)).body.balance_usd).toBe(999_999_999);
    expect((await gateway.admin<{ state: string; redeemed_by: string | null }>('GET', `/admin/redemption-codes/${code.id}`)).body).toMatchObject({ state: 'active', redeemed_by: null });
  });

  it('stores a TPM of 10^12 on either database and refuses limits past 2^53 - 1 and times past year 9999 with 400', async () => {
    const huge = await call(gateway.url, 'POST', `/admin/accounts/${account.accountId}/keys`, { token: gateway.adminToken, body: { tpm: 1_000_000_000_000, rpm: 2_147_483_648, concurrency: 5_000_000_000 } });
    expect(huge.status, huge.text).toBe(201);
    expect(huge.body).toMatchObject({ tpm: 1_000_000_000_000, rpm: 2_147_483_648, concurrency: 5_000_000_000 });
    const keyId = (huge.body as { id: string }).id;
    expect((await gateway.admin('GET', `/admin/keys/${keyId}`)).body).toMatchObject({ tpm: 1_000_000_000_000 });
    for (const [method, route, body] of [
      ['PATCH', `/admin/keys/${account.keyId}`, { tpm: 1_000_000_000_000 }],
      ['PATCH', `/admin/models/${MODEL}`, { limits: { rpm: 1_000_000_000_000, tpm: 1_000_000_000_000 } }],
      ['POST', '/admin/plans', { name: 'huge', period: 'month', quota_usd: 1, overage: { policy: 'deny' }, rpm: 1_000_000_000_000, tpm: 1_000_000_000_000 }],
    ] as const) {
      const answer = await call(gateway.url, method, route, { token: gateway.adminToken, body });
      expect(answer.status, `${method} ${route}: ${answer.text}`).toBeLessThan(300);
    }
    // A key with such limits still serves requests.
    const served = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${(huge.body as { key: string }).key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(served.status).toBe(200);

    const refused: Array<[string, string, unknown]> = [
      ['POST', `/admin/accounts/${account.accountId}/keys`, { tpm: 2 ** 53 }],
      ['POST', `/admin/accounts/${account.accountId}/keys`, { concurrency: 1e300 }],
      ['POST', `/admin/accounts/${account.accountId}/keys`, { expires_at: 1e15 }],
      ['PATCH', `/admin/models/${MODEL}`, { limits: { tpm: 2 ** 60 } }],
    ];
    for (const [method, route, body] of refused) {
      const answer = await call(gateway.url, method, route, { token: gateway.adminToken, body });
      expect(answer.status, `${method} ${route} ${JSON.stringify(body)}: ${answer.text}`).toBe(400);
      expect(familyErrorProblem('openai', answer.text)).toBeNull();
    }
  });
});

describe('failed-credential limits per IP address', () => {
  let gateway: TestGateway;
  let account: SeededAccount;
  const attacker = { 'x-forwarded-for': '203.0.113.5' };
  const honest = { 'x-forwarded-for': '198.51.100.7' };

  beforeAll(async () => {
    gateway = await startTestGateway({ env: { AUTH_FAILURE_LIMIT: '5', AUTH_FAILURE_WINDOW_SECONDS: '60', TRUST_PROXY: 'true' } });
    await addRoutedModel(gateway, { model: MODEL, channel: { name: 'guess-sim', type: 'simulator', models: [MODEL] } });
    account = await seedAccount(gateway, { balanceUsd: 5 });
  });

  afterAll(async () => {
    await gateway?.close();
  });

  it('answers 429 with Retry-After after 5 wrong admin tokens from one address, even to the right token, and logs it once', async () => {
    const statuses: number[] = [];
    for (let index = 0; index < 8; index += 1) {
      statuses.push((await call(gateway.url, 'GET', '/admin/channels', { token: `adm_guess_${index}_0123456789abcdef`, headers: attacker })).status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
    const refused = await call(gateway.url, 'GET', '/admin/channels', { token: gateway.adminToken, headers: attacker });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.body).toMatchObject({ error: { type: 'rate_limit_error', code: 'too_many_failed_attempts' } });
    expect(familyErrorProblem('openai', refused.text)).toBeNull();
    // Another address, and API-key callers from the same address, are not slowed.
    expect((await call(gateway.url, 'GET', '/admin/channels', { token: gateway.adminToken, headers: honest })).status).toBe(200);
    expect((await call(gateway.url, 'GET', '/v1/models/' + MODEL, { token: account.key, headers: attacker })).status).toBe(200);
    expect(gateway.logs.filter((line) => line.includes('failed-credential limit reached') && line.includes('admin-token'))).toHaveLength(1);
  });

  it('answers 429 in the caller\'s family after 5 unknown API keys, while valid callers elsewhere go on', async () => {
    const wrong = `sk-${'x'.repeat(48)}`;
    const statuses: number[] = [];
    for (let index = 0; index < 6; index += 1) {
      const response = await fetch(`${gateway.url}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': `${wrong.slice(0, -1)}${index}`, 'anthropic-version': '2023-06-01', 'content-type': 'application/json', ...attacker },
        body: JSON.stringify({ model: MODEL, max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }),
      });
      const text = await response.text();
      statuses.push(response.status);
      expect(familyErrorProblem('anthropic', text)).toBeNull();
      if (response.status === 429) expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
    const valid = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json', ...honest },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(valid.status).toBe(200);
  });
});
