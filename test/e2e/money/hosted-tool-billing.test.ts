/**
 * Hosted tools the upstream bills per call are billed on: a request that searched the web three times is charged
 * its tokens plus three searches (Gemini 2.x: one grounded prompt), to the nano-dollar, in every family, streamed and
 * not, passed through and translated, through the official SDKs against mock upstreams that report searches as the
 * real APIs do. The usage row keeps the count and cost, the answer carries the cost, and money is held for the
 * searches a request may make before it is forwarded.
 */
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, flushWrites, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from '../../support/mock-anthropic-upstream.js';
import { startMockGeminiUpstream, type MockGeminiUpstream } from '../../support/mock-gemini-upstream.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';

let openai: MockOpenAIUpstream;
let anthropic: MockAnthropicUpstream;
let gemini: MockGeminiUpstream;
let gateway: TestGateway;

const SEARCH_THREE_TIMES = 'Search the web 3 times for the unigate release notes';

/** Token prices (nano-USD per million) and hosted tool prices (nano-USD each) of the bundled catalog. */
interface Prices {
  input: bigint;
  output: bigint;
  perWebSearch?: bigint;
  perGroundedPrompt?: bigint;
  perWebFetch?: bigint;
  perFileSearch?: bigint;
}

const GPT_5_1: Prices = { input: 1_250_000_000n, output: 10_000_000_000n, perWebSearch: 10_000_000n, perFileSearch: 2_500_000n };
const CLAUDE_SONNET_4_5: Prices = { input: 3_000_000_000n, output: 15_000_000_000n, perWebSearch: 10_000_000n };
const GEMINI_3_PRO: Prices = { input: 2_000_000_000n, output: 12_000_000_000n, perWebSearch: 14_000_000n };
const GEMINI_2_5_FLASH: Prices = { input: 300_000_000n, output: 2_500_000_000n, perGroundedPrompt: 35_000_000n };
const GPT_4O_SEARCH: Prices = { input: 2_500_000_000n, output: 10_000_000_000n, perWebSearch: 25_000_000n };

interface UsageRow {
  request_id: string;
  model: string;
  status: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  cost_usd: number;
  web_searches: number;
  web_fetches: number;
  file_searches: number;
  hosted_tool_cost_usd: number;
}

interface Billed {
  row: UsageRow;
  /** What the ledger charged, in nano-USD. */
  charged: bigint;
}

const nano = (usd: number): bigint => BigInt(Math.round(usd * 1e9));

/** The account's one answered request: its usage row and its ledger charge. */
async function billed(account: SeededAccount): Promise<Billed> {
  await flushWrites(gateway);
  const usage = await gateway.admin<{ data: UsageRow[] }>('GET', `/admin/usage?key_id=${account.keyId}&limit=5`);
  const answered = usage.body.data.filter((candidate) => candidate.status === 200);
  expect(answered).toHaveLength(1);
  const row = answered[0] as UsageRow;
  const ledger = await gateway.admin<{ data: Array<{ kind: string; amount_usd: number; request_id: string | null }> }>('GET', `/admin/accounts/${account.accountId}/ledger?limit=20`);
  const entries = ledger.body.data.filter((entry) => entry.kind === 'usage' && entry.request_id === row.request_id);
  expect(entries).toHaveLength(1);
  return { row, charged: -nano(entries[0]!.amount_usd) };
}

/** The exact cost: tokens at their prices (one rounding up of the per-million sum), then each hosted tool call. */
function expectedCost(row: UsageRow, prices: Prices): { tokens: bigint; tools: bigint } {
  expect(row.cached_tokens).toBe(0);
  const perMillion = BigInt(row.prompt_tokens) * prices.input + BigInt(row.completion_tokens) * prices.output;
  const tokens = (perMillion + 999_999n) / 1_000_000n;
  const tools = BigInt(row.web_searches) * (prices.perWebSearch ?? 0n) + (row.web_searches > 0 ? (prices.perGroundedPrompt ?? 0n) : 0n)
    + BigInt(row.web_fetches) * (prices.perWebFetch ?? 0n) + BigInt(row.file_searches) * (prices.perFileSearch ?? 0n);
  return { tokens, tools };
}

