/**
 * The cost of each request goes back to the caller: `x-request-cost-usd` on every non-streamed billed answer, and
 * `cost` inside the usage of OpenAI, Anthropic and Gemini bodies (the official SDKs keep or ignore it). It is exactly what the ledger charged.
 */
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, flushWrites, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from '../../support/mock-anthropic-upstream.js';
import { addSimulatorModel, admin } from '../admin/helpers.js';

const MODEL = 'cost-model';
const EMBEDDING = 'cost-embedding';
const CLAUDE = 'cost-claude';
let gateway: TestGateway;
let anthropicUpstream: MockAnthropicUpstream;
let account: SeededAccount;

beforeAll(async () => {
  gateway = await startTestGateway();
  await addSimulatorModel(gateway, MODEL, { input_per_mtok: 3, output_per_mtok: 15 }, { settings: { output_tokens: 12 } });
  const embedding = await admin(gateway, 'POST', '/admin/models', { id: EMBEDDING, kind: 'embedding', pricing: { input_per_mtok: 0.13 } });
  expect(embedding.status, embedding.text).toBe(201);
  expect((await admin(gateway, 'POST', '/admin/channels', { name: 'sim-cost-embedding', type: 'simulator', models: [EMBEDDING] })).status).toBe(201);
  anthropicUpstream = await startMockAnthropicUpstream();
  await addRoutedModel(gateway, {
    model: CLAUDE,
    pricing: { input_per_mtok: 3, output_per_mtok: 15 },
    channel: { name: 'cost-anthropic', type: 'anthropic', base_url: anthropicUpstream.url, api_key: 'sk-ant-upstream-test', models: { [CLAUDE]: 'claude-sonnet-4-5' } },
  });
  account = await seedAccount(gateway, { balanceUsd: 5 });
});

afterAll(async () => {
  await gateway?.close();
  await anthropicUpstream?.close();
});

/** What the ledger charged for one request, in nano-USD. */
async function charged(requestId: string | null): Promise<bigint> {
  await flushWrites(gateway);
  const ledger = await admin<{ data: Array<{ kind: string; amount_usd: number; request_id: string | null }> }>(gateway, 'GET', `/admin/accounts/${account.accountId}/ledger?limit=200`);
  const entry = ledger.body.data.find((item) => item.kind === 'usage' && item.request_id === requestId);
  if (entry === undefined) throw new Error(`no usage entry for ${String(requestId)}`);
  return BigInt(Math.round(-entry.amount_usd * 1e9));
}

const nano = (decimal: string | null): bigint => {
  if (decimal === null) throw new Error('no cost header');
  expect(decimal).toMatch(/^\d+(\.\d{1,9})?$/);
  return BigInt(Math.round(Number(decimal) * 1e9));
};

describe('cost to the caller', () => {
  it('OpenAI SDK: the header and usage.cost equal the ledger charge', async () => {
    const client = new OpenAI({ apiKey: account.key, baseURL: gateway.baseURL, maxRetries: 0 });
    const { data, response } = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'what does it cost' }], max_tokens: 50 }).withResponse();
    const header = response.headers.get('x-request-cost-usd');
    const usage = data.usage as (typeof data.usage & { cost?: number }) | undefined;
    expect(usage?.completion_tokens).toBe(12);
    expect(typeof usage?.cost).toBe('number');
    expect(BigInt(Math.round((usage?.cost ?? 0) * 1e9))).toBe(nano(header));
    expect(await charged(response.headers.get('x-request-id'))).toBe(nano(header));
  });

  it.each([[MODEL, 'pass-through'], [CLAUDE, 'translated from an Anthropic upstream']])('OpenAI SDK stream (%s, %s): the final usage chunk carries usage.cost, the ledger charge', async (model) => {
    const client = new OpenAI({ apiKey: account.key, baseURL: gateway.baseURL, maxRetries: 0 });
    const { data: stream, response } = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'stream it' }], stream: true, stream_options: { include_usage: true } }).withResponse();
    let cost: number | undefined;
    let tokens = 0;
    for await (const chunk of stream) {
      if (chunk.usage) {
        tokens = chunk.usage.completion_tokens;
        cost = (chunk.usage as typeof chunk.usage & { cost?: number }).cost;
      }
    }
    expect(tokens).toBeGreaterThan(0);
    expect(typeof cost).toBe('number');
    expect(await charged(response.headers.get('x-request-id'))).toBe(BigInt(Math.round((cost ?? 0) * 1e9)));
  });

  it.each([[MODEL, 'translated from the simulator'], [CLAUDE, 'passed through from an Anthropic upstream']])('Anthropic SDK (%s, %s): the header and usage.cost equal the ledger charge', async (model) => {
    const anthropic = new Anthropic({ apiKey: account.key, baseURL: gateway.url, maxRetries: 0 });
    const { data, response } = await anthropic.messages.create({ model, max_tokens: 40, messages: [{ role: 'user', content: 'and here?' }] }).withResponse();
    expect(data.usage.output_tokens).toBeGreaterThan(0);
    const header = nano(response.headers.get('x-request-cost-usd'));
    expect(BigInt(Math.round(((data.usage as typeof data.usage & { cost?: number }).cost ?? -1) * 1e9))).toBe(header);
    expect(await charged(response.headers.get('x-request-id'))).toBe(header);
  });

  it('Gemini SDK: the header and usageMetadata.cost equal the ledger charge, and the SDK reads the answer as usual', async () => {

    let seen: Response | null = null;
    const genai = new GoogleGenAI({ apiKey: account.key, httpOptions: { baseUrl: gateway.url } });
    const originalFetch = globalThis.fetch;
    globalThis.fetch = async (...args: Parameters<typeof fetch>) => {
      const answer = await originalFetch(...args);
      seen = answer.clone();
      return answer;
    };
    try {
      const answer = await genai.models.generateContent({ model: MODEL, contents: 'and with gemini?' });
      expect(answer.usageMetadata?.candidatesTokenCount).toBe(12);
    } finally {
      globalThis.fetch = originalFetch;
    }
    const geminiResponse = seen as Response | null;
    expect(geminiResponse).not.toBeNull();
    const header = nano(geminiResponse?.headers.get('x-request-cost-usd') ?? null);
    const raw = (await geminiResponse?.json()) as { usageMetadata?: { cost?: number } };
    expect(BigInt(Math.round((raw.usageMetadata?.cost ?? -1) * 1e9))).toBe(header);
    expect(await charged(geminiResponse?.headers.get('x-request-id') ?? null)).toBe(header);
  });

  it('embeddings: the header and usage.cost', async () => {
    const client = new OpenAI({ apiKey: account.key, baseURL: gateway.baseURL, maxRetries: 0 });
    const { data, response } = await client.embeddings.create({ model: EMBEDDING, input: ['a fairly long sentence to embed so the cost is not zero at all'] }).withResponse();
    const header = response.headers.get('x-request-cost-usd');
    expect(nano(header)).toBeGreaterThan(0n);
    expect((data.usage as typeof data.usage & { cost?: number }).cost).toBe(Number(header));
    expect(await charged(response.headers.get('x-request-id'))).toBe(nano(header));
  });
});
