/**
 * The operator console's management over real HTTP: an owner invites an operator by email (a mailed link to choose
 * a password), changes their role, disables and enables them (a disabled operator is refused every operator route),
 * resets their lost second factor; only an owner may, and nobody acts on themself. The bundled catalog listed with
 * its list prices and imported into model records in bulk; accounts searched on the server by email, id or billing
 * name prefix, paged with a cursor. Every change is in the audit log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkToken, strongPassword, totpCode, uniqueEmail, waitForMail, type ConsoleClient } from '../../support/console-client.js';
import { signUpUser, startConsoleGateway, type ConsoleGateway } from './console-gateway.js';

const STEP_MS = 30_000;

let setup: ConsoleGateway;
let owner: ConsoleClient;
let ownerUserId: string;

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

type AuditList = { data: { action: string; target: string; before: unknown; after: Record<string, unknown> | null }[] };
const auditOf = async (text: string): Promise<AuditList['data']> => (await owner.request<AuditList>('GET', `/api/operator/audit?limit=200&q=${encodeURIComponent(text)}`)).body.data;

beforeAll(async () => {
  setup = await startConsoleGateway();
  owner = setup.client();
  const made = await owner.request<{ user: { id: string } }>('POST', '/api/operator/bootstrap', { admin_token: setup.gateway.adminToken, email: uniqueEmail('owner'), password: strongPassword() });
  expect(made.status, made.text).toBe(201);
  ownerUserId = made.body.user.id;
  await enrolTwoFactor(owner);
});

afterAll(async () => {
  await setup?.close();
});

describe('operators managed by an owner', () => {
  let invitedId: string;
  let invited: ConsoleClient;
  const invitedEmail = uniqueEmail('invited');
  const invitedPassword = strongPassword();

  it('invites a new email: a console user with no usable password and a mailed link to choose one', async () => {
    const answer = await owner.request<{ user_id: string; role: string; invited: boolean }>('POST', '/api/operator/operators', { email: invitedEmail, role: 'admin' });
    expect(answer.status, answer.text).toBe(201);
    expect(answer.body).toMatchObject({ role: 'admin', invited: true });
    invitedId = answer.body.user_id;
    const mail = await waitForMail(setup.mail, invitedEmail, /invited to operate/i);
    invited = setup.client();
    const chosen = await invited.request('POST', '/api/auth/password-reset/confirm', { token: linkToken(mail), password: invitedPassword });
    expect(chosen.status, chosen.text).toBe(204);
    expect((await invited.signIn(invitedEmail, invitedPassword)).body).toMatchObject({ status: 'signed_in' });
    expect((await invited.request('GET', '/api/operator/me')).body).toMatchObject({ role: 'admin', two_factor_required: true });
    await enrolTwoFactor(invited);
    expect((await invited.request('GET', '/api/operator/admin/channels')).status).toBe(200);

    const list = await owner.request<{ data: { user_id: string; email: string; role: string; status: string; two_factor_enabled: boolean }[] }>('GET', '/api/operator/operators');
    expect(list.body.data.find((row) => row.user_id === invitedId)).toMatchObject({ email: invitedEmail, role: 'admin', status: 'active', two_factor_enabled: true });
    const audit = await auditOf(`operator:${invitedId}`);
    expect(audit.map((entry) => entry.action)).toEqual(['invite operator']);
    expect(audit[0]?.after).toMatchObject({ email: invitedEmail, role: 'admin', invited: true });
  });

  it('grants a role to an existing console user without a mail', async () => {
    const person = await signUpUser(setup);
    const answer = await owner.request('POST', '/api/operator/operators', { email: person.email, role: 'viewer' });
    expect(answer.status, answer.text).toBe(201);
    expect(answer.body).toMatchObject({ user_id: person.userId, role: 'viewer', invited: false });
    expect((await auditOf(`operator:${person.userId}`)).map((entry) => entry.action)).toEqual(['grant operator role']);
  });

  it('an admin operator can neither manage operators nor lock an operator or reset their second factor', async () => {
    const refused: [string, string, unknown][] = [
      ['POST', '/api/operator/operators', { email: uniqueEmail('evil'), role: 'owner' }],
      ['PATCH', `/api/operator/operators/${ownerUserId}`, { role: 'viewer' }],
      ['POST', `/api/operator/operators/${ownerUserId}/disable`, {}],
      ['POST', `/api/operator/operators/${ownerUserId}/enable`, {}],
      ['POST', `/api/operator/operators/${ownerUserId}/reset-two-factor`, { identity_check: 'asked them on the phone' }],
      ['DELETE', `/api/operator/operators/${ownerUserId}`, undefined],
      ['POST', `/api/operator/users/${ownerUserId}/lock`, { reason: 'take over' }],
      ['POST', `/api/operator/users/${ownerUserId}/unlock`, undefined],
      ['POST', `/api/operator/users/${ownerUserId}/reset-two-factor`, { identity_check: 'asked them on the phone' }],
    ];
    for (const [method, path, body] of refused) {
      const answer = await invited.request(method, path, body);
      expect(answer.status, `${method} ${path}: ${answer.text}`).toBe(403);
      expect(answer.body, `${method} ${path}`).toMatchObject({ error: { code: 'forbidden' } });
    }
    // A user who is no operator stays an admin's to lock.
    const person = await signUpUser(setup);
    expect((await invited.request('POST', `/api/operator/users/${person.userId}/lock`, { reason: 'fraud report' })).status).toBe(200);
    expect((await owner.request('GET', '/api/operator/me')).body).toMatchObject({ role: 'owner' });
  });

  it('changes the role, disables (every operator route refused) and enables again', async () => {
    const changed = await owner.request('PATCH', `/api/operator/operators/${invitedId}`, { role: 'support' });
    expect(changed.status, changed.text).toBe(200);
    expect((await invited.request('GET', '/api/operator/me')).body).toMatchObject({ role: 'support' });

    const disabled = await owner.request<{ status: string; disabled_by: string }>('POST', `/api/operator/operators/${invitedId}/disable`, {});
    expect(disabled.status, disabled.text).toBe(200);
    expect(disabled.body).toMatchObject({ status: 'disabled', disabled_by: ownerUserId });
    for (const path of ['/api/operator/me', '/api/operator/admin/channels', '/api/operator/overview', '/api/operator/audit']) {
      const answer = await invited.request('GET', path);
      expect(answer.status, path).toBe(403);
      expect(answer.body, path).toMatchObject({ error: { code: 'operator_disabled' } });
    }
    // Still a console user of their own account.
    expect((await invited.request('GET', '/api/session')).body).toMatchObject({ user: { email: invitedEmail } });

    const enabled = await owner.request('POST', `/api/operator/operators/${invitedId}/enable`, {});
    expect(enabled.status, enabled.text).toBe(200);
    expect(enabled.body).toMatchObject({ status: 'active', disabled_at: null });
    expect((await invited.request('GET', '/api/operator/admin/channels')).status).toBe(200);
  });

  it('resets a lost second factor with a note of the identity check: sessions end, operator routes wait for a new one', async () => {
    const tooShort = await owner.request('POST', `/api/operator/operators/${invitedId}/reset-two-factor`, { identity_check: 'ok' });
    expect(tooShort.status).toBe(400);
    const reset = await owner.request('POST', `/api/operator/operators/${invitedId}/reset-two-factor`, { identity_check: 'video call, compared with the HR photo' });
    expect(reset.status, reset.text).toBe(200);
    expect(reset.body).toMatchObject({ two_factor_enabled: false, identity_check: 'video call, compared with the HR photo' });
    expect((await invited.request('GET', '/api/session')).body).toMatchObject({ user: null });
    const again = setup.client();
    expect((await again.signIn(invitedEmail, invitedPassword)).body).toMatchObject({ status: 'signed_in' });
    expect((await again.request('GET', '/api/operator/admin/channels')).body).toMatchObject({ error: { code: 'two_factor_required' } });
    const twice = await owner.request('POST', `/api/operator/operators/${invitedId}/reset-two-factor`, { identity_check: 'video call, compared with the HR photo' });
    expect(twice.status).toBe(409);

    const actions = (await auditOf(`operator:${invitedId}`)).map((entry) => entry.action);
    expect(actions).toEqual(['reset operator two-factor', 'enable operator', 'disable operator', 'change operator role', 'invite operator']);
    const entry = (await auditOf(`operator:${invitedId}`))[0];
    expect(entry?.before).toMatchObject({ two_factor_enabled: true });
    expect(entry?.after).toMatchObject({ two_factor_enabled: false, identity_check: 'video call, compared with the HR photo' });
  });

  it('an owner acts on nobody but others', async () => {
    for (const [method, path, body] of [
      ['POST', `/api/operator/operators/${ownerUserId}/disable`, {}],
      ['POST', `/api/operator/operators/${ownerUserId}/reset-two-factor`, { identity_check: 'it is me, honestly' }],
      ['DELETE', `/api/operator/operators/${ownerUserId}`, undefined],
      ['PATCH', `/api/operator/operators/${ownerUserId}`, { role: 'admin' }],
    ] as [string, string, unknown][]) {
      const answer = await owner.request(method, path, body);
      expect(answer.status, `${method} ${path}: ${answer.text}`).toBe(409);
    }
    expect((await owner.request('POST', '/api/operator/operators/usr_nobody/disable', {})).status).toBe(404);
    const removed = await owner.request('DELETE', `/api/operator/operators/${invitedId}`);
    expect(removed.status, removed.text).toBe(204);
    expect((await auditOf(`operator:${invitedId}`))[0]?.action).toBe('remove operator');
  });
});

describe('the bundled catalog and its list prices', () => {
  type Entry = { id: string; provider: string; status: string; list_pricing: { input_per_mtok: number | null; output_per_mtok: number | null }; pricing: { input_per_mtok: number | null } | null };

  it('lists a provider\'s bundled models with list prices, and imports selected ones and then all into model records', async () => {
    const listed = await owner.request<{ providers: string[]; bundled_version: string; data: Entry[] }>('GET', '/api/operator/admin/catalog/models?provider=anthropic');
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.providers).toEqual(expect.arrayContaining(['openai', 'anthropic', 'google']));
    expect(listed.body.bundled_version).toMatch(/^\d+\.\d+/);
    const models = listed.body.data;
    expect(models.length).toBeGreaterThan(3);
    for (const model of models) {
      expect(model.provider).toBe('anthropic');
      expect(model.status).toBe('list');
    }
    const [first, second] = models as [Entry, Entry];
    expect(first.list_pricing.input_per_mtok).toBeGreaterThan(0);

    // The operator's own price for one model: an import replaces it by the list price, but never the batch price the
    // operator set (the batch price it left unset becomes the list one: half the output price for Claude).
    expect((await owner.request('POST', '/api/operator/admin/models', { id: second.id, public: false, pricing: { input_per_mtok: 99, output_per_mtok: 99, batch_input_per_mtok: 0.5 } })).status).toBe(201);
    expect((await owner.request<{ data: Entry[] }>('GET', `/api/operator/admin/catalog/models?provider=anthropic&q=${encodeURIComponent(second.id)}`)).body.data.find((entry) => entry.id === second.id)?.status).toBe('custom');

    const unknown = await owner.request('POST', '/api/operator/admin/catalog/import', { provider: 'anthropic', models: ['not-a-model'] });
    expect(unknown.status).toBe(400);
    const selected = await owner.request<{ imported: { id: string; created: boolean; before: unknown; after: { input_per_mtok: number } }[] }>('POST', '/api/operator/admin/catalog/import', { provider: 'anthropic', models: [first.id, second.id] });
    expect(selected.status, selected.text).toBe(200);
    expect(selected.body.imported).toEqual([
      { id: first.id, created: true, before: null, after: expect.objectContaining({ input_per_mtok: first.list_pricing.input_per_mtok }) },
      { id: second.id, created: false, before: expect.objectContaining({ input_per_mtok: 99 }), after: expect.objectContaining({ input_per_mtok: second.list_pricing.input_per_mtok }) },
    ]);
    const record = await owner.request<{ public: boolean; pricing: { input_per_mtok: number } }>('GET', `/api/operator/admin/models/${encodeURIComponent(second.id)}`);
    expect(record.body).toMatchObject({ public: false, pricing: { input_per_mtok: second.list_pricing.input_per_mtok, batch_input_per_mtok: 0.5, batch_output_per_mtok: (second.list_pricing.output_per_mtok as number) / 2 } });
    expect(selected.body.imported[0]?.after).toMatchObject({ batch_input_per_mtok: (first.list_pricing.input_per_mtok as number) / 2 });

    const all = await owner.request<{ imported: unknown[] }>('POST', '/api/operator/admin/catalog/import', { provider: 'anthropic' });
    expect(all.status, all.text).toBe(200);
    expect(all.body.imported).toHaveLength(models.length);
    const after = await owner.request<{ data: Entry[] }>('GET', '/api/operator/admin/catalog/models?provider=anthropic');
    // Every record is at the list prices but the one whose batch price the operator set.
    for (const model of after.body.data) expect(model.status, model.id).toBe(model.id === second.id ? 'custom' : 'imported');

    const audit = await auditOf('/admin/catalog/import');
    expect(audit).toHaveLength(2);
    expect(audit[1]?.after).toMatchObject({ provider: 'anthropic', imported: [{ id: first.id, created: true }, { id: second.id, created: false }] });
  });

  it('a viewer reads the catalog but cannot import; the admin API takes the same calls with the admin token', async () => {
    const viewer = await signUpUser(setup);
    await enrolTwoFactor(viewer.client);
    expect((await owner.request('POST', '/api/operator/operators', { email: viewer.email, role: 'viewer' })).status).toBe(201);
    expect((await viewer.client.request('GET', '/api/operator/admin/catalog/models?provider=openai')).status).toBe(200);
    const refused = await viewer.client.request('POST', '/api/operator/admin/catalog/import', { provider: 'openai' });
    expect(refused.status).toBe(403);
    const direct = await setup.gateway.admin<{ data: Entry[] }>('GET', '/admin/catalog/models?provider=google&q=gemini');
    expect(direct.status).toBe(200);
    expect(direct.body.data.length).toBeGreaterThan(0);
    expect((await setup.gateway.admin('GET', '/admin/catalog/models?provider=nobody')).status).toBe(400);
  });
});

describe('accounts searched on the server', () => {
  it('finds accounts by email, id and billing-name prefix, case ignored, paged with a cursor', async () => {
    const marker = `srch${Date.now().toString(36)}`;
    const ids: string[] = [];
    for (let index = 0; index < 5; index += 1) {
      const made = await owner.request<{ id: string }>('POST', '/api/operator/admin/accounts', { email: `${marker}-${index}@example.com` });
      expect(made.status, made.text).toBe(201);
      ids.push(made.body.id);
    }
    type AccountPage = { data: { id: string; email: string }[]; has_more: boolean; next_cursor: string | null };
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 5; pages += 1) {
      const page: { status: number; body: AccountPage } = await owner.request<AccountPage>('GET', `/api/operator/admin/accounts?q=${marker.toUpperCase()}&limit=2${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
      expect(page.status).toBe(200);
      seen.push(...page.body.data.map((account) => account.id));
      expect(page.body.data.length).toBeLessThanOrEqual(2);
      cursor = page.body.next_cursor;
      if (!page.body.has_more) break;
    }
    expect(seen.sort()).toEqual([...ids].sort());

    const byId = await owner.request<AccountPage>('GET', `/api/operator/admin/accounts?q=${encodeURIComponent(ids[3] as string)}`);
    expect(byId.body.data.map((account) => account.id)).toEqual([ids[3]]);
    // Only a prefix: text inside the email matches nothing, and LIKE's wildcards are literal.
    expect((await owner.request<AccountPage>('GET', `/api/operator/admin/accounts?q=${marker.slice(2)}`)).body.data).toEqual([]);
    expect((await owner.request<AccountPage>('GET', '/api/operator/admin/accounts?q=%25')).body.data).toEqual([]);
    expect((await owner.request<AccountPage>('GET', `/api/operator/admin/accounts?q=${'x'.repeat(201)}`)).status).toBe(400);

    const person = await signUpUser(setup);
    const profile = await person.client.request('PUT', '/api/console/billing/profile', { name: `${marker} Holdings Ltd`, address: '1 Main Street, Springfield', country: 'US' });
    expect(profile.status, profile.text).toBe(200);
    const byName = await owner.request<AccountPage>('GET', `/api/operator/admin/accounts?q=${encodeURIComponent(`${marker} hold`)}`);
    expect(byName.body.data.map((account) => account.id)).toEqual([person.accountId]);
  });
});

describe('the overview, live from the metrics registry and channel health', () => {
  it('counts a model call in the live figures and shows the channel that served it as healthy', async () => {
    const channel = await owner.request<{ id: string }>('POST', '/api/operator/admin/channels', { name: 'live-sim', type: 'simulator', models: ['live-sim-model'] });
    expect(channel.status, channel.text).toBe(201);
    expect((await owner.request('POST', '/api/operator/admin/models', { id: 'live-sim-model', pricing: { input_per_mtok: 1, output_per_mtok: 1 } })).status).toBe(201);
    const account = await owner.request<{ id: string }>('POST', '/api/operator/admin/accounts', { email: uniqueEmail('live') });
    expect((await owner.request('POST', `/api/operator/admin/accounts/${account.body.id}/credits`, { amount_usd: 1 })).status).toBe(200);
    const key = await owner.request<{ key: string }>('POST', `/api/operator/admin/accounts/${account.body.id}/keys`, { name: 'live' });

    type Live = { requests: number; errors: number; requests_per_second: number; error_rate: number; latency_p50_ms: number | null; latency_p99_ms: number | null; window_seconds: number; in_flight: number };
    type Overview = { live: Live; channels: { channel_id: string; name: string; status: string; breaker_state: string; recent: { successes: number; failures: number }; error_rate: number | null }[] };
    const before = (await owner.request<Overview>('GET', '/api/operator/overview?window=1h')).body.live;
    for (const status of [200, 400]) {
      const answer = await fetch(`${setup.gateway.baseURL}/chat/completions`, {
        method: 'POST', headers: { authorization: `Bearer ${key.body.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: status === 200 ? 'live-sim-model' : 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(answer.status).toBe(status);
      await answer.arrayBuffer();
    }
    const overview = await owner.request<Overview>('GET', '/api/operator/overview?window=1h');
    expect(overview.status, overview.text).toBe(200);
    const { live } = overview.body;
    expect(live.requests - before.requests).toBe(2);
    expect(live.errors - before.errors).toBe(1);
    expect(live.error_rate).toBeGreaterThan(0);
    expect(live.requests_per_second).toBeGreaterThan(0);
    expect(live.latency_p50_ms).not.toBeNull();
    expect(live.latency_p99_ms).toBeGreaterThanOrEqual(live.latency_p50_ms as number);
    expect(live.window_seconds).toBeGreaterThanOrEqual(0);
    const row = overview.body.channels.find((entry) => entry.channel_id === channel.body.id);
    expect(row).toMatchObject({ name: 'live-sim', status: 'operational', breaker_state: 'closed', error_rate: 0 });
    expect(row?.recent.successes).toBeGreaterThanOrEqual(1);
  });
});
