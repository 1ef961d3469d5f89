/**
 * The console contract (src/contract) against the real server: every answer the account, key, usage and billing pages
 * read is parsed with its strict schema over real HTTP, so a field the server adds, drops or renames without the
 * contract fails here as it fails the web app's typecheck.
 */
import OpenAI from 'openai';
import type { z } from 'zod';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import {
  accountAlerts, apiKey, billing, consoleAlerts, consolePlans, consoleProjectAnswer, consoleProjectList, customerRule, customerRuleList, deletedCustomerRule,
  keyInput, type KeyInputJson, planChoice, projectInput, type ProjectInputJson, projectMemberAnswer, projectMemberList, usageReport,
  webhookDeliveryList, webhookEndpoint, webhookEndpointList, webhookEndpointWithSecret, webhookTestEvent, billingProfile, consoleConfig, consoleModelList, consoleSession, createdKey, dailyUsageList, fxRates, invitationAnswer, invitationLookup, invoicePage,
  keyAnswer, keyList, memberList, memberRoleAnswer, overview, referrals, sessionAccountList, sessionList, supportTicket, supportTicketPage, usagePage,
  transactionHistory, accountSso, playgroundCompletion, playgroundSummary, displayCurrency, signedIn, signInResult, ssoAvailability, redemption,
} from '../../../src/contract/index.js';
import { type createKeySchema } from '../../../src/management/account-input.js';
import { type createProjectSchema } from '../../../src/projects/project-input.js';
import { addRoutedModel, flushWrites } from '../../support/gateway-harness.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { type ConsoleClient, linkToken, strongPassword, uniqueEmail, waitForMail } from '../../support/console-client.js';
import { signUpUser, startConsoleGateway, type ConsoleGateway, type SignedUpUser } from './console-gateway.js';

let setup: ConsoleGateway;
let upstream: MockOpenAIUpstream;
let user: SignedUpUser;

beforeAll(async () => {
  upstream = await startMockOpenAIUpstream();
  setup = await startConsoleGateway({ SUPPORT_EMAIL: 'support@example.test', WEBHOOK_ALLOW_HTTP_LOOPBACK: 'true' });
  await addRoutedModel(setup.gateway, {
    model: 'house-model',
    pricing: { input_per_mtok: 2, output_per_mtok: 8 },
    channel: { name: 'openai-house', type: 'openai', base_url: upstream.url, api_key: 'sk-upstream-test', models: { 'house-model': 'gpt-4o-mini' } },
  });
  user = await signUpUser(setup);
  expect((await setup.gateway.admin('POST', `/admin/accounts/${user.accountId}/credits`, { amount_usd: 5 })).status).toBe(200);
});

afterAll(async () => {
  await setup?.close();
  await upstream?.close();
});