/** The usage cost an answer carried (`usage.cost`, Gemini's `usageMetadata.cost`), in nano-USD. */
function carried(usage: unknown): bigint {
  const cost = (usage as { cost?: unknown } | null | undefined)?.cost;
  expect(typeof cost).toBe('number');
  return nano(cost as number);
}

type Client = (key: string, model: string, stream: boolean, prompt: string) => Promise<{ answerCost: bigint; text: string }>;

const responsesClient: Client = async (key, model, stream, prompt) => {
  const client = new OpenAI({ apiKey: key, baseURL: gateway.baseURL, maxRetries: 0 });
  const tools: OpenAI.Responses.Tool[] = /in my files/.test(prompt) ? [{ type: 'file_search', vector_store_ids: ['vs_unigate'] }] : [{ type: 'web_search' }];
  if (!stream) {
    const response = await client.responses.create({ model, input: prompt, tools });
    return { answerCost: carried(response.usage), text: response.output_text };
  }
  let completed: OpenAI.Responses.Response | null = null;
  for await (const event of await client.responses.create({ model, input: prompt, tools, stream: true })) {
    if (event.type === 'response.completed') completed = event.response;
  }
  expect(completed).not.toBeNull();
  const text = (completed?.output ?? []).flatMap((item) => (item.type === 'message' ? item.content.map((part) => (part.type === 'output_text' ? part.text : '')) : [])).join('');
  return { answerCost: carried(completed?.usage), text };
};

const anthropicClient = (tools: Anthropic.ToolUnion[]): Client => async (key, model, stream, prompt) => {
  const client = new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0 });
  const request = { model, max_tokens: 1000, tools, messages: [{ role: 'user' as const, content: prompt }] };
  if (!stream) {
    const message = await client.messages.create(request);
    return { answerCost: carried(message.usage), text: message.content.map((block) => (block.type === 'text' ? block.text : '')).join('') };
  }
  let cost: bigint | null = null;
  let text = '';
  for await (const event of await client.messages.create({ ...request, stream: true })) {
    if (event.type === 'message_delta') cost = carried(event.usage);
    if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
  }
  expect(cost).not.toBeNull();
  return { answerCost: cost ?? -1n, text };
};

const geminiClient: Client = async (key, model, stream, prompt) => {
  const client = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gateway.url } });
  const request = { model, contents: prompt, config: { tools: [{ googleSearch: {} }] } };
  if (!stream) {
    const response = await client.models.generateContent(request);
    return { answerCost: carried(response.usageMetadata), text: response.text ?? '' };
  }
  let usage: unknown = null;
  let text = '';
  for await (const chunk of await client.models.generateContentStream(request)) {
    if (chunk.usageMetadata !== undefined) usage = chunk.usageMetadata;
    text += chunk.text ?? '';
  }
  return { answerCost: carried(usage), text };
};

const chatClient: Client = async (key, model, stream, prompt) => {
  const client = new OpenAI({ apiKey: key, baseURL: gateway.baseURL, maxRetries: 0 });
  const request = { model, web_search_options: {}, messages: [{ role: 'user' as const, content: prompt }] };
  if (!stream) {
    const completion = await client.chat.completions.create(request);
    return { answerCost: carried(completion.usage), text: completion.choices[0]?.message.content ?? '' };
  }
  let usage: unknown = null;
  let text = '';
  for await (const chunk of await client.chat.completions.create({ ...request, stream: true, stream_options: { include_usage: true } })) {
    if (chunk.usage) usage = chunk.usage;
    text += chunk.choices[0]?.delta.content ?? '';
  }
  return { answerCost: carried(usage), text };
};

const WEB_SEARCH_TOOL: Anthropic.ToolUnion[] = [{ type: 'web_search_20250305', name: 'web_search' }];

beforeAll(async () => {
  [openai, anthropic, gemini] = await Promise.all([startMockOpenAIUpstream(), startMockAnthropicUpstream(), startMockGeminiUpstream()]);
  gateway = await startTestGateway({
    env: {
      OPENAI_API_KEY: 'sk-upstream-test', OPENAI_BASE_URL: openai.url,
      ANTHROPIC_API_KEY: 'sk-ant-upstream-test', ANTHROPIC_BASE_URL: anthropic.url,
      GEMINI_API_KEY: 'gemini-upstream-test', GEMINI_BASE_URL: gemini.url,
    },
  });
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([openai?.close(), anthropic?.close(), gemini?.close()]);
});

