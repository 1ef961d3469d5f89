/**
 * Signed webhooks over real HTTP, on the suite's database (SQLite, or PostgreSQL with TEST_DATABASE_URL): an account
 * owner subscribes an endpoint in the console; the gateway records events where their facts happen and delivers
 * them signed by the Standard Webhooks scheme, verified here by the official `standardwebhooks` package. A receiver
 * that fails twice is retried with the same event id and counts one delivery; the log shows every attempt; a resend
 * repeats the id; rotation signs with both secrets; alerts reach a Slack-compatible endpoint without a mail; other
 * roles and accounts are refused; URLs that could reach inside the network are refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addSimulatorModel, chat } from '../admin/helpers.js';
import { waitUntil } from '../cli/cli-process.js';
import { signUpUser, startConsoleGateway, type ConsoleGateway, type SignedUpUser } from '../console/console-gateway.js';
import { linkToken, strongPassword, uniqueEmail, waitForMail } from '../../support/console-client.js';
import { WebhookReceiver } from '../../support/webhook-receiver.js';

interface Endpoint { id: string; url: string; format: string; event_types: string[]; enabled: boolean; secret?: string; previous_secret_valid_until: string | null }
interface Attempt { attempt: number; status_code: number | null; latency_ms: number; error: string | null; response_excerpt: string | null }
interface Delivery { id: string; event_id: string; event_type: string; state: string; attempts: number; log: Attempt[] }

let setup: ConsoleGateway;
let receiver: WebhookReceiver;
let receiverUrl: string;
let owner: SignedUpUser;

beforeAll(async () => {
  setup = await startConsoleGateway({
    WEBHOOK_ALLOW_HTTP_LOOPBACK: 'true',
    WEBHOOK_CHECK_MS: '100',
    // Two retries a second apart: the default schedule (5 s, 5 min, 30 min …) is the same code with other numbers.
    WEBHOOK_RETRY_SECONDS: '1,1',
    ALERT_CHECK_SECONDS: '1',
  });
  receiver = new WebhookReceiver();
  receiverUrl = await receiver.start();
  owner = await signUpUser(setup);
});

afterAll(async () => {
  await setup?.close();
  await receiver?.stop();
});

async function createEndpoint(user: SignedUpUser, body: Record<string, unknown>): Promise<Endpoint> {
  const created = await user.client.request<Endpoint>('POST', '/api/console/webhooks', body);
  expect(created.status, created.text).toBe(201);
  return created.body;
}

async function deliveries(user: SignedUpUser, endpointId: string): Promise<Delivery[]> {
  const answer = await user.client.request<{ data: Delivery[] }>('GET', `/api/console/webhooks/${endpointId}/deliveries`);
  expect(answer.status, answer.text).toBe(200);
  return answer.body.data;
}

async function inviteMember(role: string): Promise<SignedUpUser> {
  const email = uniqueEmail(role);
  expect((await owner.client.request('POST', '/api/members/invitations', { email, role })).status).toBe(201);
  const token = linkToken(await waitForMail(setup.mail, email, /invited you/i));
  const client = setup.client();
  const password = strongPassword();
  const accepted = await client.request<{ user: { id: string } }>('POST', '/api/invitations/accept', { token, password });
  expect(accepted.status, accepted.text).toBe(200);
  return { client, email, password, accountId: owner.accountId, userId: accepted.body.user.id };
}

describe('signed webhook deliveries', () => {
  it('retries a receiver that fails twice with the same event id, and it counts one delivery', async () => {
    const endpoint = await createEndpoint(owner, { url: receiverUrl, description: 'ops', event_types: ['key.disabled'] });
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    receiver.secrets = [endpoint.secret as string];
    // The secret is shown once: never in a later answer.
    const listed = await owner.client.request<{ data: Endpoint[] }>('GET', '/api/console/webhooks');
    expect(listed.text).not.toContain(endpoint.secret);
    expect(listed.body.data.map((entry) => entry.id)).toEqual([endpoint.id]);

    const key = await setup.gateway.admin<{ id: string }>('POST', `/admin/accounts/${owner.accountId}/keys`, { name: 'watched key' });
    receiver.answers = [500, 503];
    const before = receiver.requests.length;
    const disabled = await owner.client.request('PATCH', `/api/keys/${key.body.id}`, { status: 'disabled' });
    expect(disabled.status, disabled.text).toBe(200);

    await waitUntil(() => receiver.requests.length - before >= 3, 15_000, 'three attempts');
    const attempts = receiver.requests.slice(before);
    expect(attempts.map((request) => request.status)).toEqual([500, 503, 200]);
    expect(new Set(attempts.map((request) => request.id)).size).toBe(1);
    expect(attempts.every((request) => request.verifiedBy.length === 1 && /^v1,[A-Za-z0-9+/]+=*$/.test(request.signature))).toBe(true);
    const eventId = attempts[0]?.id as string;
    expect(eventId).toMatch(/^msg_/);
    expect(receiver.processed.get(eventId)).toMatchObject({ type: 'key.disabled', data: { key_id: key.body.id, key_name: 'watched key', disabled_by: 'account' } });
    // The body is the same bytes on every attempt.
    expect(new Set(attempts.map((request) => request.body)).size).toBe(1);

    const [delivery] = await deliveries(owner, endpoint.id);
    expect(delivery).toMatchObject({ event_id: eventId, event_type: 'key.disabled', state: 'succeeded', attempts: 3 });
    expect(delivery?.log.map((attempt) => [attempt.attempt, attempt.status_code])).toEqual([[3, 200], [2, 503], [1, 500]]);
    expect(delivery?.log[1]?.response_excerpt).toBe('refused with 503  and some text');
    expect(delivery?.log.every((attempt) => attempt.latency_ms >= 0)).toBe(true);

    // A resend repeats the event id; the receiver, deduplicating by it, still counts one.
    const resent = await owner.client.request('POST', `/api/console/webhooks/${endpoint.id}/deliveries/${delivery?.id}/resend`);
    expect(resent.status, resent.text).toBe(202);
    await waitUntil(() => receiver.requests.length - before >= 4, 10_000, 'the resend');
    expect(receiver.requests.at(-1)?.id).toBe(eventId);
    expect([...receiver.processed.keys()].filter((id) => id === eventId)).toHaveLength(1);
    await waitUntil(async () => (await deliveries(owner, endpoint.id))[0]?.attempts === 4, 5000, 'the resend logged');

    await owner.client.request('DELETE', `/api/console/webhooks/${endpoint.id}`);
  });

  it('records key.disabled once when the owner and the operator turn the same key off at the same moment', async () => {
    const endpoint = await createEndpoint(owner, { url: receiverUrl, event_types: ['key.disabled'] });
    receiver.secrets = [endpoint.secret as string];
    receiver.answers = [];
    const key = await setup.gateway.admin<{ id: string }>('POST', `/admin/accounts/${owner.accountId}/keys`, { name: 'raced key' });
    const changes = await Promise.all([
      owner.client.request('PATCH', `/api/keys/${key.body.id}`, { status: 'disabled' }),
      setup.gateway.admin('PATCH', `/admin/keys/${key.body.id}`, { status: 'disabled' }),
      owner.client.request('PATCH', `/api/keys/${key.body.id}`, { status: 'disabled' }),
      setup.gateway.admin('PATCH', `/admin/keys/${key.body.id}`, { status: 'disabled' }),
    ]);
    expect(changes.map((change) => change.status)).toEqual([200, 200, 200, 200]);
    const ofKey = (): unknown[] => [...receiver.processed.values()].filter((payload) => (payload as { data?: { key_id?: string } }).data?.key_id === key.body.id);
    await waitUntil(() => ofKey().length >= 1, 10_000, 'the key.disabled delivery');
    // Any second event would be due within the deliverer's next checks.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(ofKey()).toHaveLength(1);
    expect(await deliveries(owner, endpoint.id)).toHaveLength(1);
    await owner.client.request('DELETE', `/api/console/webhooks/${endpoint.id}`);
  });

  it('marks a delivery failed once its attempts run out, and a test event reaches only its endpoint', async () => {
    const endpoint = await createEndpoint(owner, { url: receiverUrl, event_types: ['topup.succeeded'] });
    receiver.secrets = [endpoint.secret as string];
    receiver.answers = [500, 500, 500];
    const test = await owner.client.request<{ id: string; type: string }>('POST', `/api/console/webhooks/${endpoint.id}/test`);
    expect(test.status, test.text).toBe(202);
    await waitUntil(async () => (await deliveries(owner, endpoint.id))[0]?.state === 'failed', 15_000, 'the delivery to fail');
    const [delivery] = await deliveries(owner, endpoint.id);
    expect(delivery).toMatchObject({ event_id: test.body.id, event_type: 'webhook.test', attempts: 3 });
    expect(receiver.processed.has(test.body.id)).toBe(false);
    await owner.client.request('DELETE', `/api/console/webhooks/${endpoint.id}`);
  });

  it('signs with the old and the new secret during a rotation', async () => {
    const endpoint = await createEndpoint(owner, { url: receiverUrl, event_types: [] });
    const rotated = await owner.client.request<Endpoint>('POST', `/api/console/webhooks/${endpoint.id}/rotate-secret`);
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.body.secret).not.toBe(endpoint.secret);
    expect(rotated.body.previous_secret_valid_until).not.toBeNull();
    receiver.secrets = [endpoint.secret as string, rotated.body.secret as string];
    const before = receiver.requests.length;
    const test = await owner.client.request<{ id: string }>('POST', `/api/console/webhooks/${endpoint.id}/test`);
    await waitUntil(() => receiver.processed.has(test.body.id), 10_000, 'the test event');
    const request = receiver.requests.slice(before).find((entry) => entry.id === test.body.id);
    expect(request?.signature.split(' ')).toHaveLength(2);
    expect(request?.verifiedBy).toEqual([0, 1]);
    await owner.client.request('DELETE', `/api/console/webhooks/${endpoint.id}`);
  });

  it('routes a balance alert to a Slack-compatible endpoint instead of mail', async () => {
    const person = await signUpUser(setup);
    // Subscribed by the event's former name, stored by its name now.
    const slack = await createEndpoint(person, { url: receiverUrl, format: 'slack', event_types: ['balance.threshold_crossed'] });
    expect(slack.event_types).toEqual(['account.balance_low']);
    receiver.secrets = [slack.secret as string];
    const routed = await person.client.request<{ alert_mail: boolean }>('PUT', '/api/console/alerts', { alert_balance_usd: 5, alert_mail: false });
    expect(routed.status, routed.text).toBe(200);
    expect(routed.body.alert_mail).toBe(false);
    await waitUntil(async () => (await deliveries(person, slack.id))[0]?.state === 'succeeded', 15_000, 'the alert delivered');
    const [delivery] = await deliveries(person, slack.id);
    const request = receiver.requests.find((entry) => entry.id === delivery?.event_id);
    expect(JSON.parse(request?.body ?? '{}')).toEqual({ text: 'Balance alert: funds left $0, below the alert threshold of $5.' });
    // No alert mail: only the sign-up mails went to this address.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(setup.mail.to(person.email).filter((mail) => /alert/i.test(mail.subject ?? ''))).toHaveLength(0);
  });
  it('tells a key paused by its spent quota to the account\'s endpoints, once, and mails nothing', async () => {
    await addSimulatorModel(setup.gateway, 'webhook-sim', { per_request: 0.5 });
    const person = await signUpUser(setup);
    expect((await setup.gateway.admin('POST', `/admin/accounts/${person.accountId}/credits`, { amount_usd: 5 })).status).toBe(200);
    const key = await setup.gateway.admin<{ id: string; key: string }>('POST', `/admin/accounts/${person.accountId}/keys`, { name: 'capped', quota_usd: 1 });
    const endpoint = await createEndpoint(person, { url: receiverUrl, event_types: ['key.paused'] });
    receiver.secrets = [endpoint.secret as string];
    for (let round = 0; round < 2; round += 1) expect((await chat(setup.gateway, key.body.key, 'webhook-sim')).status).toBe(200);
    expect((await chat(setup.gateway, key.body.key, 'webhook-sim')).status).toBe(429);
    await waitUntil(async () => (await deliveries(person, endpoint.id))[0]?.state === 'succeeded', 15_000, 'the key.paused event');
    const [delivery] = await deliveries(person, endpoint.id);
    expect(receiver.processed.get(delivery?.event_id ?? '')).toMatchObject({
      type: 'key.paused', data: { key_id: key.body.id, key_name: 'capped', reason: 'quota_cap', spent_usd: '1', spent_nano: '1000000000', quota_usd: '1' },
    });
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(await deliveries(person, endpoint.id)).toHaveLength(1);
    expect(setup.mail.to(person.email).filter((mail) => /paused|quota/i.test(mail.subject ?? ''))).toHaveLength(0);
  });

  it('tells a key paused by its daily budget once for the period, with the period and its reset, and mails nothing', async () => {
    await addSimulatorModel(setup.gateway, 'webhook-budget-sim', { per_request: 0.5 });
    const person = await signUpUser(setup);
    expect((await setup.gateway.admin('POST', `/admin/accounts/${person.accountId}/credits`, { amount_usd: 5 })).status).toBe(200);
    const key = await setup.gateway.admin<{ id: string; key: string }>('POST', `/admin/accounts/${person.accountId}/keys`, { name: 'budgeted', budget: { period: 'day', limit_usd: 1 } });
    expect(key.status).toBe(201);
    const endpoint = await createEndpoint(person, { url: receiverUrl, event_types: ['key.paused'] });
    receiver.secrets = [endpoint.secret as string];
    for (let round = 0; round < 2; round += 1) expect((await chat(setup.gateway, key.body.key, 'webhook-budget-sim')).status).toBe(200);
    expect((await chat(setup.gateway, key.body.key, 'webhook-budget-sim')).status).toBe(429);
    await waitUntil(async () => (await deliveries(person, endpoint.id))[0]?.state === 'succeeded', 15_000, 'the key.paused event');
    const [delivery] = await deliveries(person, endpoint.id);
    const dayStart = Math.floor(Date.now() / 86_400_000) * 86_400_000;
    const event = receiver.processed.get(delivery?.event_id ?? '') as { data: Record<string, unknown> } | undefined;
    expect(event).toMatchObject({
      type: 'key.paused',
      data: {
        key_id: key.body.id, key_name: 'budgeted', reason: 'budget', budget_period: 'day',
        period_start: new Date(dayStart).toISOString(), resets_at: new Date(dayStart + 86_400_000).toISOString(),
        spent_usd: '1', spent_nano: '1000000000', budget_usd: '1', budget_nano: '1000000000',
      },
    });
    // Amounts are exact strings, never floats.
    expect(Object.values(event?.data ?? {}).some((value) => typeof value === 'number')).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(await deliveries(person, endpoint.id)).toHaveLength(1);
    expect(setup.mail.to(person.email).filter((mail) => /paused|budget/i.test(mail.subject ?? ''))).toHaveLength(0);
  });
});

describe('who may manage webhooks', () => {
  it('limits test events per endpoint and per account in the console, and per endpoint in the admin API, with 429 and Retry-After', async () => {
    const person = await signUpUser(setup);
    const first = await createEndpoint(person, { url: receiverUrl, event_types: [] });
    const second = await createEndpoint(person, { url: receiverUrl, event_types: [] });
    for (let round = 0; round < 5; round += 1) {
      expect((await person.client.request('POST', `/api/console/webhooks/${first.id}/test`)).status).toBe(202);
    }
    const refused = await person.client.request<{ error: { type: string; code: string; message: string } }>('POST', `/api/console/webhooks/${first.id}/test`);
    expect(refused.status, refused.text).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'rate_limit_exceeded' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another endpoint of the account has its own count; another account's id is 404 and counts nothing.
    expect((await person.client.request('POST', `/api/console/webhooks/${second.id}/test`)).status).toBe(202);
    const stranger = await signUpUser(setup);
    expect((await stranger.client.request('POST', `/api/console/webhooks/${second.id}/test`)).status).toBe(404);
    // The per-account window: endpoints created to spread a flood run out together.
    let accountRefused = false;
    for (let round = 0; round < 5 && !accountRefused; round += 1) {
      const spread = await createEndpoint(person, { url: receiverUrl, event_types: [] });
      for (let sent = 0; sent < 5; sent += 1) {
        const answer = await person.client.request('POST', `/api/console/webhooks/${spread.id}/test`);
        if (answer.status === 429) accountRefused = true;
        else expect(answer.status).toBe(202);
      }
    }
    expect(accountRefused).toBe(true);

    const operatorEndpoint = await setup.gateway.admin<{ id: string }>('POST', '/admin/webhooks', { url: receiverUrl, event_types: [] });
    expect(operatorEndpoint.status).toBe(201);
    for (let round = 0; round < 5; round += 1) {
      expect((await setup.gateway.admin('POST', `/admin/webhooks/${operatorEndpoint.body.id}/test`)).status).toBe(202);
    }
    const adminRefused = await setup.gateway.admin<{ error: { code: string } }>('POST', `/admin/webhooks/${operatorEndpoint.body.id}/test`);
    expect(adminRefused.status).toBe(429);
    expect(adminRefused.body.error).toMatchObject({ code: 'rate_limit_exceeded' });
    expect(Number(adminRefused.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('refuses roles below admin, and answers 404 for another account\'s endpoints', async () => {
    const endpoint = await createEndpoint(owner, { url: receiverUrl });
    for (const role of ['developer', 'billing', 'viewer']) {
      const member = await inviteMember(role);
      expect((await member.client.request('GET', '/api/console/webhooks')).status).toBe(403);
      expect((await member.client.request('POST', '/api/console/webhooks', { url: receiverUrl })).status).toBe(403);
      expect((await member.client.request('POST', `/api/console/webhooks/${endpoint.id}/test`)).status).toBe(403);
    }
    const admin = await inviteMember('admin');
    expect((await admin.client.request('GET', `/api/console/webhooks/${endpoint.id}`)).status).toBe(200);

    const stranger = await signUpUser(setup);
    const [delivery] = await deliveries(owner, endpoint.id);
    for (const [method, path] of [
      ['GET', `/api/console/webhooks/${endpoint.id}`],
      ['PATCH', `/api/console/webhooks/${endpoint.id}`],
      ['DELETE', `/api/console/webhooks/${endpoint.id}`],
      ['POST', `/api/console/webhooks/${endpoint.id}/rotate-secret`],
      ['POST', `/api/console/webhooks/${endpoint.id}/test`],
      ['GET', `/api/console/webhooks/${endpoint.id}/deliveries`],
      ['POST', `/api/console/webhooks/${endpoint.id}/deliveries/${delivery?.id ?? 'whd_x'}/resend`],
    ] as const) {
      const answer = await stranger.client.request(method, path, method === 'PATCH' ? { enabled: false } : undefined);
      expect(answer.status, `${method} ${path}`).toBe(404);
    }
    expect((await stranger.client.request<{ data: unknown[] }>('GET', '/api/console/webhooks')).body.data).toEqual([]);
    // The operator's endpoints are not an account's either way.
    const operator = await setup.gateway.admin<Endpoint>('POST', '/admin/webhooks', { url: receiverUrl, event_types: ['channel.down', 'channel.up'] });
    expect(operator.status).toBe(201);
    expect((await owner.client.request('GET', `/api/console/webhooks/${operator.body.id}`)).status).toBe(404);
    expect((await setup.gateway.admin('GET', `/admin/webhooks/${endpoint.id}`)).status).toBe(404);
    expect((await setup.gateway.admin('POST', '/admin/webhooks', { url: receiverUrl, event_types: ['key.disabled'] })).status).toBe(400);
    expect((await owner.client.request('POST', '/api/console/webhooks', { url: receiverUrl, event_types: ['channel.down'] })).status).toBe(400);
    await setup.gateway.admin('DELETE', `/admin/webhooks/${operator.body.id}`);
    await owner.client.request('DELETE', `/api/console/webhooks/${endpoint.id}`);
  });

  it('lets the operator make an account\'s endpoint with the contract\'s fields (events, account_id), secret shown once', async () => {
    const made = await setup.gateway.admin<Endpoint & { secret: string; event_types: string[] }>('POST', '/admin/webhooks', {
      url: receiverUrl, events: ['key.paused', 'topup.succeeded'], account_id: owner.accountId,
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body.secret).toMatch(/^whsec_/);
    expect(made.body.event_types).toEqual(['key.paused', 'topup.succeeded']);
    // It is the account's: listed in its console without the secret, not among the operator's.
    const listed = await owner.client.request<{ data: Array<{ id: string }> }>('GET', '/api/console/webhooks');
    expect(listed.body.data.map((entry) => entry.id)).toContain(made.body.id);
    expect(listed.text).not.toContain(made.body.secret);
    expect((await setup.gateway.admin('GET', `/admin/webhooks/${made.body.id}`)).status).toBe(404);
    // An account's endpoint takes account events only; an unknown account is 404; both field names at once is 400.
    expect((await setup.gateway.admin('POST', '/admin/webhooks', { url: receiverUrl, events: ['channel.down'], account_id: owner.accountId })).status).toBe(400);
    expect((await setup.gateway.admin('POST', '/admin/webhooks', { url: receiverUrl, events: ['key.paused'], account_id: 'acc_missing' })).status).toBe(404);
    expect((await setup.gateway.admin('POST', '/admin/webhooks', { url: receiverUrl, events: ['channel.down'], event_types: ['channel.up'] })).status).toBe(400);
    expect((await owner.client.request('DELETE', `/api/console/webhooks/${made.body.id}`)).status).toBe(204);
  });

  it.each([
    ['http://example.com/hooks', 'https'],
    ['https://user:secret@example.com/hooks', 'user name or password'],
    ['https://10.1.2.3/hooks', 'not a public address'],
    ['https://169.254.169.254/latest', 'not a public address'],
    ['https://[fd00::1]/hooks', 'not a public address'],
    ['ftp://example.com/', 'https'],
    ['not a url', 'absolute URL'],
  ])('refuses the endpoint URL %s', async (url, reason) => {
    const answer = await owner.client.request<{ error: { message: string; param?: string } }>('POST', '/api/console/webhooks', { url });
    expect(answer.status, answer.text).toBe(400);
    expect(answer.body.error.message).toContain(reason);
  });
});
