import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushWrites, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';

/**
 * Moderation guardrails over real HTTP with the official OpenAI SDK: the policy's moderation model is called through
 * the gateway's own `/v1/moderations` route (routing, admission, a usage row and a charge of its own) and billed to
 * the request's account or to the operator's key as the policy says; flagged categories block or log, with a score
 * threshold and a category list; a moderation call that cannot be made passes the text (fail open) or refuses it
 * (fail closed); output is checked whole and streamed. The mock OpenAI upstream answers `/v1/moderations` in OpenAI's
 * wire format and flags `violence` (score 0.91) in text about killing or attacking. Runs on PostgreSQL when
 * TEST_DATABASE_URL names one.
 */
let gateway: TestGateway;
let upstream: MockOpenAIUpstream;
let account: SeededAccount;
let operator: SeededAccount;
const keys: Record<string, { id: string; key: string }> = {};

/** USD per moderation call: priced so whoever is billed can be seen on the usage rows. */
const MODERATION_PRICE = 0.001;

interface UsageRow {
  request_id: string;
  key_id: string;
  account_id: string;
  endpoint: string;
  model: string;
  status: number;
  error_code: string | null;
  cost_usd: number;
  guardrails: Array<{ name: string; direction: string; outcome: string; count: number }>;
}

beforeAll(async () => {
  upstream = await startMockOpenAIUpstream();
  gateway = await startTestGateway();
  for (const model of [
    { id: 'chat-openai', pricing: { input_per_mtok: 1, output_per_mtok: 2 } },
    { id: 'omni-moderation-latest', kind: 'moderation', pricing: { per_request: MODERATION_PRICE } },
  ]) {
    expect((await gateway.admin('POST', '/admin/models', model)).status).toBe(201);
  }
  const channel = await gateway.admin('POST', '/admin/channels', { name: 'o', type: 'openai', base_url: upstream.url, api_key: 'sk-upstream-test', models: { 'chat-openai': 'gpt-4o-mini', 'omni-moderation-latest': 'omni-moderation-latest' } });
  expect(channel.status).toBe(201);
  await gateway.gateway.services.catalog.reload();
  account = await seedAccount(gateway, { balanceUsd: 20 });
  operator = await seedAccount(gateway, { balanceUsd: 20 });
  const policies = [
    { name: 'mod-account', kind: 'moderation', mode: 'block', applies_to: 'input', settings: { billed_to: 'account' } },
    { name: 'mod-operator', kind: 'moderation', mode: 'block', applies_to: 'input', settings: { billed_to: 'operator', operator_key_id: operator.keyId, categories: ['violence'], threshold: 0.5 } },
    { name: 'mod-high', kind: 'moderation', mode: 'block', applies_to: 'input', settings: { threshold: 0.95 } },
    { name: 'mod-other', kind: 'moderation', mode: 'block', applies_to: 'input', settings: { categories: ['hate', 'sexual'] } },
    { name: 'mod-log', kind: 'moderation', mode: 'log', applies_to: 'input' },
    { name: 'mod-out', kind: 'moderation', mode: 'block', applies_to: 'output' },
    { name: 'mod-open', kind: 'moderation', mode: 'block', applies_to: 'input', settings: { model: 'no-such-moderation', fail_open: true } },
    { name: 'mod-closed', kind: 'moderation', mode: 'block', applies_to: 'input', settings: { model: 'no-such-moderation' } },
  ];
  for (const policy of policies) {
    const created = await gateway.admin('POST', '/admin/guardrails', policy);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const key = await gateway.admin<{ id: string; key: string }>('POST', `/admin/accounts/${account.accountId}/keys`, { name: policy.name, guardrails: [policy.name] });
    expect(key.status).toBe(201);
    keys[policy.name] = { id: key.body.id, key: key.body.key };
  }
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

const ask = (policy: string, content: string) => new OpenAI({ baseURL: gateway.baseURL, apiKey: keys[policy]?.key ?? '', maxRetries: 0 }).chat.completions.create({ model: 'chat-openai', messages: [{ role: 'user', content }] }).withResponse();

const upstreamCalls = (path: string): number => upstream.requests.filter((request) => request.path === path).length;

async function usageRows(query: string): Promise<UsageRow[]> {
  await flushWrites(gateway);
  return (await gateway.admin<{ data: UsageRow[] }>('GET', `/admin/usage?${query}&limit=200`)).body.data;
}

describe('moderation policies in the admin API', () => {
  it('refuses a moderation policy that would mask, and one billed to the operator without the operator\'s key', async () => {
    const mask = await gateway.admin<{ error: { param?: string } }>('POST', '/admin/guardrails', { name: 'm', kind: 'moderation', mode: 'mask', applies_to: 'input' });
    expect(mask.status).toBe(400);
    expect(mask.body.error.param).toBe('mode');
    const noKey = await gateway.admin<{ error: { param?: string } }>('POST', '/admin/guardrails', { name: 'n', kind: 'moderation', mode: 'block', applies_to: 'input', settings: { billed_to: 'operator' } });
    expect(noKey.status).toBe(400);
    expect(noKey.body.error.param).toContain('operator_key_id');
  });
});

describe('an input moderation policy', () => {
  it('passes calm text and refuses flagged text before the chat upstream sees it, billed to the account', async () => {
    const calm = await ask('mod-account', 'A calm question about the sea');
    expect(calm.data.choices[0]?.message.content).toContain('calm question');
    expect(calm.response.headers.get('x-gateway-guardrails')).toBe('mod-account/input=passed;0');
    const lastModeration = upstream.requests.filter((request) => request.path === '/v1/moderations').at(-1);
    expect(lastModeration?.body).toEqual({ model: 'omni-moderation-latest', input: 'A calm question about the sea' });

    const chats = upstreamCalls('/v1/chat/completions');
    const error = await ask('mod-account', 'I will attack them at dawn').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const failure = error as InstanceType<typeof OpenAI.BadRequestError>;
    expect(failure.code).toBe('guardrail_blocked');
    expect(failure.message).toContain("'mod-account'");
    expect(failure.headers.get('x-gateway-guardrails')).toBe('mod-account/input=blocked;1');
    expect(upstreamCalls('/v1/chat/completions')).toBe(chats);

    // Each moderation call has a usage row and a charge of its own, on the request's key and account.
    const rows = await usageRows(`key_id=${keys['mod-account']?.id}`);
    const moderations = rows.filter((row) => row.endpoint === '/v1/moderations');
    expect(moderations.length).toBe(2);
    expect(moderations.every((row) => row.status === 200 && row.model === 'omni-moderation-latest' && row.cost_usd === MODERATION_PRICE)).toBe(true);
    const refused = rows.find((row) => row.endpoint === '/v1/chat/completions' && row.error_code === 'guardrail_blocked');
    expect(refused?.guardrails).toEqual([{ name: 'mod-account', direction: 'input', outcome: 'blocked', count: 1 }]);
    expect(JSON.stringify(rows)).not.toContain('attack');
  });

  it('billed to the operator: the moderation call is made and charged as the operator\'s key, not the account\'s', async () => {
    const error = await ask('mod-operator', 'They plan to attack the village').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const operatorRows = (await usageRows(`key_id=${operator.keyId}`)).filter((row) => row.endpoint === '/v1/moderations');
    expect(operatorRows.length).toBe(1);
    expect(operatorRows[0]).toMatchObject({ account_id: operator.accountId, cost_usd: MODERATION_PRICE });
    const accountRows = (await usageRows(`key_id=${keys['mod-operator']?.id}`)).filter((row) => row.endpoint === '/v1/moderations');
    expect(accountRows).toEqual([]);
  });

  it('counts a category by its score against the threshold, and only the categories the policy names', async () => {
    const high = await ask('mod-high', 'I will attack the problem head on');
    expect(high.response.headers.get('x-gateway-guardrails')).toBe('mod-high/input=passed;0');
    const other = await ask('mod-other', 'I will attack the problem head on');
    expect(other.response.headers.get('x-gateway-guardrails')).toBe('mod-other/input=passed;0');
    const logged = await ask('mod-log', 'I will attack the problem head on');
    expect(logged.data.choices[0]?.message.content).toContain('attack the problem');
    expect(logged.response.headers.get('x-gateway-guardrails')).toBe('mod-log/input=logged;1');
  });

  it('a moderation call that cannot be made passes the text when the policy fails open and refuses it when it fails closed', async () => {
    const open = await ask('mod-open', 'anything at all');
    expect(open.response.headers.get('x-gateway-guardrails')).toBe('mod-open/input=unavailable;1');
    const closed = await ask('mod-closed', 'anything at all').catch((caught: unknown) => caught);
    expect(closed).toBeInstanceOf(OpenAI.BadRequestError);
    expect((closed as InstanceType<typeof OpenAI.BadRequestError>).headers.get('x-gateway-guardrails')).toBe('mod-closed/input=blocked;1');
  });
});

describe('an output moderation policy', () => {
  it('stops a flagged answer, whole and streamed', async () => {
    const whole = await ask('mod-out', 'Repeat: we attack at noon').catch((caught: unknown) => caught);
    expect(whole).toBeInstanceOf(OpenAI.BadRequestError);
    expect((whole as Error).message).toContain("'mod-out'");
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: keys['mod-out']?.key ?? '', maxRetries: 0 });
    let text = '';
    for await (const chunk of await client.chat.completions.create({ model: 'chat-openai', stream: true, messages: [{ role: 'user', content: 'a peaceful streamed reply' }] })) {
      text += chunk.choices[0]?.delta.content ?? '';
    }
    expect(text).toContain('peaceful streamed reply');
    const moderation = upstream.requests.filter((request) => request.path === '/v1/moderations').at(-1);
    expect((moderation?.body as { input: string }).input).toBe(text);
    const stream = await client.chat.completions.create({ model: 'chat-openai', stream: true, messages: [{ role: 'user', content: 'a streamed reply to attack with' }] });
    const error = await (async () => {
      for await (const _chunk of stream) {
        // drain until the error event
      }
    })().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(String((error as Error).message)).toContain('mod-out');
  });
});
