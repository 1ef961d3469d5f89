/**
 * Streamed Anthropic and Gemini answers carry the request's cost where the vendor puts the final usage: the
 * `message_delta` event's `usage.cost` and the last chunk's `usageMetadata.cost`, on the pass-through path (same
 * family upstream) and the translated one alike, read with the official SDKs. It is exactly what the ledger charged.
 */
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, flushWrites, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from '../../support/mock-anthropic-upstream.js';
import { startMockGeminiUpstream, type MockGeminiUpstream } from '../../support/mock-gemini-upstream.js';
import { admin } from '../admin/helpers.js';

const CLAUDE = 'stream-cost-claude';
const GEMINI = 'stream-cost-gemini';
const PRICING = { input_per_mtok: 3, output_per_mtok: 15 };
let gateway: TestGateway;
let anthropicUpstream: MockAnthropicUpstream;
let geminiUpstream: MockGeminiUpstream;
let account: SeededAccount;

beforeAll(async () => {
  gateway = await startTestGateway();
  anthropicUpstream = await startMockAnthropicUpstream();
  geminiUpstream = await startMockGeminiUpstream();
  await addRoutedModel(gateway, {
    model: CLAUDE,
    pricing: PRICING,
    channel: { name: 'stream-cost-anthropic', type: 'anthropic', base_url: anthropicUpstream.url, api_key: 'sk-ant-upstream-test', models: { [CLAUDE]: 'claude-sonnet-4-5' } },
  });
  await addRoutedModel(gateway, {
    model: GEMINI,
    pricing: PRICING,
    channel: { name: 'stream-cost-gemini', type: 'gemini', base_url: geminiUpstream.url, api_key: 'gemini-upstream-test', models: { [GEMINI]: 'gemini-2.5-flash' } },
  });
  account = await seedAccount(gateway, { balanceUsd: 5 });
});

afterAll(async () => {
  await gateway?.close();
  await anthropicUpstream?.close();
  await geminiUpstream?.close();
});

/** What the ledger charged for one request, in nano-USD. */
async function charged(requestId: string | null | undefined): Promise<bigint> {
  await flushWrites(gateway);
  const ledger = await admin<{ data: Array<{ kind: string; amount_usd: number; request_id: string | null }> }>(gateway, 'GET', `/admin/accounts/${account.accountId}/ledger?limit=200`);
  const entry = ledger.body.data.find((item) => item.kind === 'usage' && item.request_id === requestId);
  if (entry === undefined) throw new Error(`no usage entry for ${String(requestId)}`);
  return BigInt(Math.round(-entry.amount_usd * 1e9));
}

const nano = (usd: number | undefined): bigint => {
  expect(typeof usd).toBe('number');
  return BigInt(Math.round((usd ?? 0) * 1e9));
};

describe('cost in streamed answers', () => {
  it.each([[CLAUDE, 'passed through from an Anthropic upstream'], [GEMINI, 'translated from a Gemini upstream']])('Anthropic SDK stream (%s, %s): message_delta usage.cost is the ledger charge', async (model) => {
    const anthropic = new Anthropic({ apiKey: account.key, baseURL: gateway.url, maxRetries: 0 });
    const stream = anthropic.messages.stream({ model, max_tokens: 64, messages: [{ role: 'user', content: 'stream the cost' }] });
    const { response } = await stream.withResponse();
    const costs: Array<{ type: string; cost: number | undefined }> = [];
    for await (const event of stream) {
      if (event.type === 'message_start') costs.push({ type: event.type, cost: (event.message.usage as { cost?: number }).cost });
      if (event.type === 'message_delta') costs.push({ type: event.type, cost: (event.usage as { cost?: number }).cost });
    }
    const message = await stream.finalMessage();
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    expect(message.content.some((block) => block.type === 'text' && block.text !== '')).toBe(true);
    // message_start comes before the output is known: no cost there, only in the final usage.
    expect(costs.map(({ type }) => type)).toEqual(['message_start', 'message_delta']);
    expect(costs[0]?.cost).toBeUndefined();
    const cost = nano(costs[1]?.cost);
    expect(cost).toBeGreaterThan(0n);
    expect(await charged(response.headers.get('x-request-id'))).toBe(cost);
  });

  it.each([[GEMINI, 'passed through from a Gemini upstream'], [CLAUDE, 'translated from an Anthropic upstream']])('Gemini SDK generateContentStream (%s, %s): the last chunk\'s usageMetadata.cost is the ledger charge', async (model) => {
    const genai = new GoogleGenAI({ apiKey: account.key, httpOptions: { baseUrl: gateway.url } });
    const chunks = [];
    let text = '';
    for await (const chunk of await genai.models.generateContentStream({ model, contents: 'stream the cost' })) {
      chunks.push(chunk);
      text += chunk.text ?? '';
    }
    expect(text).not.toBe('');
    const last = chunks.at(-1);
    expect(last?.candidates?.[0]?.finishReason).toBe('STOP');
    expect(last?.usageMetadata?.candidatesTokenCount).toBeGreaterThan(0);
    // Only the closing chunk knows the final totals, so only it carries the cost.
    expect(chunks.slice(0, -1).every((chunk) => (chunk.usageMetadata as { cost?: number } | undefined)?.cost === undefined)).toBe(true);
    const cost = nano((last?.usageMetadata as { cost?: number } | undefined)?.cost);
    expect(cost).toBeGreaterThan(0n);
    expect(await charged(last?.sdkHttpResponse?.headers?.['x-request-id'])).toBe(cost);
  });
});