interface Case {
  name: string;
  client: Client;
  model: string;
  prices: Prices;
  prompt: string;
  calls: { webSearches: number; webFetches?: number; fileSearches?: number };
}

const CASES: Case[] = [
  // The caller's own wire: the upstream's bytes go back as they came, searches read on the side.
  { name: 'OpenAI Responses, passed through (an open_page action is no search)', client: responsesClient, model: 'gpt-5.1', prices: GPT_5_1, prompt: `${SEARCH_THREE_TIMES} and open the page`, calls: { webSearches: 3 } },
  { name: 'Anthropic Messages, passed through', client: anthropicClient(WEB_SEARCH_TOOL), model: 'claude-sonnet-4-5', prices: CLAUDE_SONNET_4_5, prompt: SEARCH_THREE_TIMES, calls: { webSearches: 3 } },
  { name: 'Gemini 3, passed through (distinct non-empty queries)', client: geminiClient, model: 'gemini-3-pro-preview', prices: GEMINI_3_PRO, prompt: SEARCH_THREE_TIMES, calls: { webSearches: 3 } },
  { name: 'Gemini 2.5, passed through (one grounded prompt)', client: geminiClient, model: 'gemini-2.5-flash', prices: GEMINI_2_5_FLASH, prompt: SEARCH_THREE_TIMES, calls: { webSearches: 3 } },
  { name: 'OpenAI chat search model, passed through (one search an answer)', client: chatClient, model: 'gpt-4o-search-preview', prices: GPT_4O_SEARCH, prompt: 'What are the unigate release notes?', calls: { webSearches: 1 } },
  // Another family's upstream: the search runs on the upstream's own tool, its count read from its answer.
  { name: 'OpenAI Responses, translated to Anthropic', client: responsesClient, model: 'claude-sonnet-4-5', prices: CLAUDE_SONNET_4_5, prompt: SEARCH_THREE_TIMES, calls: { webSearches: 3 } },
  { name: 'Anthropic Messages, translated to Gemini 3', client: anthropicClient(WEB_SEARCH_TOOL), model: 'gemini-3-pro-preview', prices: GEMINI_3_PRO, prompt: SEARCH_THREE_TIMES, calls: { webSearches: 3 } },
  { name: 'Gemini, translated to Anthropic', client: geminiClient, model: 'claude-sonnet-4-5', prices: CLAUDE_SONNET_4_5, prompt: SEARCH_THREE_TIMES, calls: { webSearches: 3 } },
  { name: 'OpenAI chat web_search_options, translated to Anthropic', client: chatClient, model: 'claude-sonnet-4-5', prices: CLAUDE_SONNET_4_5, prompt: SEARCH_THREE_TIMES, calls: { webSearches: 3 } },
  // Other tools billed per call: OpenAI's file search, Anthropic's web fetch (free at Anthropic: billed at its price, $0).
  { name: 'OpenAI Responses file search, passed through', client: responsesClient, model: 'gpt-5.1', prices: GPT_5_1, prompt: 'Find the release notes in my files', calls: { webSearches: 0, fileSearches: 1 } },
  {
    name: 'Anthropic web fetch, passed through', client: anthropicClient([{ type: 'web_fetch_20250910', name: 'web_fetch' }]), model: 'claude-sonnet-4-5', prices: CLAUDE_SONNET_4_5,
    prompt: 'Please fetch https://example.com/unigate-release', calls: { webSearches: 0, webFetches: 1 },
  },
];

describe('hosted tool calls are charged to the nano-dollar', () => {
  for (const stream of [false, true]) {
    it.each(CASES)(`$name (stream ${String(stream)})`, async ({ client, model, prices, prompt, calls }) => {
      const account = await seedAccount(gateway, { balanceUsd: 5 });
      const answer = await client(account.key, model, stream, prompt);
      expect(answer.text.length).toBeGreaterThan(0);
      const { row, charged } = await billed(account);
      expect(row).toMatchObject({ model, status: 200, web_searches: calls.webSearches, web_fetches: calls.webFetches ?? 0, file_searches: calls.fileSearches ?? 0 });
      const expected = expectedCost(row, prices);
      expect(nano(row.hosted_tool_cost_usd)).toBe(expected.tools);
      expect(charged).toBe(expected.tokens + expected.tools);
      expect(nano(row.cost_usd)).toBe(charged);
      expect(answer.answerCost).toBe(charged);
    });
  }
});

