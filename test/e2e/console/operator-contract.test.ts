/**
 * The operator pages' contract (src/contract/operator.ts) against the real server: every answer the operators,
 * audit, accounts, ledger, offers, tiers and tickets pages read is parsed with its strict schema over real HTTP,
 * through the operator console's own routes, so a field added, dropped or renamed on the server without the contract
 * fails here as it fails the web app's typecheck.
 */
import type { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminAccountDetail, adminAccountPage, adminLedgerPage, adminPlan, adminPlanPage, announcementPage, apiKey, auditPage, listPageOf, operatorList, redemptionCode,
  redemptionCodePage, supportTicket, supportTicketPage, tier, tierPage, userStandingList, channel, channelPage, channelTestResult, channelTypeList, gatewayHealth,
  operatorOverview, operatorUsagePage, consoleAnnouncementList, operatorSso, twoFactorSetup, adminMcpServer, adminMcpServerList, adminModel, adminModelPage, catalogImport, catalogList,
  operatorGrant, guardrailPolicyList, mcpToolList,
} from '../../../src/contract/index.js';
import OpenAI from 'openai';
import { flushWrites } from '../../support/gateway-harness.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { totpCode, uniqueEmail, type ConsoleClient } from '../../support/console-client.js';
import { startMockMcpServer } from '../../support/mock-mcp-server.js';
import { signUpUser, startConsoleGateway, type ConsoleGateway, type SignedUpUser } from './console-gateway.js';

let setup: ConsoleGateway;
let owner: ConsoleClient;
let user: SignedUpUser;
let upstream: MockOpenAIUpstream;

