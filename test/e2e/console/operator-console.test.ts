/**
 * The operator's console over real HTTP: the first operator made with the admin token, a second factor required
 * before any operator route answers, the admin API's own handlers behind /api/operator/admin/ (a channel to a mock
 * upstream and its test probe, a priced model, a credited account whose key works through the OpenAI SDK, a ticket
 * answered), the overview and usage seeing the call, and every change in the audit log (secrets removed) and its CSV.
 * Viewers, support and non-operators are refused every change over the wire, not only in the pages.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode, type ConsoleClient } from '../../support/console-client.js';
import { flushWrites } from '../../support/gateway-harness.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { signUpUser, startConsoleGateway, type ConsoleGateway, type SignedUpUser } from './console-gateway.js';

const UPSTREAM_SECRET = 'sk-proj-OPERATORUPSTREAMsecret0123456789abcd';
const STEP_MS = 30_000;

let setup: ConsoleGateway;
let upstream: MockOpenAIUpstream;
let owner: ConsoleClient;
let ownerUserId: string;
let channelId: string;
let accountId: string;
let apiKey: string;
let modelId: string;

const now = (): number => Date.now() + setup.shift.offset;

/** Turns on TOTP for a signed-in client; moves the clock one step so later codes are fresh. */
async function enrolTwoFactor(client: ConsoleClient): Promise<string> {
  const started = await client.request<{ secret: string }>('POST', '/api/me/two-factor/setup');
  expect(started.status, started.text).toBe(200);
  const enabled = await client.request('POST', '/api/me/two-factor/enable', { code: totpCode(started.body.secret, now()) });
  expect(enabled.status, enabled.text).toBe(200);
  setup.shift.offset += STEP_MS;
  return started.body.secret;
}

beforeAll(async () => {
  upstream = await startMockOpenAIUpstream({ apiKey: UPSTREAM_SECRET });
  setup = await startConsoleGateway();
});

afterAll(async () => {
  await setup?.close();
  await upstream?.close();
});

describe('the first operator, with the admin token', () => {
  it('refuses a wrong admin token, signs in with the right one, and requires a second factor before anything else', async () => {
    owner = setup.client();
    const email = `owner-${Date.now()}@example.com`;
    const wrong = await owner.request('POST', '/api/operator/bootstrap', { admin_token: 'adm_wrong', email, password: 'Tide-41ab9c-Lantern' });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toMatchObject({ error: { code: 'invalid_admin_token' } });

    const made = await owner.request<{ role: string; two_factor_required: boolean; user: { id: string } }>('POST', '/api/operator/bootstrap', { admin_token: setup.gateway.adminToken, email, password: 'Tide-41ab9c-Lantern' });
    expect(made.status, made.text).toBe(201);
    expect(made.body).toMatchObject({ role: 'owner', two_factor_required: true });
    ownerUserId = made.body.user.id;

    const blocked = await owner.request('GET', '/api/operator/admin/channels');
    expect(blocked.status).toBe(403);
    expect(blocked.body).toMatchObject({ error: { code: 'two_factor_required' } });
    expect((await owner.request('GET', '/api/operator/me')).body).toMatchObject({ role: 'owner', two_factor_required: true });

    await enrolTwoFactor(owner);
    expect((await owner.request('GET', '/api/operator/me')).body).toMatchObject({ role: 'owner', two_factor_required: false });
    expect((await owner.request('GET', '/api/operator/admin/channels')).status).toBe(200);

    // Only once: with an operator in place the admin token makes no second one.
    const again = await setup.client().request('POST', '/api/operator/bootstrap', { admin_token: setup.gateway.adminToken, email: `x-${email}`, password: 'Tide-41ab9c-Lantern' });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ error: { code: 'operators_exist' } });
  });

  it('refuses a change without the CSRF token', async () => {
    const answer = await owner.request('POST', '/api/operator/admin/accounts', { email: 'nocsrf@example.com' }, { csrf: false });
    expect(answer.status).toBe(403);
    expect(answer.body).toMatchObject({ error: { code: 'csrf_failed' } });
  });
});

