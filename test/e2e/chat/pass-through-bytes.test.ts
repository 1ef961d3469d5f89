/**
 * A pass-through request whose body needs no rewrite reaches its upstream as the caller's own bytes (whitespace and
 * member order included), one whose model the upstream knows by another name as those bytes with only the model's
 * value replaced; one that needs any other rewrite (the gateway's own fields, a customer named in a header, a member
 * name written twice, reasoning state the gateway made) is written again. Either way the
 * usage row prices the answer's usage at the model's price and the ledger charges exactly that.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkLedger } from '../../../src/billing/ledger-check.js';
import { topLevelMemberCount } from '../../../src/wire/json-top-level.js';
import { addRoutedModel, flushWrites, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockAnthropicUpstream, signThinking, type MockAnthropicUpstream } from '../../support/mock-anthropic-upstream.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { loadAgentFixture } from '../agents/agent-fixtures.js';
import { admin } from '../admin/helpers.js';

/** The same name at the gateway and upstream: nothing to rewrite. */
const CLAUDE = 'claude-opus-4-8';
/** A public name the upstream knows by another: the body is written again. */
const RENAMED = 'team-claude';
const GPT = 'gpt-4o-mini';
const INPUT_PER_MTOK = 3;
const OUTPUT_PER_MTOK = 15;

let gateway: TestGateway;
let anthropic: MockAnthropicUpstream;
let openai: MockOpenAIUpstream;
let account: SeededAccount;

interface UsageRowJson {
  request_id: string;
  prompt_tokens: number;
  completion_tokens: number;
  cost_usd: number;
}

beforeAll(async () => {
  [anthropic, openai] = await Promise.all([startMockAnthropicUpstream(), startMockOpenAIUpstream()]);
  gateway = await startTestGateway();
  const pricing = { input_per_mtok: INPUT_PER_MTOK, output_per_mtok: OUTPUT_PER_MTOK };
  await addRoutedModel(gateway, { model: CLAUDE, pricing, channel: { name: 'bytes-anthropic', type: 'anthropic', base_url: anthropic.url, api_key: 'sk-ant-upstream-test', models: { [CLAUDE]: CLAUDE, [RENAMED]: CLAUDE } } });
  expect((await admin(gateway, 'POST', '/admin/models', { id: RENAMED, pricing })).status).toBe(201);
  await addRoutedModel(gateway, { model: GPT, pricing, channel: { name: 'bytes-openai', type: 'openai', base_url: openai.url, api_key: 'sk-upstream-test', models: { [GPT]: GPT } } });
  await gateway.gateway.services.catalog.reload();
  account = await seedAccount(gateway, { balanceUsd: 50 });
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([anthropic?.close(), openai?.close()]);
});

/** Claude Code's recorded tool loop (tens of KB, twenty tools), its thinking signed as the mock checks. */
function agentBody(model: string): Record<string, unknown> {
  const fixture = loadAgentFixture('claude-code-tool-loop');
  const messages = (fixture.body.messages as Array<{ role: string; content: unknown }>).map((message) => (!Array.isArray(message.content) ? message : {
    ...message,
    content: message.content.map((block: { type: string; thinking?: string }) => (block.type === 'thinking' ? { ...block, signature: signThinking(block.thinking ?? '') } : block)),
  }));
  return { ...fixture.body, model, messages, stream: false };
}

async function postMessages(text: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${gateway.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': account.key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json', ...headers }, body: text });
}