/** Calls the console and parses the answer with `schema`: the issues are the failure message. */
async function answerOf<Schema extends z.ZodType>(schema: Schema, method: string, path: string, body?: unknown, status = 200, client: ConsoleClient = user.client): Promise<z.infer<Schema>> {
  const answer = await client.request<unknown>(method, path, body);
  expect(answer.status, answer.text).toBe(status);
  const parsed = schema.safeParse(answer.body);
  expect(parsed.success, `${method} ${path}: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
  return parsed.data as z.infer<Schema>;
}

/** Invites a person to the user's account with `role` and accepts; their user id. */
async function invitedMember(role: string): Promise<string> {
  const email = uniqueEmail('contract-member');
  expect((await user.client.request('POST', '/api/members/invitations', { email, role })).status).toBe(201);
  const invitee = setup.client();
  const token = linkToken(await waitForMail(setup.mail, email, /invited you/i));
  const accepted = await answerOf(signedIn, 'POST', '/api/invitations/accept', { token, password: strongPassword() }, 200, invitee);
  expect(accepted.role).toBe(role);
  return accepted.user.id;
}

describe('the console contract', () => {
  it('describes the account answers: config, session, signed-in browsers', async () => {
    expect((await answerOf(accountSso, 'GET', '/api/sso')).connection).toBeNull();
    expect(await answerOf(displayCurrency, 'GET', '/api/console/display-currency')).toMatchObject({ currency: 'USD', can_change: true });
    await answerOf(consoleConfig, 'GET', '/api/config');
    const session = await answerOf(consoleSession, 'GET', '/api/session');
    expect(session.account?.id).toBe(user.accountId);
    const browsers = await answerOf(sessionList, 'GET', '/api/me/sessions');
    expect(browsers.data.some((row) => row.current)).toBe(true);
  });

  it('describes signing up, signing in, the single sign-on offer and redeeming a code', async () => {
    const email = uniqueEmail('contract-sign-up');
    const password = strongPassword();
    const newcomer = setup.client();
    const signedUp = await answerOf(signedIn, 'POST', '/api/auth/sign-up', { email, password }, 201, newcomer);
    expect(signedUp).toMatchObject({ status: 'signed_in', role: 'owner', user: { email } });
    const again = await answerOf(signInResult, 'POST', '/api/auth/sign-in', { email, password }, 200, setup.client());
    expect(again.status).toBe('signed_in');
    expect(await answerOf(ssoAvailability, 'GET', '/api/auth/sso', undefined, 200, setup.client())).toMatchObject({ operator: false });

    const made = await setup.gateway.admin<{ data: Array<{ code: string }> }>('POST', '/admin/redemption-codes', { amount_usd: 1.25, count: 1 });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    // Redeeming needs a confirmed email: the verified user redeems.
    const redeemed = await answerOf(redemption, 'POST', '/api/console/billing/redeem', { code: made.body.data[0]?.code });
    expect(redeemed).toMatchObject({ object: 'redemption', amount_usd: 1.25, balance_usd: expect.any(Number) });
  });

  it('describes the key answers, every optional part present, and the usage the key made', async () => {
    const created = await answerOf(createdKey, 'POST', '/api/keys', {
      name: 'contract', environment: 'production', quota_usd: 2, allowed_models: ['house-model'], ip_allowlist: ['127.0.0.1/32'],
      expires_at: new Date(Date.now() + 86_400_000).toISOString(), rpm: 100, tpm: 100_000, concurrency: 4,
      budget: { period: 'day', limit_usd: 1 }, allowed_origins: ['https://app.example.test'],
    }, 201);
    expect(created.key.budget?.period).toBe('day');
    expect(created.key.allowed_origins_warning).toEqual(expect.any(String));
    const client = new OpenAI({ apiKey: created.secret, baseURL: `${setup.gateway.url}/v1` });
    await client.chat.completions.create({ model: 'house-model', messages: [{ role: 'user', content: 'hello' }] });
    await flushWrites(setup.gateway);

    const listed = await answerOf(keyList, 'GET', '/api/keys');
    expect(listed.data.map((key) => key.id)).toContain(created.key.id);
    await answerOf(keyAnswer, 'GET', `/api/keys/${created.key.id}`);
    await answerOf(keyAnswer, 'PATCH', `/api/keys/${created.key.id}`, { budget: null, allowed_origins: null });
    const usage = await answerOf(usagePage, 'GET', '/api/usage');
    expect(usage.data[0]?.key_name).toBe('contract');
    const daily = await answerOf(dailyUsageList, 'GET', '/api/usage/daily');
    expect(daily.data[0]?.model).toBe('house-model');
    const revoked = await answerOf(keyAnswer, 'POST', `/api/keys/${created.key.id}/revoke`);
    expect(revoked.key.status).toBe('revoked');
  });

  it('describes the billing answers: balance and top-ups, buyer details, rates, invoices, referrals, support', async () => {
    const plan = await setup.gateway.admin('POST', '/admin/plans', { name: 'Contract plan', period: 'month', quota_usd: 40, overage: { policy: 'deny' } });
    expect(plan.status, JSON.stringify(plan.body)).toBe(201);
    expect((await setup.gateway.admin('POST', `/admin/accounts/${user.accountId}/subscriptions`, { plan_id: (plan.body as { id: string }).id })).status).toBe(201);
    const standing = await answerOf(overview, 'GET', '/api/overview');
    expect(standing.balance_usd).toBeGreaterThan(0);
    expect(standing.subscriptions).toMatchObject([{ plan: 'Contract plan', quota_usd: 40, remaining_usd: 40 }]);
    const money = await answerOf(billing, 'GET', '/api/console/billing');
    expect(money.balance_usd).toBeGreaterThan(0);
    await answerOf(billingProfile, 'GET', '/api/console/billing/profile');
    await answerOf(billingProfile, 'PUT', '/api/console/billing/profile', { name: 'Contract Ltd', address: '1 Main St', country: 'de', tax_id: null, email: null });
    await answerOf(fxRates, 'GET', '/api/console/fx');
    await answerOf(invoicePage, 'GET', '/api/console/billing/invoices');
    await answerOf(referrals, 'GET', '/api/console/referrals');
    const ticket = await answerOf(supportTicket, 'POST', '/api/console/support/tickets', { subject: 'Contract', category: 'billing', message: 'A question about invoices.' }, 201);
    await answerOf(supportTicketPage, 'GET', '/api/console/support/tickets');
    const read = await answerOf(supportTicket, 'GET', `/api/console/support/tickets/${ticket.id}`);
    expect(read.replies).toEqual([]);
    // The credit and the day's usage (the key test's call) are lines of the money trail.
    const history = await answerOf(transactionHistory, 'GET', '/api/console/transactions');
    expect(history.data.map((line) => line.type)).toEqual(expect.arrayContaining(['usage', 'operator_credit']));
    expect(history.data.find((line) => line.type === 'usage')?.requests).toBeGreaterThan(0);
  });

  it('describes the model list with prices, catalog facts and the keys that may call each', async () => {
    const models = await answerOf(consoleModelList, 'GET', '/api/models');
    const house = models.data.find((model) => model.id === 'house-model');
    expect(house?.pricing.input_per_mtok).toBe(2);
    expect(house?.keys).toEqual(expect.any(Array));
  });

  it('describes the member answers: the list with an open invitation, the invitation page, a role change, the account switcher', async () => {
    const email = uniqueEmail('contract');
    const invited = await answerOf(invitationAnswer, 'POST', '/api/members/invitations', { email, role: 'viewer' }, 201);
    expect(invited.invitation.email).toBe(email);
    const listed = await answerOf(memberList, 'GET', '/api/members');
    expect(listed.invitations.map((row) => row.id)).toContain(invited.invitation.id);
    expect(listed.data.find((row) => row.you)?.role).toBe('owner');

    const invitee = setup.client();
    const token = linkToken(await waitForMail(setup.mail, email, /invited you/i));
    const lookup = await answerOf(invitationLookup, 'POST', '/api/invitations/lookup', { token }, 200, invitee);
    expect(lookup.needs).toBe('choose_password');
    const accepted = await invitee.request<{ user: { id: string } }>('POST', '/api/invitations/accept', { token, password: strongPassword() });
    expect(accepted.status, accepted.text).toBe(200);
    const changed = await answerOf(memberRoleAnswer, 'PATCH', `/api/members/${accepted.body.user.id}`, { role: 'developer' });
    expect(changed.role).toBe('developer');
    const accounts = await answerOf(sessionAccountList, 'GET', '/api/session/accounts', undefined, 200, invitee);
    expect(accounts.data.map((account) => [account.id, account.role, account.current])).toEqual([[user.accountId, 'developer', true]]);
  });

  it('describes the key and project bodies the console sends, as the server reads them', async () => {
    // The typecheck proves the server's input schemas take every body the contract allows.
    expectTypeOf<KeyInputJson>().toExtend<z.input<typeof createKeySchema>>();
    expectTypeOf<ProjectInputJson>().toExtend<z.input<typeof createProjectSchema>>();
    const projectBody = projectInput.parse({ name: 'Contract project', quota_usd: 3, budget: { period: 'week', limit_usd: 1 }, rpm: 60, tpm: null, allowed_models: ['house-model'] });
    const created = await answerOf(consoleProjectAnswer, 'POST', '/api/projects', projectBody, 201);
    expect(created.project.budget?.held_usd).toBe(0);
    const keyBody = keyInput.parse({
      name: 'in project', environment: null, quota_usd: null, allowed_models: null, ip_allowlist: null, expires_at: null, rpm: null, tpm: null,
      concurrency: null, budget: null, allowed_origins: null, project_id: created.project.id,
    });
    const key = await answerOf(createdKey, 'POST', '/api/keys', keyBody, 201);
    expect(key.key.project_id).toBe(created.project.id);
    const listed = await answerOf(consoleProjectList, 'GET', '/api/projects');
    expect(listed.data.map((row) => [row.default, row.your_role])).toContainEqual([true, 'owner']);
    expect(listed.data.find((row) => row.id === created.project.id)?.key_count).toBe(1);
    await answerOf(consoleProjectAnswer, 'PATCH', `/api/projects/${created.project.id}`, { budget: null });
    await answerOf(projectMemberList, 'GET', `/api/projects/${created.project.id}/members`);
    const member = await invitedMember('developer');
    const added = await answerOf(projectMemberAnswer, 'PUT', `/api/projects/${created.project.id}/members/${member}`, { role: 'viewer' });
    expect(added.member.role).toBe('viewer');
  });

  it('describes the alert answers: the admin API\'s and the console\'s with each key\'s threshold', async () => {
    const created = await answerOf(createdKey, 'POST', '/api/keys', { name: 'capped', quota_usd: 1 }, 201);
    const alerts = await answerOf(consoleAlerts, 'PUT', '/api/console/alerts', { alert_balance_usd: 1, alert_quota_percent: 80, alert_mail: true });
    expect(alerts.keys.find((row) => row.key_id === created.key.id)?.effective_percent).toBe(80);
    await answerOf(consoleAlerts, 'PUT', `/api/console/alerts/keys/${created.key.id}`, { alert_quota_percent: 50 });
    await answerOf(consoleAlerts, 'GET', '/api/console/alerts');
    const admin = await setup.gateway.admin('GET', `/admin/accounts/${user.accountId}/alerts`);
    const parsed = accountAlerts.safeParse(admin.body);
    expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
  });

  it('describes the plans page and choosing a plan paid from the balance', async () => {
    const plan = await setup.gateway.admin('POST', '/admin/plans', { name: 'Self-service', period: 'month', quota_usd: 10, price_usd: 1, self_service: true, overage: { policy: 'limit', limit_usd: 2 } });
    expect(plan.status, JSON.stringify(plan.body)).toBe(201);
    const plans = await answerOf(consolePlans, 'GET', '/api/console/plans');
    const offered = plans.offered.find((row) => row.name === 'Self-service');
    expect(offered?.overage.limit_usd).toBe(2);
    const chosen = await answerOf(planChoice, 'POST', `/api/console/plans/${offered?.id ?? ''}/choose`);
    expect(chosen.charged_usd).toBe(1);
    const after = await answerOf(consolePlans, 'GET', '/api/console/plans');
    expect(after.offered.find((row) => row.name === 'Self-service')?.current).toBe(true);
  });

  it('describes the webhook answers: endpoints, the secret shown once, a test event and its deliveries', async () => {
    const created = await answerOf(webhookEndpointWithSecret, 'POST', '/api/console/webhooks', { url: 'http://127.0.0.1:9/hook', description: 'contract' }, 201);
    await answerOf(webhookEndpointList, 'GET', '/api/console/webhooks');
    await answerOf(webhookEndpoint, 'GET', `/api/console/webhooks/${created.id}`);
    await answerOf(webhookEndpoint, 'PATCH', `/api/console/webhooks/${created.id}`, { description: 'renamed' });
    const rotated = await answerOf(webhookEndpointWithSecret, 'POST', `/api/console/webhooks/${created.id}/rotate-secret`);
    expect(rotated.previous_secret_valid_until).toEqual(expect.any(String));
    await answerOf(webhookTestEvent, 'POST', `/api/console/webhooks/${created.id}/test`, undefined, 202);
    const deliveries = await answerOf(webhookDeliveryList, 'GET', `/api/console/webhooks/${created.id}/deliveries`);
    expect(deliveries.data[0]?.event_type).toBe('webhook.test');
  });

  it('describes the end-customer rules and the reports by customer, tag and key', async () => {
    const fallback = await answerOf(customerRule, 'PUT', '/api/customer-rules', { customer: null, rpm: 100 }, 201);
    expect(fallback.every_customer).toBe(true);
    const own = await answerOf(customerRule, 'PUT', '/api/customer-rules', { customer: 'acme', budget: { period: 'day', limit_usd: 1 } }, 201);
    expect(own.budget?.remaining_usd).toBe(1);
    await answerOf(customerRuleList, 'GET', '/api/customer-rules');
    const created = await answerOf(createdKey, 'POST', '/api/keys', { name: 'reported' }, 201);
    const client = new OpenAI({ apiKey: created.secret, baseURL: `${setup.gateway.url}/v1` });
    await client.chat.completions.create({ model: 'house-model', messages: [{ role: 'user', content: 'hello' }], user: 'acme' }, { headers: { 'x-gateway-tags': 'contract' } });
    await flushWrites(setup.gateway);
    for (const [name, field] of [['customers', 'customer'], ['tags', 'tag'], ['keys', 'key_id']] as const) {
      const report = await answerOf(usageReport, 'GET', `/api/reports/${name}`);
      expect(report.totals.length, name).toBeGreaterThan(0);
      expect(report.totals[0]?.[field], name).toEqual(expect.any(String));
    }
    await answerOf(deletedCustomerRule, 'DELETE', '/api/customer-rules?customer=acme');
  });

  it('describes the playground answer, unstreamed and as the streamed summary event', async () => {
    const plain = await answerOf(playgroundCompletion, 'POST', '/api/playground/chat', { model: 'house-model', messages: [{ role: 'user', content: 'hello' }], stream: false });
    expect(plain.summary).toMatchObject({ model: 'house-model', first_token_ms: null });
    const streamed = await user.client.raw('POST', '/api/playground/chat', { model: 'house-model', messages: [{ role: 'user', content: 'hello' }] });
    expect(streamed.status).toBe(200);
    const last = (await streamed.text()).split('\n\n').filter((block) => block.trim() !== '').at(-1) ?? '';
    expect(last.startsWith('event: summary\ndata: '), last).toBe(true);
    const summary = playgroundSummary.safeParse(JSON.parse(last.slice('event: summary\ndata: '.length)));
    expect(summary.success, JSON.stringify(summary.error?.issues)).toBe(true);
    expect(summary.data?.request_body).toMatchObject({ stream: true });
  });

  it('refuses a shape with a renamed field, as the web build would', async () => {
    const listed = await answerOf(keyList, 'GET', '/api/keys');
    const key = listed.data[0];
    if (key === undefined) throw new Error('no key listed');
    const { quota_usd: quota, ...rest } = key;
    expect(apiKey.safeParse(key).success).toBe(true);
    expect(apiKey.safeParse({ ...rest, quota }).success).toBe(false);
  });
});
