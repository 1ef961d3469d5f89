/**
 * A project's and an end customer's budget reaching the account's alert percent is told to the account's webhook
 * endpoints as `project.budget_threshold_crossed` and `customer.budget_threshold_crossed`: once per threshold and
 * period, with two gateway instances on one database (PostgreSQL with TEST_DATABASE_URL, else one SQLite file) both
 * checking alerts every second and both delivering; signed by the Standard Webhooks scheme and verified by the official
 * `standardwebhooks` package in the receiver, which fails the first two attempts (one delivery counted).
 */
import { randomBytes } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../cli/cli-process.js';
import { addRoutedModel, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { WebhookReceiver } from '../../support/webhook-receiver.js';

const MODEL = 'threshold-gpt';
const EVENT_TYPES = ['project.budget_threshold_crossed', 'customer.budget_threshold_crossed'];
let first: TestGateway;
let second: TestGateway;
let upstream: MockOpenAIUpstream;
let receiver: WebhookReceiver;
let account: SeededAccount;
let projectId: string;
let projectKey: string;
let endpointId: string;
/** What one request costs (all are alike), in USD. */
let cost: number;

interface Payload { type: string; data: Record<string, unknown> }

const received = (type: string): Payload[] => [...receiver.processed.values()].map((payload) => payload as Payload).filter((payload) => payload.type === type);
const requestsOf = (type: string) => receiver.requests.filter((request) => (JSON.parse(request.body) as Payload).type === type);

async function call(instance: TestGateway, key: string, customer: string | null): Promise<number> {
  const client = new OpenAI({ apiKey: key, baseURL: instance.baseURL, maxRetries: 0 });
  const answer = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hello there' }], max_tokens: 16 }, {
    headers: customer === null ? {} : { 'x-gateway-customer': customer },
  }).withResponse();
  return Number(answer.response.headers.get('x-request-cost-usd'));
}

/** Both instances have run their alert check and deliverer several times since. */
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 3000));

beforeAll(async () => {
  const env = {
    WEBHOOK_ALLOW_HTTP_LOOPBACK: 'true', WEBHOOK_CHECK_MS: '50', WEBHOOK_RETRY_SECONDS: '1,1', ALERT_CHECK_SECONDS: '1',
    SECRET_KEY: randomBytes(32).toString('hex'),
  };
  first = await startTestGateway({ env });
  upstream = await startMockOpenAIUpstream();
  await addRoutedModel(first, {
    model: MODEL,
    pricing: { input_per_mtok: 100_000, output_per_mtok: 200_000 },
    channel: { name: 'threshold-openai', type: 'openai', base_url: upstream.url, api_key: 'sk-upstream-test', models: { [MODEL]: 'gpt-4o-mini' } },
  });
  account = await seedAccount(first, { balanceUsd: 10_000 });
  receiver = new WebhookReceiver();
  const url = await receiver.start();
  const endpoint = await first.admin<{ id: string; secret: string }>('POST', '/admin/webhooks', { url, events: EVENT_TYPES, account_id: account.accountId });
  expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
  endpointId = endpoint.body.id;
  receiver.secrets = [endpoint.body.secret];

  // Every request is alike: its cost sets the budgets (ten requests' worth, alerts at half).
  cost = await call(first, account.key, null);
  expect(cost).toBeGreaterThan(0);
  const project = await first.admin<{ id: string }>('POST', `/admin/accounts/${account.accountId}/projects`, { name: 'Search', budget: { period: 'day', limit_usd: (cost * 10).toFixed(9) } });
  expect(project.status, JSON.stringify(project.body)).toBe(201);
  projectId = project.body.id;
  const key = await first.admin<{ key: string }>('POST', `/admin/accounts/${account.accountId}/keys`, { name: 'search key', project_id: projectId });
  expect(key.status, JSON.stringify(key.body)).toBe(201);
  projectKey = key.body.key;
  for (const [customer, body] of [['acme', { budget_usd: (cost * 10).toFixed(9), period: 'day' }], ['*', { budget_usd: (cost * 10).toFixed(9), period: 'week' }]] as const) {
    const rule = await first.admin('PUT', `/admin/accounts/${account.accountId}/customers/${customer}`, body);
    expect(rule.status, JSON.stringify(rule.body)).toBe(201);
  }
  const alerts = await first.admin('PUT', `/admin/accounts/${account.accountId}/alerts`, { alert_quota_percent: 50 });
  expect(alerts.status, JSON.stringify(alerts.body)).toBe(200);
  // The second instance reads the model, the project and the rules from the shared database as it starts.
  second = await startTestGateway({ env: { ...env, DATABASE_URL: first.databaseUrl } });
}, 60_000);

afterAll(async () => {
  await second?.close();
  await first?.close();
  await upstream?.close();
  await receiver?.stop();
});

