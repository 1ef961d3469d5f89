/**
 * The default catalog with nothing but the three provider keys set (fake values, mock upstreams): GET /v1/models
 * lists hundreds of models of every kind with prices; Claude Code's default ids, dated and alias forms, resolve to
 * one model and reach the upstream as asked; the usage row keeps the id asked; an operator's price wins.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushWrites, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from '../../support/mock-anthropic-upstream.js';
import { startMockGeminiUpstream, type MockGeminiUpstream } from '../../support/mock-gemini-upstream.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';

interface ListedModel {
  id: string;
  object: string;
  owned_by: string;
  alias_of?: string;
  kind: string;
  context_window: number | null;
  max_output_tokens: number | null;
  capabilities: { tools: boolean; vision: boolean; json_schema: boolean; reasoning: boolean } | null;
  pricing: Record<string, number | null | unknown[]>;
  price_source: string;
}

let openai: MockOpenAIUpstream;
let anthropic: MockAnthropicUpstream;
let gemini: MockGeminiUpstream;
let gateway: TestGateway;
let account: SeededAccount;

async function listModels(): Promise<ListedModel[]> {
  const response = await fetch(`${gateway.baseURL}/models`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { data: ListedModel[] }).data;
}

beforeAll(async () => {
  [openai, anthropic, gemini] = await Promise.all([startMockOpenAIUpstream(), startMockAnthropicUpstream(), startMockGeminiUpstream()]);
  gateway = await startTestGateway({
    env: {
      OPENAI_API_KEY: 'sk-upstream-test', OPENAI_BASE_URL: openai.url,
      ANTHROPIC_API_KEY: 'sk-ant-upstream-test', ANTHROPIC_BASE_URL: anthropic.url,
      GEMINI_API_KEY: 'gemini-upstream-test', GEMINI_BASE_URL: gemini.url,
    },
  });
  account = await seedAccount(gateway, { balanceUsd: 20 });
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([openai?.close(), anthropic?.close(), gemini?.close()]);
});

describe('the bundled catalog behind three provider keys', () => {
  it('GET /v1/models lists hundreds of models of every kind, each priced', async () => {
    const models = await listModels();
    expect(models.length).toBeGreaterThanOrEqual(200);
    const kinds = new Set(models.map((model) => model.kind));
    expect([...kinds].sort()).toEqual(['audio', 'chat', 'embedding', 'image', 'moderation']);
    for (const model of models) {
      expect(model.object).toBe('model');
      if (model.kind === 'moderation') continue;
      const byVariant = Object.values((model.pricing.per_image_by_size ?? {}) as Record<string, number>);
      const prices = [...Object.values(model.pricing), ...byVariant].filter((price) => typeof price === 'number' && price > 0);
      expect(prices.length, model.id).toBeGreaterThan(0);
    }
    const byId = new Map(models.map((model) => [model.id, model]));
    expect(byId.get('gpt-4o-mini')).toMatchObject({ kind: 'chat', owned_by: 'openai', context_window: 128000, max_output_tokens: 16384, price_source: 'bundled',
      capabilities: { tools: true, vision: true, json_schema: true, reasoning: false }, pricing: { input_per_mtok: 0.15, output_per_mtok: 0.6 } });
    expect(byId.get('claude-sonnet-4-5')).toMatchObject({ kind: 'chat', owned_by: 'anthropic', context_window: 200000, max_output_tokens: 64000,
      pricing: { input_per_mtok: 3, output_per_mtok: 15, cached_input_per_mtok: 0.3, cache_write_per_mtok: 3.75 } });
    expect(byId.get('claude-sonnet-4-5')?.pricing.tiers).toEqual([{ above_input_tokens: 200000, input_per_mtok: 6, output_per_mtok: 22.5, cached_input_per_mtok: 0.6, cache_write_per_mtok: 7.5 }]);
    expect(byId.get('claude-sonnet-4-5-20250929')).toMatchObject({ alias_of: 'claude-sonnet-4-5', pricing: { input_per_mtok: 3 } });
    expect(byId.get('gemini-2.5-flash')).toMatchObject({ kind: 'chat', owned_by: 'google', capabilities: { reasoning: true } });
    expect(byId.get('text-embedding-3-small')).toMatchObject({ kind: 'embedding', pricing: { input_per_mtok: 0.02 } });
    expect(byId.get('whisper-1')).toMatchObject({ kind: 'audio', pricing: { per_audio_minute: 0.006 } });
    expect(byId.get('gpt-image-1')).toMatchObject({ kind: 'image' });
    expect(byId.get('omni-moderation-latest')).toMatchObject({ kind: 'moderation' });
    const health = (await (await fetch(`${gateway.url}/admin/health`, { headers: { authorization: `Bearer ${gateway.adminToken}` } })).json()) as { channels: Array<{ name: string; served_models: number }> };
    for (const name of ['env-openai', 'env-anthropic', 'env-gemini']) expect(health.channels.find((channel) => channel.name === name)?.served_models, name).toBeGreaterThan(15);
    // The Gemini channel serves Gemini's models, not the Claude models the data lists for Vertex AI.
    expect(models.filter((model) => model.owned_by === 'google' && model.id.startsWith('claude'))).toEqual([]);
  });

  it("Claude Code's default ids, dated and alias forms, resolve to one model and reach Anthropic as asked", async () => {
    const client = new Anthropic({ baseURL: gateway.url, apiKey: account.key, maxRetries: 0 });
    for (const model of ['claude-sonnet-4-5-20250929', 'claude-sonnet-4-5', 'claude-haiku-4-5-20251001', 'claude-opus-4-1-20250805', 'claude-opus-4-6', 'claude-sonnet-4-5-20991231']) {
      const before = anthropic.requests.length;
      const message = await client.messages.create({ model, max_tokens: 32, messages: [{ role: 'user', content: `hello ${model}` }] });
      expect(message.type).toBe('message');
      const forwarded = anthropic.requests.slice(before).filter((request) => request.path === '/v1/messages');
      expect(forwarded, model).toHaveLength(1);
      expect((forwarded[0]?.body as { model: string }).model).toBe(model);
    }
    const single = await fetch(`${gateway.baseURL}/models/claude-sonnet-4-5-20991231`);
    expect(await single.json()).toMatchObject({ id: 'claude-sonnet-4-5-20991231', alias_of: 'claude-sonnet-4-5' });
    await flushWrites(gateway);
    const usage = await gateway.admin<{ data: Array<{ model: string; cost_usd: number }> }>('GET', `/admin/usage?key_id=${account.keyId}&limit=50`);
    const asked = usage.body.data.map((row) => row.model);
    expect(asked).toContain('claude-sonnet-4-5-20250929');
    expect(asked).toContain('claude-sonnet-4-5');
  });

  it('a channel test on a "*" channel tries its cheapest chat model, or the one named', async () => {
    const channels = await gateway.admin<{ data: Array<{ id: string; name: string }> }>('GET', '/admin/channels');
    const channel = channels.body.data.find((item) => item.name === 'env-anthropic');
    const tested = await gateway.admin<{ ok: boolean; model: string; upstream_model: string }>('POST', `/admin/channels/${channel?.id ?? ''}/test`);
    expect(tested.body).toMatchObject({ ok: true, model: 'claude-3-haiku' });
    const named = await gateway.admin<{ ok: boolean; model: string; upstream_model: string }>('POST', `/admin/channels/${channel?.id ?? ''}/test`, { model: 'claude-sonnet-4-5-20250929' });
    expect(named.body).toMatchObject({ ok: true, upstream_model: 'claude-sonnet-4-5-20250929' });
    expect((await gateway.admin('POST', `/admin/channels/${channel?.id ?? ''}/test`, { model: 'gpt-4o' })).status).toBe(400);
  });

  it('bills prompt-cache writes at the cache-write price and reads at the cache-read price (claude-sonnet-4-5: $3.75 and $0.30 per M)', async () => {
    const client = new Anthropic({ baseURL: gateway.url, apiKey: account.key, maxRetries: 0 });
    const system: Anthropic.TextBlockParam[] = [{ type: 'text', text: 'You answer questions about herons. '.repeat(400), cache_control: { type: 'ephemeral' } }];
    const ask = (): Promise<Anthropic.Message> => client.messages.create({ model: 'claude-sonnet-4-5-20250929', max_tokens: 32, system, messages: [{ role: 'user', content: 'Where do grey herons nest?' }] });
    const written = await ask();
    const read = await ask();
    expect(written.usage.cache_creation_input_tokens ?? 0).toBeGreaterThan(1000);
    expect(read.usage.cache_read_input_tokens ?? 0).toBeGreaterThan(1000);
    await flushWrites(gateway);
    const rows = (await gateway.admin<{ data: Array<{ request_id: string; cost_usd: number }> }>('GET', `/admin/usage?key_id=${account.keyId}&limit=2`)).body.data;
    // Nano-USD per token: $3/M is 3000.
    const expectedNano = (usage: Anthropic.Usage): number => usage.input_tokens * 3000 + (usage.cache_creation_input_tokens ?? 0) * 3750 + (usage.cache_read_input_tokens ?? 0) * 300 + usage.output_tokens * 15000;
    expect(rows.map((row) => Math.round(row.cost_usd * 1e9))).toEqual([expectedNano(read.usage), expectedNano(written.usage)]);
  });

  it("a key's allowlist may name a model by either form, and lists it with its aliases", async () => {
    const limited = await seedAccount(gateway, { balanceUsd: 5, key: { allowed_models: ['claude-haiku-4-5'] } });
    const client = new Anthropic({ baseURL: gateway.url, apiKey: limited.key, maxRetries: 0 });
    const message = await client.messages.create({ model: 'claude-haiku-4-5-20251001', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
    expect(message.type).toBe('message');
    await expect(client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({ status: 403 });
    const listed = await fetch(`${gateway.baseURL}/models`, { headers: { authorization: `Bearer ${limited.key}` } });
    expect(((await listed.json()) as { data: Array<{ id: string }> }).data.map((model) => model.id).sort()).toEqual(['claude-haiku-4-5', 'claude-haiku-4-5-20251001']);
  });

  it('an unknown model still answers 400 model_not_found', async () => {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: account.key, maxRetries: 0 });
    await expect(client.chat.completions.create({ model: 'no-such-model-anywhere', messages: [{ role: 'user', content: 'hi' }] }))
      .rejects.toMatchObject({ status: 400, code: 'model_not_found' });
  });

  it("an operator's price overrides the bundled one, and removing it brings the bundled price back", async () => {
    const patched = await gateway.admin<{ pricing: Record<string, number>; price_source: string }>('PATCH', '/admin/models/gpt-4o-mini', { pricing: { input_per_mtok: 0.5 } });
    expect(patched.status).toBe(200);
    expect(patched.body.pricing).toMatchObject({ input_per_mtok: 0.5, output_per_mtok: 0.6 });
    let listed = (await listModels()).find((model) => model.id === 'gpt-4o-mini');
    expect(listed).toMatchObject({ price_source: 'operator', pricing: { input_per_mtok: 0.5, output_per_mtok: 0.6 }, context_window: 128000 });
    expect((await listModels()).find((model) => model.id === 'gpt-4o-mini-2024-07-18')).toMatchObject({ price_source: 'operator', pricing: { input_per_mtok: 0.5 } });
    expect((await gateway.admin('DELETE', '/admin/models/gpt-4o-mini')).status).toBe(200);
    listed = (await listModels()).find((model) => model.id === 'gpt-4o-mini');
    expect(listed).toMatchObject({ price_source: 'bundled', pricing: { input_per_mtok: 0.15 } });
  });
});

describe('the overlay: what the price data lacks, served and billed', () => {
  it('lists tts-1, tts-1-hd and DALL·E with their prices, and gemini-embedding-001 with its 2,048-token context', async () => {
    const byId = new Map((await listModels()).map((model) => [model.id, model]));
    expect(byId.get('tts-1')).toMatchObject({ kind: 'audio', owned_by: 'openai', price_source: 'bundled', pricing: { per_mchar: 15 } });
    expect(byId.get('tts-1-hd')).toMatchObject({ kind: 'audio', pricing: { per_mchar: 30 } });
    expect(byId.get('dall-e-3')).toMatchObject({ kind: 'image', pricing: { per_image_by_size: { 'standard 1024x1024': 0.04, 'hd 1024x1792': 0.12, 'hd 1792x1024': 0.12 } } });
    expect(byId.get('dall-e-2')).toMatchObject({ kind: 'image', pricing: { per_image_by_size: { '256x256': 0.016, '512x512': 0.018, '1024x1024': 0.02 } } });
    expect(byId.get('gemini-embedding-001')).toMatchObject({ kind: 'embedding', context_window: 2048, context_length: 2048 });
    expect(byId.get('claude-sonnet-4-5')).toMatchObject({ pricing: { per_web_search: 0.01, web_search: '0.01' } });
    expect(byId.get('gemini-2.5-flash')).toMatchObject({ pricing: { per_web_search: null, per_grounded_prompt: 0.035 } });
  });

  it.each([['tts-1', 15_000n], ['tts-1-hd', 30_000n]])('%s answers /v1/audio/speech and is charged its price per character, exactly', async (model, nanoPerCharacter) => {
    const speaker = await seedAccount(gateway, { balanceUsd: 5 });
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: speaker.key, maxRetries: 0 });
    const input = 'The gateway reads this aloud, accents too: é.';
    const speech = await client.audio.speech.create({ model, voice: 'alloy', input });
    expect((await speech.arrayBuffer()).byteLength).toBeGreaterThan(0);
    expect((openai.requests.at(-1)?.body as { model: string }).model).toBe(model);
    await flushWrites(gateway);
    const rows = (await gateway.admin<{ data: Array<{ model: string; status: number; cost_usd: number }> }>('GET', `/admin/usage?key_id=${speaker.keyId}&limit=5`)).body.data;
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ model, status: 200 });
    expect(BigInt(Math.round((rows[0]?.cost_usd ?? 0) * 1e9))).toBe(BigInt([...input].length) * nanoPerCharacter);
  });

  it('dall-e-3 hd 1024x1792 is charged its exact per-image price ($0.12), dall-e-2 512x512 its own ($0.018 each)', async () => {
    const painter = await seedAccount(gateway, { balanceUsd: 5 });
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: painter.key, maxRetries: 0 });
    const { data: image, response } = await client.images.generate({ model: 'dall-e-3', prompt: 'a heron at dawn', quality: 'hd', size: '1024x1792' }).withResponse();
    expect(image.data).toHaveLength(1);
    expect(response.headers.get('x-request-cost-usd')).toBe('0.12');
    const { response: second } = await client.images.generate({ model: 'dall-e-2', prompt: 'two herons', size: '512x512', n: 2 }).withResponse();
    expect(second.headers.get('x-request-cost-usd')).toBe('0.036');
    await flushWrites(gateway);
    const rows = (await gateway.admin<{ data: Array<{ model: string; cost_usd: number }> }>('GET', `/admin/usage?key_id=${painter.keyId}&limit=5`)).body.data;
    expect(rows.map((row) => [row.model, BigInt(Math.round(row.cost_usd * 1e9))])).toEqual([['dall-e-2', 36_000_000n], ['dall-e-3', 120_000_000n]]);
  });
});