describe('running the gateway from the console', () => {
  it('creates a channel to a mock upstream and its test probe answers with latency', async () => {
    const created = await owner.request<{ id: string }>('POST', '/api/operator/admin/channels', { name: 'mock-openai', type: 'openai', base_url: upstream.url, api_key: UPSTREAM_SECRET, models: ['gpt-4o-mini'] });
    expect(created.status, created.text).toBe(201);
    expect(created.text).not.toContain(UPSTREAM_SECRET);
    channelId = created.body.id;
    const probe = await owner.request<{ ok: boolean; latency_ms: number; model: string }>('POST', `/api/operator/admin/channels/${channelId}/test`, {});
    expect(probe.status, probe.text).toBe(200);
    expect(probe.body.ok, probe.text).toBe(true);
    expect(probe.body.latency_ms).toBeGreaterThanOrEqual(0);
    expect(upstream.requests.length).toBeGreaterThan(0);
  });

  it('prices a model, credits an account, and that account\'s key works through the OpenAI SDK', async () => {
    modelId = 'gpt-4o-mini';
    const model = await owner.request('POST', '/api/operator/admin/models', { id: modelId, public: true, pricing: { input_per_mtok: 1, output_per_mtok: 2 } });
    expect(model.status, model.text).toBe(201);
    const account = await owner.request<{ id: string }>('POST', '/api/operator/admin/accounts', { email: `customer-${Date.now()}@example.com` });
    expect(account.status, account.text).toBe(201);
    accountId = account.body.id;
    const credit = await owner.request<{ balance_usd: number }>('POST', `/api/operator/admin/accounts/${accountId}/credits`, { amount_usd: 5, reason: 'welcome credit' });
    expect(credit.status, credit.text).toBe(200);
    expect(credit.body.balance_usd).toBe(5);
    const key = await owner.request<{ key: string }>('POST', `/api/operator/admin/accounts/${accountId}/keys`, { name: 'from the console' });
    expect(key.status, key.text).toBe(201);
    apiKey = key.body.key;

    const sdk = new OpenAI({ apiKey, baseURL: setup.gateway.baseURL, maxRetries: 0 });
    const answer = await sdk.chat.completions.create({ model: modelId, messages: [{ role: 'user', content: 'hello operator' }] });
    expect(answer.choices[0]?.message.content).toBeTruthy();
  });

  it('the overview and the usage explorer show the call', async () => {
    await flushWrites(setup.gateway);
    const deadline = Date.now() + 5000;
    type Overview = { totals: { requests: number }; by_model: { name: string; requests: number }[]; by_channel: { name: string }[]; active_accounts: number };
    let overview: Overview;
    for (;;) {
      const answer = await owner.request<Overview>('GET', '/api/operator/overview?window=1h');
      expect(answer.status, answer.text).toBe(200);
      overview = answer.body;
      if (overview.totals.requests >= 1 || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(overview.totals.requests).toBeGreaterThanOrEqual(1);
    expect(overview.by_model.some((row) => row.name === modelId)).toBe(true);
    expect(overview.by_channel.some((row) => row.name === channelId)).toBe(true);
    expect(overview.active_accounts).toBeGreaterThanOrEqual(1);

    const usage = await owner.request<{ data: { model: string; account_id: string }[] }>('GET', `/api/operator/admin/usage?account_id=${accountId}`);
    expect(usage.status, usage.text).toBe(200);
    expect(usage.body.data.some((row) => row.model === modelId)).toBe(true);
  });
});

describe('support tickets', () => {
  let user: SignedUpUser;
  let ticketId: string;

  it('a reply from the operator reaches the user', async () => {
    user = await signUpUser(setup);
    const opened = await user.client.request<{ id: string }>('POST', '/api/console/support/tickets', { subject: 'Key refused', category: 'technical', message: 'My key says 401.' });
    expect(opened.status, opened.text).toBe(201);
    ticketId = opened.body.id;
    const queue = await owner.request<{ data: { id: string }[] }>('GET', '/api/operator/admin/support/tickets?status=open');
    expect(queue.body.data.some((ticket) => ticket.id === ticketId)).toBe(true);
    const reply = await owner.request('POST', `/api/operator/admin/support/tickets/${ticketId}/replies`, { body: 'Fixed: the key was disabled by mistake.', status: 'closed' });
    expect(reply.status, reply.text).toBe(201);
    const seen = await user.client.request<{ status: string; replies: { body: string }[] }>('GET', `/api/console/support/tickets/${ticketId}`);
    expect(seen.status, seen.text).toBe(200);
    expect(seen.body.status).toBe('closed');
    expect(JSON.stringify(seen.body.replies)).toContain('Fixed: the key was disabled by mistake.');
  });
});

describe("a user's sign-in status", () => {
  it('locks a user out (sessions end, sign-in refused), unlocks, and resets a lost second factor with a note of the identity check', async () => {
    const person = await signUpUser(setup);
    const secret = await enrolTwoFactor(person.client);
    const found = await owner.request<{ data: { id: string; two_factor_enabled: boolean; locked: unknown }[] }>('GET', `/api/operator/users?email=${encodeURIComponent(person.email)}`);
    expect(found.status, found.text).toBe(200);
    expect(found.body.data[0]).toMatchObject({ id: person.userId, two_factor_enabled: true, locked: null });

    const locked = await owner.request('POST', `/api/operator/users/${person.userId}/lock`, { reason: 'card fraud report' });
    expect(locked.status, locked.text).toBe(200);
    expect(locked.body).toMatchObject({ locked: { reason: 'card fraud report' }, active_sessions: 0 });
    expect((await person.client.request('GET', '/api/session')).body).toMatchObject({ user: null });
    // The lock shows only after both factors, so a password alone tells nothing.
    const stranger = setup.client();
    const first = await stranger.signIn(person.email, person.password);
    expect(first.body).toMatchObject({ status: 'two_factor_required' });
    const refused = await stranger.request('POST', '/api/auth/sign-in/two-factor', { challenge: (first.body as { challenge: string }).challenge, code: totpCode(secret, now()) });
    expect(refused.status, refused.text).toBe(403);
    expect(refused.body).toMatchObject({ error: { code: 'account_locked' } });

    expect((await owner.request('POST', `/api/operator/users/${person.userId}/unlock`)).status).toBe(200);
    const tooShort = await owner.request('POST', `/api/operator/users/${person.userId}/reset-two-factor`, { identity_check: 'ok' });
    expect(tooShort.status).toBe(400);
    const reset = await owner.request('POST', `/api/operator/users/${person.userId}/reset-two-factor`, { identity_check: 'called back on the phone number of the invoice' });
    expect(reset.status, reset.text).toBe(200);
    expect(reset.body).toMatchObject({ two_factor_enabled: false });
    // Signs in again with the password alone.
    expect((await setup.client().signIn(person.email, person.password)).body).toMatchObject({ status: 'signed_in' });
    const audit = await owner.request<{ data: { action: string; target: string; after: Record<string, unknown> }[] }>('GET', '/api/operator/audit?q=' + encodeURIComponent(`user:${person.userId}`));
    expect(audit.body.data.map((entry) => entry.action)).toEqual(['reset two-factor', 'unlock console user', 'lock console user']);
    expect(audit.body.data[0]?.after).toMatchObject({ identity_check: 'called back on the phone number of the invoice' });
  });
});

describe('the audit log', () => {
  it('lists every change with who, what, before/after and IP, secrets removed, and exports CSV', async () => {
    const answer = await owner.request<{ data: { action: string; target: string; operator: { id: string }; ip: string; before: unknown; after: unknown }[] }>('GET', '/api/operator/audit?limit=100');
    expect(answer.status, answer.text).toBe(200);
    const actions = answer.body.data.map((entry) => entry.action);
    for (const expected of [
      'bootstrap owner with the admin token', 'POST /admin/channels', `POST /admin/channels/${channelId}/test`, 'POST /admin/models',
      'POST /admin/accounts', `POST /admin/accounts/${accountId}/credits`, `POST /admin/accounts/${accountId}/keys`,
    ]) expect(actions, expected).toContain(expected);
    expect(actions.some((action) => /^POST \/admin\/support\/tickets\/.+\/replies$/.test(action))).toBe(true);
    expect(JSON.stringify(answer.body)).not.toContain(UPSTREAM_SECRET);
    expect(JSON.stringify(answer.body)).not.toContain(apiKey);
    for (const entry of answer.body.data) {
      expect(entry.operator.id).toBe(ownerUserId);
      expect(entry.ip).toBe(owner.ip);
    }
    const credit = answer.body.data.find((entry) => entry.action === `POST /admin/accounts/${accountId}/credits`);
    expect(credit?.target).toBe(`/admin/accounts/${accountId}`);
    expect(credit?.before).toMatchObject({ id: accountId, balance_usd: 0 });
    expect(credit?.after).toMatchObject({ balance_usd: 5 });
    const reply = answer.body.data.find((entry) => /\/replies$/.test(entry.action));
    expect(reply?.target).toMatch(/^\/admin\/support\/tickets\/[^/]+$/);
    expect(reply?.before).toMatchObject({ status: 'open' });
    expect(reply?.after).toMatchObject({ status: 'closed' });
    const channel = answer.body.data.find((entry) => entry.action === 'POST /admin/channels');
    expect(channel?.target).toBe(`/admin/channels/${channelId}`);
    expect(channel?.after).toMatchObject({ id: channelId, name: 'mock-openai' });

    const csv = await owner.raw('GET', '/api/operator/audit.csv');
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    const text = await csv.text();
    expect(text.split('\r\n')[0]).toBe('id,at,operator_id,operator_email,action,target,status,ip,before,after');
    expect(text).toContain(`POST /admin/accounts/${accountId}/credits`);
    expect(text).not.toContain(UPSTREAM_SECRET);

    const filtered = await owner.request<{ data: { action: string }[] }>('GET', '/api/operator/audit?q=credits');
    expect(filtered.body.data.length).toBeGreaterThan(0);
    for (const entry of filtered.body.data) expect(entry.action).toContain('credits');
  });
});

/** Every change the bridge offers, tried by a role that may not make it. */
function writes(): [string, string, unknown][] {
  return [
    ['POST', '/api/operator/admin/channels', { name: 'evil', type: 'openai', api_key: 'sk-x', models: ['m'] }],
    ['PATCH', `/api/operator/admin/channels/${channelId}`, { enabled: false }],
    ['DELETE', `/api/operator/admin/channels/${channelId}`, undefined],
    ['POST', `/api/operator/admin/channels/${channelId}/test`, {}],
    ['POST', `/api/operator/admin/channels/${channelId}/health/reset`, {}],
    ['POST', '/api/operator/admin/models', { id: 'evil-model', pricing: { input_per_mtok: 0 } }],
    ['PATCH', `/api/operator/admin/models/${modelId}`, { public: false }],
    ['DELETE', `/api/operator/admin/models/${modelId}`, undefined],
    ['POST', '/api/operator/admin/accounts', { email: 'evil@example.com' }],
    ['PATCH', `/api/operator/admin/accounts/${accountId}`, { tier: 'default' }],
    ['POST', `/api/operator/admin/accounts/${accountId}/credits`, { amount_usd: 1000 }],
    ['POST', `/api/operator/admin/accounts/${accountId}/keys`, {}],
    ['POST', '/api/operator/admin/plans', { id: 'evil-plan', name: 'Evil', price_usd: 0 }],
    ['POST', '/api/operator/admin/redemption-codes', { count: 1, amount_usd: 100 }],
    ['POST', '/api/operator/admin/announcements', { title: 'evil', body: 'evil' }],
    ['PUT', '/api/operator/admin/fx', { rates: {} }],
    ['POST', '/api/operator/admin/tiers', { name: 'evil' }],
    ['POST', '/api/operator/admin/mcp-servers', { name: 'evil', url: 'https://mcp.example.com/mcp' }],
    ['PATCH', '/api/operator/admin/mcp-servers/mcp_x', { price_per_call: '0' }],
    ['DELETE', '/api/operator/admin/mcp-servers/mcp_x', undefined],
    ['POST', '/api/operator/operators', { email: 'evil@example.com', role: 'owner' }],
    ['POST', `/api/operator/users/${ownerUserId}/lock`, { reason: 'take over' }],
    ['POST', `/api/operator/users/${ownerUserId}/reset-two-factor`, { identity_check: 'trust me, really' }],
  ];
}

describe('roles, over the wire', () => {
  async function operatorWithRole(role: 'viewer' | 'support'): Promise<SignedUpUser> {
    const person = await signUpUser(setup);
    await enrolTwoFactor(person.client);
    const granted = await owner.request('POST', '/api/operator/operators', { email: person.email, role });
    expect(granted.status, granted.text).toBe(201);
    return person;
  }

  it('a viewer reads everything and changes nothing', async () => {
    const viewer = await operatorWithRole('viewer');
    expect((await viewer.client.request('GET', '/api/operator/admin/channels')).status).toBe(200);
    expect((await viewer.client.request('GET', '/api/operator/overview')).status).toBe(200);
    expect((await viewer.client.request('GET', '/api/operator/audit')).status).toBe(200);
    expect((await viewer.client.request('GET', '/api/operator/admin/mcp-servers')).status).toBe(200);
    const auditBefore = (await owner.request<{ data: unknown[] }>('GET', '/api/operator/audit?limit=200')).body.data.length;
    for (const [method, path, body] of [...writes(), ['POST', '/api/operator/admin/support/tickets/tkt_x/replies', { body: 'hi' }] as [string, string, unknown]]) {
      const answer = await viewer.client.request(method, path, body);
      expect(answer.status, `${method} ${path}: ${answer.text}`).toBe(403);
      expect(answer.body, `${method} ${path}`).toMatchObject({ error: { code: 'forbidden' } });
    }
    // Nothing changed: the channel still serves and the balance is as credited.
    const account = await owner.request<{ balance_usd: number }>('GET', `/api/operator/admin/accounts/${accountId}`);
    expect(account.body.balance_usd).toBeLessThan(5.0001);
    expect((await owner.request<{ enabled: boolean }>('GET', `/api/operator/admin/channels/${channelId}`)).body.enabled).toBe(true);
    expect((await owner.request<{ data: unknown[] }>('GET', '/api/operator/audit?limit=200')).body.data.length).toBe(auditBefore);
  });

  it('support answers tickets but changes nothing else', async () => {
    const support = await operatorWithRole('support');
    for (const [method, path, body] of writes()) {
      const answer = await support.client.request(method, path, body);
      expect(answer.status, `${method} ${path}: ${answer.text}`).toBe(403);
    }
    const user = await signUpUser(setup);
    const opened = await user.client.request<{ id: string }>('POST', '/api/console/support/tickets', { subject: 'Invoice', category: 'billing', message: 'Where is my invoice?' });
    const reply = await support.client.request('POST', `/api/operator/admin/support/tickets/${opened.body.id}/replies`, { body: 'In Billing, under Invoices.' });
    expect(reply.status, reply.text).toBe(201);
  });

  it('a console user who is no operator gets 403 not_operator; an operator without a second factor gets two_factor_required', async () => {
    const stranger = await signUpUser(setup);
    for (const path of ['/api/operator/admin/channels', '/api/operator/overview', '/api/operator/audit', '/api/operator/me']) {
      const answer = await stranger.client.request('GET', path);
      expect(answer.status, path).toBe(403);
      expect(answer.body, path).toMatchObject({ error: { code: 'not_operator' } });
    }
    const noFactor = await signUpUser(setup);
    expect((await owner.request('POST', '/api/operator/operators', { email: noFactor.email, role: 'admin' })).status).toBe(201);
    const answer = await noFactor.client.request('POST', '/api/operator/admin/accounts', { email: 'nf@example.com' });
    expect(answer.status).toBe(403);
    expect(answer.body).toMatchObject({ error: { code: 'two_factor_required' } });
    const anonymous = await setup.client().request('GET', '/api/operator/admin/channels');
    expect(anonymous.status).toBe(401);
  });
});