describe('budget threshold events of projects and end customers', () => {
  it('tells each crossing once, signed, through a receiver that fails twice, though both instances check and deliver', async () => {
    // Four requests of ten: below half of every budget, nothing is told.
    for (let index = 0; index < 4; index += 1) await call(index % 2 === 0 ? first : second, projectKey, 'acme');
    await settle();
    expect(receiver.requests).toHaveLength(0);

    receiver.answers = [500, 503];
    // Two more on both instances at once: six tenths spent, past half of the project's and acme's budgets.
    await Promise.all([call(first, projectKey, 'acme'), call(second, projectKey, 'acme')]);
    await waitUntil(() => received('project.budget_threshold_crossed').length === 1 && received('customer.budget_threshold_crossed').length === 1, 20_000, 'both events delivered');
    await settle();

    expect(receiver.requests.map((request) => request.status).slice(0, 2)).toEqual([500, 503]);
    expect(receiver.requests.every((request) => request.verifiedBy.length === 1 && /^v1,/.test(request.signature))).toBe(true);
    for (const type of EVENT_TYPES) {
      // One event id, however often it was attempted, and one processed delivery.
      expect(new Set(requestsOf(type).map((request) => request.id)).size).toBe(1);
      expect(received(type)).toHaveLength(1);
    }
    const [project] = received('project.budget_threshold_crossed');
    expect(project?.data).toMatchObject({ account_id: account.accountId, project_id: projectId, project_name: 'Search', budget_period: 'day', percent: 50 });
    const [customer] = received('customer.budget_threshold_crossed');
    expect(customer?.data).toMatchObject({ account_id: account.accountId, customer: 'acme', budget_period: 'day', percent: 50 });
    for (const event of [project, customer]) {
      const data = event?.data as { spent_usd: string; budget_usd: string; threshold_usd: string; period_start: string; resets_at: string };
      expect(Number(data.budget_usd)).toBeCloseTo(cost * 10, 6);
      expect(Number(data.threshold_usd)).toBeCloseTo(cost * 5, 6);
      expect(Number(data.spent_usd)).toBeGreaterThanOrEqual(Number(data.threshold_usd));
      expect(Date.parse(data.resets_at) - Date.parse(data.period_start)).toBe(86_400_000);
    }

    // More spend in the same period tells nothing more.
    await call(first, projectKey, 'acme');
    await settle();
    for (const type of EVENT_TYPES) expect(new Set(requestsOf(type).map((request) => request.id)).size).toBe(1);

    // The account's delivery log (what its console shows): one delivery per event, succeeded on its third attempt or later.
    const deliveries = await first.gateway.services.storage.webhooks.listDeliveries(account.accountId, endpointId, 50);
    expect(deliveries.map((delivery) => [delivery.eventType, delivery.state]).sort()).toEqual([
      ['customer.budget_threshold_crossed', 'succeeded'], ['project.budget_threshold_crossed', 'succeeded'],
    ]);
    const alerts = await first.admin<{ alerts: Array<{ kind: string; subject_id: string; state: string }> }>('GET', `/admin/accounts/${account.accountId}/alerts`);
    expect(alerts.body.alerts.filter((alert) => alert.kind === 'project_budget' || alert.kind === 'customer_budget').map((alert) => [alert.kind, alert.subject_id, alert.state]).sort()).toEqual([
      ['customer_budget', `${account.accountId}:acme`, 'notified'], ['project_budget', projectId, 'notified'],
    ]);
  }, 90_000);

  it('an alert re-armed and crossed again at the same threshold in the same period is the same event: not told twice', async () => {
    const before = requestsOf('project.budget_threshold_crossed').length;
    // Raised: the crossing is gone and the alert re-arms; lowered back: crossed again at the same threshold.
    const raised = await first.admin('PATCH', `/admin/accounts/${account.accountId}/projects/${projectId}`, { budget: { period: 'day', limit_usd: (cost * 100).toFixed(9) } });
    expect(raised.status, JSON.stringify(raised.body)).toBe(200);
    await waitUntil(async () => {
      const alerts = await first.admin<{ alerts: Array<{ kind: string; state: string }> }>('GET', `/admin/accounts/${account.accountId}/alerts`);
      return alerts.body.alerts.some((alert) => alert.kind === 'project_budget' && alert.state === 'armed');
    }, 10_000, 'the project alert re-armed');
    const lowered = await first.admin('PATCH', `/admin/accounts/${account.accountId}/projects/${projectId}`, { budget: { period: 'day', limit_usd: (cost * 10).toFixed(9) } });
    expect(lowered.status, JSON.stringify(lowered.body)).toBe(200);
    await waitUntil(async () => {
      const alerts = await first.admin<{ alerts: Array<{ kind: string; state: string }> }>('GET', `/admin/accounts/${account.accountId}/alerts`);
      return alerts.body.alerts.some((alert) => alert.kind === 'project_budget' && alert.state === 'notified');
    }, 10_000, 'the project alert told again');
    await settle();
    expect(requestsOf('project.budget_threshold_crossed')).toHaveLength(before);
    expect(received('project.budget_threshold_crossed')).toHaveLength(1);
  }, 60_000);

  it('a customer governed by the rule of every customer has its own crossing, against that rule\'s budget', async () => {
    for (let index = 0; index < 6; index += 1) await call(index % 2 === 0 ? first : second, account.key, 'beta');
    await waitUntil(() => received('customer.budget_threshold_crossed').some((event) => event.data.customer === 'beta'), 20_000, 'beta\'s event');
    await settle();
    const beta = received('customer.budget_threshold_crossed').filter((event) => event.data.customer === 'beta');
    expect(beta).toHaveLength(1);
    expect(beta[0]?.data).toMatchObject({ budget_period: 'week', percent: 50 });
    expect(Date.parse(beta[0]?.data.resets_at as string) - Date.parse(beta[0]?.data.period_start as string)).toBe(7 * 86_400_000);
    // acme's own rule replaces the default: still its one event.
    expect(received('customer.budget_threshold_crossed').filter((event) => event.data.customer === 'acme')).toHaveLength(1);
  }, 60_000);
});
