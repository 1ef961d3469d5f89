/**
 * The console's transaction history and models list over real HTTP: every balance change of a small journey
 * (operator credit and debit with their reasons, a redemption code, usage through the official SDK) explained to
 * the nano-dollar, daily usage summed, a CSV that spreadsheets cannot run; the models list with the catalog's facts
 * and which of the account's keys may call each, another account's key unreachable.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel } from '../../support/gateway-harness.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { linkToken, strongPassword, totpCode, waitForMail, type ConsoleClient } from '../../support/console-client.js';
import { signUpUser, startConsoleGateway, type ConsoleGateway, type SignedUpUser } from './console-gateway.js';

let setup: ConsoleGateway;
let upstream: MockOpenAIUpstream;
let user: SignedUpUser;
let stranger: SignedUpUser;

interface Line {
  id: string;
  at: string;
  type: string;
  kind: string;
  description: string;
  reason: string | null;
  amount_usd: number;
  balance_after_usd: number;
  requests: number | null;
}

interface History {
  opening_balance_usd: number;
  closing_balance_usd: number;
  truncated: boolean;
  data: Line[];
}

interface ModelJson {
  id: string;
  kind: string;
  pricing: { input_per_mtok: number | null; output_per_mtok: number | null };
  context_window: number | null;
  capabilities: Record<string, boolean> | null;
  keys?: Array<{ id: string; name: string }>;
}

const cents = (usd: number): number => Math.round(usd * 1e9);

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
  stranger = await signUpUser(setup);
});

afterAll(async () => {
  await setup?.close();
  await upstream?.close();
});

async function createKey(client: SignedUpUser, body: Record<string, unknown>): Promise<{ key: { id: string }; secret: string }> {
  const answer = await client.client.request<{ key: { id: string }; secret: string }>('POST', '/api/keys', body);
  expect(answer.status, answer.text).toBe(201);
  return answer.body;
}

describe('transaction history', () => {
  it('explains every balance change of a journey, newest first, with usage summed per day', async () => {
    expect((await setup.gateway.admin('POST', `/admin/accounts/${user.accountId}/credits`, { amount_usd: 10, reason: 'Welcome credit from sales' })).status).toBe(200);
    expect((await setup.gateway.admin('POST', `/admin/accounts/${user.accountId}/credits`, { amount_usd: -1.25, reason: '=HYPERLINK("http://evil")' })).status).toBe(200);
    const code = await setup.gateway.admin<{ data: Array<{ code: string }> }>('POST', '/admin/redemption-codes', { amount_usd: 3, count: 1 });
    expect(code.status, JSON.stringify(code.body)).toBe(201);
    const redeemed = await user.client.request('POST', '/api/console/billing/redeem', { code: code.body.data[0]?.code });
    expect(redeemed.status, redeemed.text).toBe(200);

    const { secret } = await createKey(user, { name: 'backend' });
    const sdk = new OpenAI({ baseURL: setup.gateway.baseURL, apiKey: secret, maxRetries: 0 });
    for (let index = 0; index < 3; index += 1) {
      await sdk.chat.completions.create({ model: 'house-model', messages: [{ role: 'user', content: `hello ${index}` }] });
    }

    const answer = await user.client.request<History>('GET', '/api/console/transactions');
    expect(answer.status, answer.text).toBe(200);
    const history = answer.body;
    expect(history.truncated).toBe(false);
    expect(history.opening_balance_usd).toBe(0);
    expect(history.data.map((line) => line.type)).toEqual(['usage', 'redemption', 'operator_debit', 'operator_credit']);
    const [usage, redemption, debit, credit] = history.data as [Line, Line, Line, Line];
    expect(credit).toMatchObject({ description: 'Credit from the operator', reason: 'Welcome credit from sales', amount_usd: 10, balance_after_usd: 10 });
    expect(debit).toMatchObject({ description: 'Debit by the operator', amount_usd: -1.25, balance_after_usd: 8.75 });
    expect(redemption).toMatchObject({ description: 'Redemption code', amount_usd: 3, balance_after_usd: 11.75 });
    expect(usage.requests).toBe(3);
    expect(usage.amount_usd).toBeLessThan(0);
    expect(usage.description).toMatch(/^Usage on \d{4}-\d{2}-\d{2} \(3 requests\)$/);

    // The lines add up exactly: opening + every amount = closing = the balance the console shows.
    const sum = history.data.reduce((total, line) => total + cents(line.amount_usd), 0);
    expect(cents(history.opening_balance_usd) + sum).toBe(cents(history.closing_balance_usd));
    for (let index = 0; index + 1 < history.data.length; index += 1) {
      const newer = history.data[index] as Line;
      const older = history.data[index + 1] as Line;
      expect(cents(older.balance_after_usd) + cents(newer.amount_usd)).toBe(cents(newer.balance_after_usd));
    }
    const billing = await user.client.request<{ balance_usd: number }>('GET', '/api/console/billing');
    expect(history.closing_balance_usd).toBe(billing.body.balance_usd);
    // The usage line is what the usage log charged.
    const usageRows = await user.client.request<{ data: Array<{ cost_usd: number }> }>('GET', '/api/usage');
    expect(-cents(usage.amount_usd)).toBe(usageRows.body.data.reduce((total, row) => total + cents(row.cost_usd), 0));
  });

  it('writes the same lines as CSV with formula-looking text neutralised', async () => {
    const answer = await user.client.raw('GET', '/api/console/transactions.csv');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(answer.headers.get('content-disposition')).toMatch(/^attachment; filename="transactions-\d{4}-\d{2}-\d{2}\.csv"$/);
    const lines = (await answer.text()).trimEnd().split('\r\n');
    expect(lines[0]).toBe('at,type,description,reason,amount_usd,balance_after_usd,requests,shortfall_usd,id');
    expect(lines).toHaveLength(5);
    const debit = lines.find((line) => line.includes('operator_debit'));
    expect(debit).toContain(`"'=HYPERLINK(""http://evil"")"`);
    expect(debit).toContain(',-1.25,8.75,');
  });

  it('is the session account\'s own: another account sees only its own, empty history', async () => {
    const other = await stranger.client.request<History>('GET', '/api/console/transactions');
    expect(other.status).toBe(200);
    expect(other.body.data).toEqual([]);
    expect(other.body.closing_balance_usd).toBe(0);
  });

  it('windows by time and refuses a bad or too long range with the spec error', async () => {
    const future = await user.client.request<History>('GET', `/api/console/transactions?from=${Math.floor(Date.now() / 1000) + 3600}&to=${Math.floor(Date.now() / 1000) + 7200}`);
    expect(future.status).toBe(200);
    expect(future.body.data).toEqual([]);
    expect(future.body.opening_balance_usd).toBe(future.body.closing_balance_usd);
    const bad = await user.client.request('GET', '/api/console/transactions?from=yesterday');
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: expect.objectContaining({ code: 'bad_request', param: 'from', type: 'invalid_request_error' }) });
    const long = await user.client.request('GET', '/api/console/transactions?from=2020-01-01T00:00:00Z&to=2022-01-01T00:00:00Z');
    expect(long.status).toBe(400);
    const reversed = await user.client.request('GET', '/api/console/transactions?from=2022-01-02T00:00:00Z&to=2022-01-01T00:00:00Z');
    expect(reversed.status).toBe(400);
  });

  it('needs a session', async () => {
    const answer = await fetch(`${setup.gateway.consoleUrl}/api/console/transactions`);
    expect(answer.status).toBe(401);
  });
});

describe('models', () => {
  it('lists the routed models with the catalog facts and which keys may call each', async () => {
    const narrow = await createKey(user, { name: 'house only', allowed_models: ['house-model'] });
    const models = await user.client.request<{ data: ModelJson[] }>('GET', '/api/models');
    expect(models.status).toBe(200);
    expect(models.body.data.map((model) => model.id)).toEqual(['house-model', 'other-model']);
    const [house, other] = models.body.data as [ModelJson, ModelJson];
    expect(house).toMatchObject({ kind: 'chat', pricing: { input_per_mtok: 2, output_per_mtok: 8 } });
    expect(house).toHaveProperty('context_window');
    expect(house).toHaveProperty('capabilities');
    expect(house.keys?.map((key) => key.name).sort()).toEqual(['backend', 'house only']);
    expect(other.keys?.map((key) => key.name)).toEqual(['backend']);

    const onlyNarrow = await user.client.request<{ data: ModelJson[] }>('GET', `/api/models?key_id=${narrow.key.id}`);
    expect(onlyNarrow.body.data.map((model) => model.id)).toEqual(['house-model']);
  });

  it('answers 404 for another account\'s key and for a revoked key', async () => {
    const theirs = await createKey(stranger, { name: 'theirs' });
    const answer = await user.client.request('GET', `/api/models?key_id=${theirs.key.id}`);
    expect(answer.status).toBe(404);
    expect(answer.body).toEqual({ error: expect.objectContaining({ code: 'not_found', param: 'key_id' }) });
    const mine = await createKey(user, { name: 'gone' });
    expect((await user.client.request('POST', `/api/keys/${mine.key.id}/revoke`)).status).toBe(200);
    expect((await user.client.request('GET', `/api/models?key_id=${mine.key.id}`)).status).toBe(404);
    const listed = await user.client.request<{ data: ModelJson[] }>('GET', '/api/models');
    expect(listed.body.data.flatMap((model) => model.keys ?? []).map((key) => key.name)).not.toContain('gone');
  });
});

describe('the operator\'s account ledger', () => {
  interface Entry { id: string; kind: string; type: string; description: string; reason: string | null; amount_usd: number }
  interface EntryPage { data: Entry[]; has_more: boolean; next_cursor: string | null }

  it('pages newest first, filters by kind and time, and says what each entry is', async () => {
    const path = `/admin/accounts/${user.accountId}/ledger`;
    const first = await setup.gateway.admin<EntryPage>('GET', `${path}?order=desc&limit=2`);
    expect(first.status).toBe(200);
    expect(first.body.has_more).toBe(true);
    expect(first.body.data.map((entry) => entry.kind)).toEqual(['usage', 'usage']);
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: EntryPage } = await setup.gateway.admin<EntryPage>('GET', `${path}?order=desc&limit=2${cursor === null ? '' : `&cursor=${cursor}`}`);
      ids.push(...page.body.data.map((entry) => entry.id));
      cursor = page.body.next_cursor;
    } while (cursor !== null);
    expect(ids).toEqual([...ids].sort().reverse());
    const oldestFirst = await setup.gateway.admin<EntryPage>('GET', `${path}?limit=200`);
    expect(oldestFirst.body.data.map((entry) => entry.id)).toEqual([...ids].reverse());

    const money = await setup.gateway.admin<EntryPage>('GET', `${path}?order=desc&kind=topup,correction`);
    expect(money.body.data.map((entry) => [entry.type, entry.description, entry.reason])).toEqual([
      ['redemption', 'Redemption code', expect.stringMatching(/^redemption code /)],
      ['operator_debit', 'Debit by the operator', '=HYPERLINK("http://evil")'],
      ['operator_credit', 'Credit from the operator', 'Welcome credit from sales'],
    ]);
    const future = await setup.gateway.admin<EntryPage>('GET', `${path}?from=${Math.floor(Date.now() / 1000) + 3600}`);
    expect(future.body.data).toEqual([]);
  });

  it('refuses unknown orders and malformed kinds with the spec error', async () => {
    const path = `/admin/accounts/${user.accountId}/ledger`;
    for (const [query, param] of [['order=newest', 'order'], ['kind=TOPUP;drop', 'kind'], ['from=soon', 'from']] as const) {
      const answer = await setup.gateway.admin('GET', `${path}?${query}`);
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ error: expect.objectContaining({ code: 'bad_request', param }) });
    }
  });
});

describe('names where people expect them', () => {
  interface NamedRow { request_id: string; account_id: string; key_id: string; channel_id: string; account_email?: string | null; key_name: string | null; channel_name?: string | null }
  let operator: ConsoleClient;

  beforeAll(async () => {
    operator = setup.client();
    const made = await operator.request('POST', '/api/operator/bootstrap', { admin_token: setup.gateway.adminToken, email: `operator-${Date.now()}@example.com`, password: 'Tide-41ab9c-Lantern' });
    expect(made.status, made.text).toBe(201);
    const started = await operator.request<{ secret: string }>('POST', '/api/me/two-factor/setup');
    const enabled = await operator.request('POST', '/api/me/two-factor/enable', { code: totpCode(started.body.secret, Date.now() + setup.shift.offset) });
    expect(enabled.status, enabled.text).toBe(200);
  });

  it('the user\'s usage rows name their key', async () => {
    const rows = await user.client.request<{ data: NamedRow[] }>('GET', '/api/usage');
    expect(rows.body.data.length).toBe(3);
    expect(rows.body.data.every((row) => row.key_name === 'backend')).toBe(true);
    expect(rows.body.data[0]).not.toHaveProperty('account_email');
  });

  it('the operator\'s explorer names accounts, keys and channels and filters by them', async () => {
    const all = await operator.request<{ data: NamedRow[] }>('GET', `/api/operator/usage?email=${encodeURIComponent(user.email.toUpperCase())}`);
    expect(all.status, all.text).toBe(200);
    expect(all.body.data).toHaveLength(3);
    expect(all.body.data[0]).toMatchObject({ account_id: user.accountId, account_email: user.email, key_name: 'backend', channel_name: 'openai-house-model' });

    const byKey = await operator.request<{ data: NamedRow[] }>('GET', `/api/operator/usage?account_id=${user.accountId}&key=backend`);
    expect(byKey.body.data).toHaveLength(3);
    expect((await operator.request<{ data: NamedRow[] }>('GET', `/api/operator/usage?account_id=${user.accountId}&key=nope`)).body.data).toEqual([]);
    expect((await operator.request<{ data: NamedRow[] }>('GET', '/api/operator/usage?channel=openai-other-model')).body.data).toEqual([]);
    const byChannel = await operator.request<{ data: NamedRow[] }>('GET', '/api/operator/usage?channel=openai-house-model');
    expect(byChannel.body.data.length).toBeGreaterThanOrEqual(3);
    expect((await operator.request<{ data: NamedRow[] }>('GET', '/api/operator/usage?email=nobody@example.com')).body.data).toEqual([]);
    // An email and an account id that disagree match nothing.
    expect((await operator.request<{ data: NamedRow[] }>('GET', `/api/operator/usage?email=${encodeURIComponent(user.email)}&account_id=${stranger.accountId}`)).body.data).toEqual([]);

    const keyWithoutAccount = await operator.request('GET', '/api/operator/usage?key=backend');
    expect(keyWithoutAccount.status).toBe(400);
    expect(keyWithoutAccount.body).toEqual({ error: expect.objectContaining({ code: 'bad_request', param: 'key' }) });

    const csv = await operator.raw('GET', `/api/operator/usage.csv?email=${encodeURIComponent(user.email)}&key=backend`);
    expect((await csv.text()).trimEnd().split('\r\n')).toHaveLength(4);
  });

  it('the overview names each channel, its id kept', async () => {
    const overview = await operator.request<{ by_channel: Array<{ name: string; channel_name: string | null }> }>('GET', '/api/operator/overview');
    expect(overview.body.by_channel).toContainEqual(expect.objectContaining({ channel_name: 'openai-house-model', name: expect.stringMatching(/^ch_/) }));
  });

  it('refuses the explorer to a user who is no operator', async () => {
    const answer = await user.client.request('GET', `/api/operator/usage?email=${encodeURIComponent(stranger.email)}`);
    expect(answer.status).toBe(403);
    expect(answer.body).toMatchObject({ error: { code: 'not_operator' } });
  });
});

describe('announcements', () => {
  interface Listed { id: string; title: string; level: string; dismissed: boolean }

  it('lists the active ones newest first and remembers who dismissed which', async () => {
    const first = await setup.gateway.admin<{ id: string }>('POST', '/admin/announcements', { title: 'Maintenance on Sunday', body: 'The API pauses for 5 minutes.', level: 'warning' });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const second = await setup.gateway.admin<{ id: string }>('POST', '/admin/announcements', { title: 'New model', body: '<b>bold</b> claims', level: 'info' });
    const expired = await setup.gateway.admin<{ id: string }>('POST', '/admin/announcements', { title: 'Old', body: 'gone', level: 'info', published_at: '2020-01-01T00:00:00Z', expires_at: '2020-02-01T00:00:00Z' });
    expect(expired.status).toBe(201);

    const listed = await user.client.request<{ data: Listed[] }>('GET', '/api/announcements');
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((item) => [item.title, item.dismissed])).toEqual([['New model', false], ['Maintenance on Sunday', false]]);

    const dismissed = await user.client.request('POST', `/api/announcements/${second.body.id}/dismiss`);
    expect(dismissed.status).toBe(204);
    expect((await user.client.request('POST', `/api/announcements/${second.body.id}/dismiss`)).status).toBe(204);
    expect((await user.client.request<{ data: Listed[] }>('GET', '/api/announcements')).body.data.map((item) => item.dismissed)).toEqual([true, false]);
    // Per person: the other account's user still sees it.
    expect((await stranger.client.request<{ data: Listed[] }>('GET', '/api/announcements')).body.data.map((item) => item.dismissed)).toEqual([false, false]);
  });

  it('refuses unknown and expired announcements, sessionless calls and missing CSRF tokens', async () => {
    const unknown = await user.client.request('POST', '/api/announcements/ann_nothing/dismiss');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: expect.objectContaining({ code: 'not_found' }) });
    const all = await setup.gateway.admin<{ data: Array<{ id: string; title: string }> }>('GET', '/admin/announcements?limit=50');
    const old = all.body.data.find((item) => item.title === 'Old');
    expect((await user.client.request('POST', `/api/announcements/${old?.id}/dismiss`)).status).toBe(404);
    expect((await fetch(`${setup.gateway.consoleUrl}/api/announcements`)).status).toBe(401);
    const live = all.body.data.find((item) => item.title === 'Maintenance on Sunday');
    const noCsrf = await user.client.request('POST', `/api/announcements/${live?.id}/dismiss`, undefined, { csrf: false });
    expect(noCsrf.status).toBe(403);
  });
});

describe('playground settings', () => {
  it('answers whole without streaming, with the system prompt, max tokens and temperature it sent', async () => {
    const body = {
      model: 'house-model',
      messages: [{ role: 'system', content: 'Answer briefly.' }, { role: 'user', content: 'Hello there' }],
      temperature: 0.5, max_tokens: 50, stream: false,
    };
    const answer = await user.client.request<{ object: string; completion: { choices: Array<{ message: { content: string } }> }; summary: { request_id: string; cost_usd: number; request_body: unknown } }>('POST', '/api/playground/chat', body);
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.object).toBe('playground.completion');
    expect(answer.body.completion.choices[0]?.message.content).toBeTruthy();
    expect(answer.body.summary.request_body).toEqual({ model: 'house-model', messages: body.messages, temperature: 0.5, max_tokens: 50 });
    expect(answer.body.summary.cost_usd).toBeGreaterThan(0);
    // The upstream got the system prompt and the limits.
    const sent = upstream.requests.at(-1)?.body as { messages: Array<{ role: string }>; max_tokens?: number; max_completion_tokens?: number; temperature: number };
    expect(sent.messages[0]?.role).toBe('system');
    expect(sent.temperature).toBe(0.5);
    expect(sent.max_tokens ?? sent.max_completion_tokens).toBe(50);
    const rows = await user.client.request<{ data: Array<{ request_id: string; key_name: string | null }> }>('GET', '/api/usage');
    expect(rows.body.data.find((row) => row.request_id === answer.body.summary.request_id)?.key_name).toBe('Playground');
  });

  it('says in the streamed summary what it sent, and refuses a malformed setting', async () => {
    const answer = await user.client.raw('POST', '/api/playground/chat', { model: 'house-model', messages: [{ role: 'user', content: 'Hi' }] });
    const text = await answer.text();
    const summary = JSON.parse(text.slice(text.indexOf('event: summary\ndata: ') + 'event: summary\ndata: '.length).trim()) as { request_body: unknown };
    expect(summary.request_body).toEqual({ model: 'house-model', messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true } });
    const bad = await user.client.request('POST', '/api/playground/chat', { model: 'house-model', messages: [{ role: 'user', content: 'Hi' }], stream: 'no' });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: expect.objectContaining({ param: 'stream' }) });
  });
});

describe('roles', () => {
  /** The user invites a new person with `role`, who accepts with a password of their own. */
  async function member(role: 'developer' | 'billing'): Promise<ConsoleClient> {
    const email = `${role}-${Date.now()}@example.com`;
    expect((await user.client.request('POST', '/api/members/invitations', { email, role })).status).toBe(201);
    const token = linkToken(await waitForMail(setup.mail, email, /invited you/i));
    const client = setup.client();
    const accepted = await client.request('POST', '/api/invitations/accept', { token, password: strongPassword() });
    expect(accepted.status, accepted.text).toBe(200);
    return client;
  }

  it('keeps the money trail from developers and key names from the billing role', async () => {
    const developer = await member('developer');
    const refused = await developer.request('GET', '/api/console/transactions');
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error: { code: 'forbidden' } });
    expect((await developer.request('GET', '/api/console/transactions.csv')).status).toBe(403);

    const billing = await member('billing');
    const models = await billing.request<{ data: Array<Record<string, unknown>> }>('GET', '/api/models');
    expect(models.status).toBe(200);
    expect(models.body.data.length).toBeGreaterThan(0);
    expect(models.body.data.every((model) => !('keys' in model))).toBe(true);
    const keys = await user.client.request<{ data: Array<{ id: string }> }>('GET', '/api/keys');
    expect((await billing.request('GET', `/api/models?key_id=${keys.body.data[0]?.id}`)).status).toBe(403);
    expect((await billing.request('GET', '/api/console/transactions')).status).toBe(200);
  });

  it('keeps one display currency per account, among the published ones, changed by those who manage billing', async () => {
    interface Setting { currency: string; choices: string[]; can_change: boolean }
    const first = await user.client.request<Setting>('GET', '/api/console/display-currency');
    expect(first.body).toEqual({ currency: 'USD', choices: ['USD'], can_change: true });
    const unpublished = await user.client.request('PUT', '/api/console/display-currency', { currency: 'EUR' });
    expect(unpublished.status).toBe(400);
    expect(unpublished.body).toEqual({ error: expect.objectContaining({ code: 'bad_request', param: 'currency' }) });
    expect((await user.client.request('PUT', '/api/console/display-currency', { currency: 'euro' })).status).toBe(400);

    const now = Date.now();
    await setup.gateway.gateway.services.storage.fx.set({ base: 'USD', rates: { EUR: '0.9', JPY: '150' }, asOf: now, source: 'test', updatedAt: now });
    const saved = await user.client.request<Setting>('PUT', '/api/console/display-currency', { currency: 'eur' });
    expect(saved.status, saved.text).toBe(200);
    expect(saved.body).toEqual({ currency: 'EUR', choices: ['USD', 'EUR', 'JPY'], can_change: true });

    // Every member sees the account's choice; one who does not manage billing cannot change it; other accounts keep theirs.
    const developer = await member('developer');
    expect((await developer.request<Setting>('GET', '/api/console/display-currency')).body).toEqual({ currency: 'EUR', choices: ['USD', 'EUR', 'JPY'], can_change: false });
    expect((await developer.request('PUT', '/api/console/display-currency', { currency: 'JPY' })).status).toBe(403);
    expect((await stranger.client.request<Setting>('GET', '/api/console/display-currency')).body.currency).toBe('USD');
    expect((await user.client.request<Setting>('PUT', '/api/console/display-currency', { currency: 'USD' })).body.currency).toBe('USD');
  });
});