describe('the exact figures of a three-search request', () => {
  it('Anthropic: three searches on claude-sonnet-4-5 are $0.03 on top of the tokens; Gemini 3 $0.042; Gemini 2.5 one $0.035 prompt', async () => {
    const figures: Array<[Client, string, bigint]> = [[anthropicClient(WEB_SEARCH_TOOL), 'claude-sonnet-4-5', 30_000_000n], [geminiClient, 'gemini-3-pro-preview', 42_000_000n], [geminiClient, 'gemini-2.5-flash', 35_000_000n]];
    for (const [client, model, tools] of figures) {
      const account = await seedAccount(gateway, { balanceUsd: 5 });
      await client(account.key, model, false, SEARCH_THREE_TIMES);
      const { row } = await billed(account);
      expect(nano(row.hosted_tool_cost_usd), model).toBe(tools);
    }
  });
});

describe('money is held for the searches a request may make', () => {
  it('refuses a request whose possible searches the balance cannot cover, and admits it once max_uses bounds them', async () => {
    // claude-sonnet-4-5: up to 1,000 output tokens hold $0.015; an uncapped web search holds ten searches ($0.10).
    const account = await seedAccount(gateway, { balanceUsd: 0.06 });
    const client = new Anthropic({ apiKey: account.key, baseURL: gateway.url, maxRetries: 0 });
    const ask = (tools: Anthropic.ToolUnion[]) => client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 1000, tools, messages: [{ role: 'user', content: SEARCH_THREE_TIMES }] });
    await expect(ask(WEB_SEARCH_TOOL)).rejects.toMatchObject({ status: 402 });
    const anthropicCalls = anthropic.requests.length;
    const message = await ask([{ type: 'web_search_20250305', name: 'web_search', max_uses: 3 }]);
    expect(anthropic.requests.length).toBe(anthropicCalls + 1);
    expect(message.usage.server_tool_use?.web_search_requests).toBe(3);
    const { row, charged } = await billed(account);
    expect(row.web_searches).toBe(3);
    expect(charged).toBe(expectedCost(row, CLAUDE_SONNET_4_5).tokens + 30_000_000n);
  });

  it("an operator's price wins, and a record that leaves a search price unset keeps the bundled one", async () => {
    await addRoutedModel(gateway, {
      model: 'priced-search', pricing: { input_per_mtok: 1, output_per_mtok: 2, per_web_search: 0.05 },
      channel: { name: 'priced-search', type: 'anthropic', base_url: anthropic.url, api_key: 'sk-ant-upstream-test', models: { 'priced-search': 'claude-sonnet-4-5' } },
    });
    const created = await gateway.admin('POST', '/admin/models', { id: 'gemini-2.5-flash', pricing: { input_per_mtok: 0.3, output_per_mtok: 2.5 } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await gateway.gateway.services.catalog.reload();
    try {
      const operator = await seedAccount(gateway, { balanceUsd: 5 });
      await anthropicClient(WEB_SEARCH_TOOL)(operator.key, 'priced-search', false, SEARCH_THREE_TIMES);
      const priced = await billed(operator);
      expect(priced.charged).toBe(expectedCost(priced.row, { input: 1_000_000_000n, output: 2_000_000_000n, perWebSearch: 50_000_000n }).tokens + 150_000_000n);
      const kept = await seedAccount(gateway, { balanceUsd: 5 });
      await geminiClient(kept.key, 'gemini-2.5-flash', false, SEARCH_THREE_TIMES);
      expect(nano((await billed(kept)).row.hosted_tool_cost_usd)).toBe(35_000_000n);
    } finally {
      await gateway.admin('DELETE', '/admin/models/gemini-2.5-flash');
      await gateway.gateway.services.catalog.reload();
    }
  });
});