/** Calls the operator console and parses the answer with `schema`: the issues are the failure message. */
async function answerOf<Schema extends z.ZodType>(schema: Schema, method: string, path: string, body?: unknown, status = 200): Promise<z.infer<Schema>> {
  const answer = await owner.request<unknown>(method, path, body);
  expect(answer.status, answer.text).toBe(status);
  const parsed = schema.safeParse(answer.body);
  expect(parsed.success, `${method} ${path}: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
  return parsed.data as z.infer<Schema>;
}

beforeAll(async () => {
  upstream = await startMockOpenAIUpstream();
  setup = await startConsoleGateway({ SUPPORT_EMAIL: 'support@example.test', MCP_ALLOW_PRIVATE_ADDRESSES: 'true', MCP_HEALTH_CHECK_INTERVAL_SECONDS: '0' });
  owner = setup.client();
  const made = await owner.request('POST', '/api/operator/bootstrap', { admin_token: setup.gateway.adminToken, email: `owner-${Date.now()}@example.com`, password: 'Tide-41ab9c-Lantern' });
  expect(made.status, made.text).toBe(201);
  const started = await owner.request<unknown>('POST', '/api/me/two-factor/setup');
  const setupParsed = twoFactorSetup.safeParse(started.body);
  expect(setupParsed.success, JSON.stringify(setupParsed.error?.issues)).toBe(true);
  if (!setupParsed.success) throw new Error('the two-factor setup answer is not the contract\'s');
  expect((await owner.request('POST', '/api/me/two-factor/enable', { code: totpCode(setupParsed.data.secret, Date.now() + setup.shift.offset) })).status).toBe(200);
  user = await signUpUser(setup);
});

afterAll(async () => {
  await setup?.close();
  await upstream?.close();
});

describe('the operator pages contract', () => {
  it('describes channels, channel types, health, a channel test and the overview with traffic in it', async () => {
    const types = await answerOf(channelTypeList, 'GET', '/api/operator/admin/channel-types');
    expect(types.data.map((type) => type.type)).toContain('openai');
    const made = await answerOf(channel, 'POST', '/api/operator/admin/channels', { name: 'contract-openai', type: 'openai', base_url: upstream.url, api_key: 'sk-upstream-test', models: { 'contract-model': 'gpt-4o-mini' }, headers: { 'x-team': 'contract' } }, 201);
    expect(made.api_key_hints).toHaveLength(1);
    await answerOf(adminModel, 'POST', '/api/operator/admin/models', { id: 'contract-model', pricing: { input_per_mtok: 1, output_per_mtok: 2 }, cache: { ttl_seconds: 60 } }, 201);
    const channels = await answerOf(channelPage, 'GET', '/api/operator/admin/channels?limit=200');
    expect(channels.data.map((row) => row.id)).toContain(made.id);
    const tested = await answerOf(channelTestResult, 'POST', `/api/operator/admin/channels/${made.id}/test`, {});
    expect(tested, tested.message).toMatchObject({ ok: true, model: 'contract-model', upstream_model: 'gpt-4o-mini' });
    const caller = await signUpUser(setup);
    expect((await owner.request('POST', `/api/operator/admin/accounts/${caller.accountId}/credits`, { amount_usd: 2, reason: 'contract traffic' })).status).toBe(200);
    const key = await caller.client.request<{ secret: string }>('POST', '/api/keys', { name: 'contract traffic' });
    expect(key.status, key.text).toBe(201);
    await new OpenAI({ apiKey: key.body.secret, baseURL: `${setup.gateway.url}/v1` }).chat.completions.create({ model: 'contract-model', messages: [{ role: 'user', content: 'hello' }] });
    await flushWrites(setup.gateway);
    const health = await answerOf(gatewayHealth, 'GET', '/api/operator/admin/health');
    expect(health.channels.find((row) => row.channel_id === made.id)?.breaker.recent.successes).toBeGreaterThan(0);
    const overview = await answerOf(operatorOverview, 'GET', '/api/operator/overview?window=1h');
    expect(overview.by_channel.find((row) => row.name === made.id)).toMatchObject({ channel_name: 'contract-openai' });
    expect(overview.by_model.map((row) => row.name)).toContain('contract-model');
    expect(overview.channels.map((row) => row.channel_id)).toContain(made.id);
    const usage = await answerOf(operatorUsagePage, 'GET', `/api/operator/usage?email=${encodeURIComponent(caller.email)}&limit=100`);
    expect(usage.data[0]).toMatchObject({ account_email: caller.email, key_name: 'contract traffic', channel_name: 'contract-openai', model: 'contract-model' });
  });

  it('describes the operators list, a console user standing and the audit log', async () => {
    const operators = await answerOf(operatorList, 'GET', '/api/operator/operators');
    expect(operators.data[0]).toMatchObject({ role: 'owner', status: 'active', two_factor_enabled: true, created_by: null });
    const other = await signUpUser(setup);
    const standing = await answerOf(userStandingList, 'GET', `/api/operator/users?email=${encodeURIComponent(other.email)}`);
    expect(standing.data[0]).toMatchObject({ email: other.email, locked: null, operator_role: null, memberships: [{ account_id: other.accountId, role: 'owner' }] });
    const locked = await owner.request('POST', `/api/operator/users/${standing.data[0]?.id}/lock`, { reason: 'contract check' });
    expect(locked.status, locked.text).toBe(200);
    const lockedStanding = await answerOf(userStandingList, 'GET', `/api/operator/users?email=${encodeURIComponent(other.email)}`);
    expect(lockedStanding.data[0]?.locked?.reason).toBe('contract check');
    const sso = await answerOf(operatorSso, 'GET', '/api/operator/sso');
    expect(sso).toMatchObject({ source: null, connection: null });
    const audit = await answerOf(auditPage, 'GET', '/api/operator/audit?limit=10');
    expect(audit.data.length).toBeGreaterThan(0);
    // Granting a role to an email with no console login invites it; granting it to a console user does not.
    const invitedEmail = uniqueEmail('contract-operator');
    expect(await answerOf(operatorGrant, 'POST', '/api/operator/operators', { email: invitedEmail, role: 'viewer' }, 201)).toMatchObject({ email: invitedEmail, role: 'viewer', invited: true });
    expect(await answerOf(operatorGrant, 'POST', '/api/operator/operators', { email: other.email, role: 'support' }, 201)).toMatchObject({ email: other.email, invited: false });
  });

  it('describes the guardrail policies list', async () => {
    expect((await owner.request('POST', '/api/operator/admin/guardrails', { name: 'contract-words', kind: 'deny_list', mode: 'block', applies_to: 'input', settings: { words: ['forbidden'] } })).status).toBe(201);
    const policies = await answerOf(guardrailPolicyList, 'GET', '/api/operator/admin/guardrails');
    expect(policies.data.map((policy) => policy.name)).toContain('contract-words');
  });

  it('describes models (stored, and served with the catalog facts), the bundled catalog and an import of its list prices', async () => {
    expect((await owner.request('POST', '/api/operator/admin/models', { id: 'contract-stored', pricing: { input_per_mtok: 3, output_per_mtok: 4 }, fallbacks: [] })).status).toBe(201);
    const models = await answerOf(adminModelPage, 'GET', '/api/operator/admin/models?limit=200');
    expect(models.data.map((model) => model.id)).toContain('contract-stored');
    const stored = await answerOf(adminModel, 'GET', '/api/operator/admin/models/contract-stored');
    expect(stored).toMatchObject({ guardrails: [], pricing: { input_per_mtok: 3 } });
    const catalog = await answerOf(catalogList, 'GET', '/api/operator/admin/catalog/models?provider=openai&q=gpt-4o-mini');
    const bundled = catalog.data[0];
    expect(bundled?.provider).toBe('openai');
    // A stored model the catalog serves (a channel routes it) is read with the catalog's facts.
    const served = await answerOf(adminModel, 'GET', '/api/operator/admin/models/contract-model');
    expect(served).toMatchObject({ price_source: 'operator', cache: { ttl_seconds: 60 } });
    const imported = await answerOf(catalogImport, 'POST', '/api/operator/admin/catalog/import', { provider: 'openai', models: [bundled?.id] });
    expect(imported.imported).toMatchObject([{ id: bundled?.id, created: true, before: null }]);
    await answerOf(adminModel, 'PATCH', `/api/operator/admin/models/${encodeURIComponent(bundled?.id ?? '')}`, { limits: { rpm: 10 } });
  });

  it('describes MCP servers with headers and OAuth client credentials by name only', async () => {
    const made = await answerOf(adminMcpServer, 'POST', '/api/operator/admin/mcp-servers', {
      name: 'contract-tools', url: 'http://127.0.0.1:9/mcp', headers: { 'x-team': 'contract' }, public: true, price_per_call: 0.01,
      oauth: { token_url: 'http://127.0.0.1:9/token', client_id: 'contract', client_secret: 'contract-secret', scope: 'tools' },
      tool_rules: { default: 'read_only', tools: { search: 'allowed' } },
    }, 201);
    expect(made).toMatchObject({ header_names: ['x-team'], oauth: { client_secret: 'set', auth_method: 'client_secret_basic' }, command: null, owner_account_id: null });
    const listed = await answerOf(adminMcpServerList, 'GET', '/api/operator/admin/mcp-servers');
    expect(listed.data.map((server) => server.id)).toContain(made.id);
    await answerOf(adminMcpServer, 'GET', `/api/operator/admin/mcp-servers/${made.id}`);
    const changed = await answerOf(adminMcpServer, 'PATCH', `/api/operator/admin/mcp-servers/${made.id}`, { enabled: false, oauth: null });
    expect(changed).toMatchObject({ enabled: false, oauth: null });
  });

  it('describes the tools an MCP server lists, checked on the spot', async () => {
    const tools = await startMockMcpServer('contract-live', 'streamable-http');
    try {
      const made = await answerOf(adminMcpServer, 'POST', '/api/operator/admin/mcp-servers', { name: 'contract-live', url: tools.url }, 201);
      const listed = await answerOf(mcpToolList, 'GET', `/api/operator/admin/mcp-servers/${made.id}/tools`);
      expect(listed.server_id).toBe(made.id);
      expect(listed.data.length).toBeGreaterThan(0);
    } finally {
      await tools.close();
    }
  });

  it('describes accounts, one account with its subscriptions and sign-up credit, its keys and its ledger', async () => {
    const accounts = await answerOf(adminAccountPage, 'GET', `/api/operator/admin/accounts?q=${encodeURIComponent(user.email)}`);
    expect(accounts.data.map((account) => account.id)).toContain(user.accountId);
    expect((await owner.request('POST', `/api/operator/admin/accounts/${user.accountId}/credits`, { amount_usd: 3, reason: 'contract' })).status).toBe(200);
    const plan = await answerOf(adminPlan, 'POST', '/api/operator/admin/plans', { name: 'Contract monthly', period: 'month', quota_usd: 40, overage: { policy: 'limit', limit_usd: 10 }, price_usd: 20 }, 201);
    expect((await owner.request('POST', `/api/operator/admin/accounts/${user.accountId}/subscriptions`, { plan_id: plan.id })).status).toBeLessThan(300);
    const detail = await answerOf(adminAccountDetail, 'GET', `/api/operator/admin/accounts/${user.accountId}`);
    expect(detail.subscriptions).toHaveLength(1);
    expect(detail.guardrails).toEqual([]);
    expect(detail.balance_usd).toBe(3);
    expect((await owner.request('POST', `/api/operator/admin/accounts/${user.accountId}/keys`, { name: 'contract' })).status).toBe(201);
    const keys = await answerOf(listPageOf(apiKey), 'GET', `/api/operator/admin/accounts/${user.accountId}/keys?limit=100`);
    expect(keys.data.map((key) => key.name)).toContain('contract');
    const ledger = await answerOf(adminLedgerPage, 'GET', `/api/operator/admin/accounts/${user.accountId}/ledger?order=desc&limit=25`);
    expect(ledger.data.some((entry) => entry.amount_usd === 3)).toBe(true);
  });

  it('describes plans, redemption codes (the plaintext only when made), announcements and tiers', async () => {
    await answerOf(adminPlanPage, 'GET', '/api/operator/admin/plans?limit=200');
    const issued = await answerOf(listPageOf(redemptionCode), 'POST', '/api/operator/admin/redemption-codes', { amount_usd: 5, count: 2, name: 'contract' }, 201);
    expect(issued.data.every((code) => typeof code.code === 'string')).toBe(true);
    const codes = await answerOf(redemptionCodePage, 'GET', '/api/operator/admin/redemption-codes?limit=100');
    expect(codes.data.every((code) => code.code === undefined)).toBe(true);
    expect((await owner.request('POST', '/api/operator/admin/announcements', { title: 'Maintenance', body: 'Sunday 02:00 UTC.', level: 'warning' })).status).toBe(201);
    const announcements = await answerOf(announcementPage, 'GET', '/api/operator/admin/announcements?limit=100');
    expect(announcements.data[0]).toMatchObject({ title: 'Maintenance', level: 'warning' });
    const shown = await user.client.request<unknown>('GET', '/api/announcements');
    const parsed = consoleAnnouncementList.safeParse(shown.body);
    expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
    expect(parsed.data?.data[0]).toMatchObject({ title: 'Maintenance', dismissed: false });
    await answerOf(tier, 'POST', '/api/operator/admin/tiers', { name: 'contract-tier', rpm: 30, signup_credit_usd: 1, signup_credit_days: 7 }, 201);
    const tiers = await answerOf(tierPage, 'GET', '/api/operator/admin/tiers?limit=100');
    expect(tiers.data.map((row) => row.name)).toContain('contract-tier');
  });

  it('describes the support queue and one ticket with its replies', async () => {
    const opened = await user.client.request<{ id: string }>('POST', '/api/console/support/tickets', { subject: 'Contract', category: 'billing', message: 'Where is my invoice?' });
    expect(opened.status, opened.text).toBe(201);
    await answerOf(supportTicketPage, 'GET', '/api/operator/admin/support/tickets?status=open&limit=100');
    await answerOf(supportTicket, 'POST', `/api/operator/admin/support/tickets/${opened.body.id}/replies`, { body: 'Sent again.', status: 'answered' }, 201);
    const thread = await answerOf(supportTicket, 'GET', `/api/operator/admin/support/tickets/${opened.body.id}`);
    expect(thread.replies?.map((reply) => reply.body)).toEqual(['Sent again.']);
  });
});