async function postChat(text: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${gateway.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json', ...headers }, body: text });
}

/** The usage row of a request and the ledger's charge for it: the row's cost is its usage at the model's price, and the ledger's charge. */
async function expectBilledExactly(response: Response): Promise<void> {
  const requestId = response.headers.get('x-request-id');
  expect(requestId).not.toBeNull();
  await flushWrites(gateway);
  const row = (await admin<{ data: UsageRowJson[] }>(gateway, 'GET', `/admin/usage?key_id=${account.keyId}&limit=200`)).body.data.find((item) => item.request_id === requestId);
  expect(row).toBeDefined();
  const { prompt_tokens: prompt, completion_tokens: completion } = row as UsageRowJson;
  expect(prompt).toBeGreaterThan(0);
  const expectedNano = (BigInt(prompt) * BigInt(INPUT_PER_MTOK * 1e9) + BigInt(completion) * BigInt(OUTPUT_PER_MTOK * 1e9)) / 1_000_000n;
  expect(BigInt(Math.round((row as UsageRowJson).cost_usd * 1e9))).toBe(expectedNano);
  const ledger = await admin<{ data: Array<{ kind: string; amount_usd: number; request_id: string | null }> }>(gateway, 'GET', `/admin/accounts/${account.accountId}/ledger?limit=200`);
  const charge = ledger.body.data.find((entry) => entry.kind === 'usage' && entry.request_id === requestId);
  expect(charge).toBeDefined();
  expect(BigInt(Math.round(-(charge?.amount_usd ?? 0) * 1e9))).toBe(expectedNano);
}

describe('pass-through forwards the caller’s own bytes when nothing in them needs a rewrite', () => {
  it('an agent-sized Anthropic request naming the upstream model reaches it byte for byte, and is billed as a rewritten one is', async () => {
    // Indented and with its members in the caller's order: a re-serialised body would differ.
    const text = JSON.stringify(agentBody(CLAUDE), null, 2);
    expect(text.length).toBeGreaterThan(20_000);
    const response = await postMessages(text);
    expect(response.status, await response.clone().text()).toBe(200);
    expect(anthropic.requests.at(-1)?.rawBody).toBe(text);
    await expectBilledExactly(response);

    // The same request under a public name the upstream knows as CLAUDE: the caller's bytes with only the model's
    // value replaced (a tool's schema names a `model` property too), same usage, same cost.
    const renamedText = JSON.stringify(agentBody(RENAMED), null, 2);
    const renamed = await postMessages(renamedText);
    expect(renamed.status).toBe(200);
    const sent = anthropic.requests.at(-1);
    expect(sent?.rawBody).toBe(renamedText.replace(`"model": "${RENAMED}"`, `"model": "${CLAUDE}"`));
    expect(sent?.body).toEqual(agentBody(CLAUDE));
    await expectBilledExactly(renamed);
  });

  it('a member name written twice (or maybe twice: spelt with escapes) is not forwarded as written: the upstream reads the model the gateway billed', async () => {
    const escaped = `{"mod\\u0065l":"claude-sonnet-4-5",${JSON.stringify(agentBody(CLAUDE)).slice(1)}`;
    const answer = await postMessages(escaped);
    expect(answer.status).toBe(200);
    expect(anthropic.requests.at(-1)?.rawBody).not.toBe(escaped);
    expect(anthropic.requests.at(-1)?.body).toMatchObject({ model: CLAUDE });
    await expectBilledExactly(answer);
    const body = agentBody(CLAUDE);
    const text = `{"model":"claude-sonnet-4-5",${JSON.stringify(body).slice(1)}`;
    const response = await postMessages(text);
    expect(response.status).toBe(200);
    const sent = anthropic.requests.at(-1)?.rawBody ?? '';
    expect(sent).not.toBe(text);
    expect(topLevelMemberCount(Buffer.from(sent))).toBe(Object.keys(JSON.parse(sent) as object).length);
    expect(JSON.parse(sent)).toMatchObject({ model: CLAUDE });
    await expectBilledExactly(response);
  });

  it('a customer named in a header is written into the body; without the header the bytes go as they came', async () => {
    // Claude Code names its own user in `metadata`, which the header does not replace: this body names none.
    const { metadata: _own, ...body } = agentBody(CLAUDE);
    const text = JSON.stringify(body);
    const named = await postMessages(text, { 'x-gateway-customer': 'cust-42' });
    expect(named.status).toBe(200);
    expect(anthropic.requests.at(-1)?.body).toMatchObject({ metadata: { user_id: 'cust-42' } });
    await expectBilledExactly(named);
    const plain = await postMessages(text);
    expect(plain.status).toBe(200);
    expect(anthropic.requests.at(-1)?.rawBody).toBe(text);
  });

  it('OpenAI chat: the gateway’s own `provider` field is taken out (the body written again), else the bytes go as they came', async () => {
    const text = `{ "messages": [{"role":"user","content":"hi é"}],\n "model": "${GPT}" }`;
    const plain = await postChat(text);
    expect(plain.status, await plain.clone().text()).toBe(200);
    expect(openai.requests.at(-1)?.rawBody).toBe(text);
    await expectBilledExactly(plain);

    const withProvider = await postChat(JSON.stringify({ model: GPT, messages: [{ role: 'user', content: 'hi' }], provider: { allow_fallbacks: true } }));
    expect(withProvider.status, await withProvider.clone().text()).toBe(200);
    const sent = openai.requests.at(-1);
    expect(sent?.body).toEqual({ model: GPT, messages: [{ role: 'user', content: 'hi' }] });
    await expectBilledExactly(withProvider);
  });

  it('OpenAI chat stream: a body that does not ask for the usage chunk gets it asked for; one that does goes as it came', async () => {
    const asks = JSON.stringify({ model: GPT, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] });
    expect((await (await postChat(asks)).text()).length).toBeGreaterThan(0);
    expect(openai.requests.at(-1)?.rawBody).toBe(asks);
    const silent = JSON.stringify({ model: GPT, stream: true, messages: [{ role: 'user', content: 'hi' }] });
    expect((await (await postChat(silent)).text()).length).toBeGreaterThan(0);
    expect(openai.requests.at(-1)?.body).toMatchObject({ stream_options: { include_usage: true } });
  });

  it('the ledger balances after all of it', async () => {
    await flushWrites(gateway);
    expect((await checkLedger(gateway.gateway.services.storage, account.accountId)).problems).toEqual([]);
  });
});
