/**
 * `models/{m}:batchEmbedContents` as @google/genai's `embedContent` sends it for several contents: routed to any
 * embedding model (an OpenAI one, translated; a Gemini one, native), one vector per content in order, and charged as
 * embeddings are, input tokens at the model's price, in one usage row.
 */
import { GoogleGenAI } from '@google/genai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, flushWrites, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockGeminiUpstream, type MockGeminiUpstream } from '../../support/mock-gemini-upstream.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';

/** USD per million input tokens: 1000 nano-dollars a token. */
const PRICE = { input_per_mtok: 1 };

let gateway: TestGateway;
let openai: MockOpenAIUpstream;
let gemini: MockGeminiUpstream;
let account: SeededAccount;

interface UsageRow { endpoint: string; model: string | null; status: number; prompt_tokens: number; cost_usd: number }

beforeAll(async () => {
  [openai, gemini] = await Promise.all([startMockOpenAIUpstream(), startMockGeminiUpstream()]);
  gateway = await startTestGateway();
  await addRoutedModel(gateway, { model: 'be-openai', kind: 'embedding', pricing: PRICE, channel: { name: 'be-o', type: 'openai', base_url: openai.url, api_key: 'sk-upstream-test', models: { 'be-openai': 'text-embedding-3-small' } } });
  await addRoutedModel(gateway, { model: 'be-google', kind: 'embedding', pricing: PRICE, channel: { name: 'be-g', type: 'gemini', base_url: gemini.url, api_key: 'gemini-upstream-test', models: { 'be-google': 'gemini-embedding-001' } } });
  account = await seedAccount(gateway);
}, 60_000);

afterAll(async () => {
  await gateway?.close();
  await Promise.all([openai?.close(), gemini?.close()]);
});

describe('batchEmbedContents', () => {
  it('embeds several contents on an OpenAI and a Gemini model, each charged as embeddings', async () => {
    const ai = new GoogleGenAI({ apiKey: account.key, httpOptions: { baseUrl: gateway.url } });
    const contents = ['first text to embed', 'second text', 'a third, longer text to embed here'];
    // Model names with "gemini" in them are multimodal embedding models to the SDK, which joins the contents into one.
    for (const model of ['be-openai', 'be-google']) {
      const result = await ai.models.embedContent({ model, contents });
      expect(result.embeddings, model).toHaveLength(3);
      expect(result.embeddings?.every((embedding) => (embedding.values?.length ?? 0) > 0), model).toBe(true);
    }
    expect(openai.requests.at(-1)?.path).toBe('/v1/embeddings');
    expect(gemini.requests.at(-1)?.path).toMatch(/:batchEmbedContents$/);

    await flushWrites(gateway);
    const usage = await gateway.admin<{ data: UsageRow[] }>('GET', `/admin/usage?key_id=${account.keyId}&limit=10`);
    const rows = usage.body.data.filter((row) => row.endpoint.includes('batchEmbedContents'));
    expect(rows.map((row) => row.model).sort()).toEqual(['be-google', 'be-openai']);
    for (const row of rows) {
      expect(row.status).toBe(200);
      expect(row.prompt_tokens).toBeGreaterThan(0);
      expect(Math.round(row.cost_usd * 1e9), row.model ?? '').toBe(row.prompt_tokens * 1000);
    }
  });
});
