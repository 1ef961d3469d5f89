import Anthropic from '@anthropic-ai/sdk';
import { ApiError, GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, flushWrites, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from '../../support/mock-anthropic-upstream.js';
import { startMockGeminiUpstream, type MockGeminiUpstream } from '../../support/mock-gemini-upstream.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';

let gateway: TestGateway;
let openaiUpstream: MockOpenAIUpstream;
let anthropicUpstream: MockAnthropicUpstream;
let geminiUpstream: MockGeminiUpstream;
let account: SeededAccount;

beforeAll(async () => {
  openaiUpstream = await startMockOpenAIUpstream();
  anthropicUpstream = await startMockAnthropicUpstream();
  geminiUpstream = await startMockGeminiUpstream();
  gateway = await startTestGateway();
  await addRoutedModel(gateway, { model: 'chat-openai', channel: { name: 'o', type: 'openai', base_url: openaiUpstream.url, api_key: 'sk-upstream-test', models: { 'chat-openai': 'gpt-4o-mini' } } });
  await addRoutedModel(gateway, { model: 'chat-anthropic', channel: { name: 'a', type: 'anthropic', base_url: anthropicUpstream.url, api_key: 'sk-ant-upstream-test', models: { 'chat-anthropic': 'claude-sonnet-4-5' } } });
  await addRoutedModel(gateway, { model: 'chat-gemini', channel: { name: 'g', type: 'gemini', base_url: geminiUpstream.url, api_key: 'gemini-upstream-test', models: { 'chat-gemini': 'gemini-2.5-flash', 'embed-gemini': 'gemini-embedding-001' } } });
  await gateway.admin('POST', '/admin/models', { id: 'embed-gemini', kind: 'embedding', pricing: { input_per_mtok: 0.15 } });
  await addRoutedModel(gateway, { model: 'embed-openai', kind: 'embedding', pricing: { input_per_mtok: 0.02 }, channel: { name: 'oe', type: 'openai', base_url: openaiUpstream.url, api_key: 'sk-upstream-test', models: { 'embed-openai': 'text-embedding-3-small' } } });
  await gateway.gateway.services.catalog.reload();
  account = await seedAccount(gateway, { balanceUsd: 20 });
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([openaiUpstream?.close(), anthropicUpstream?.close(), geminiUpstream?.close()]);
});

describe('errors every SDK understands', () => {
  it('the Anthropic SDK gets its own error classes with the spec fields', async () => {
    const badKey = new Anthropic({ baseURL: gateway.url, apiKey: 'sk-NOTAKEYNOTAKEYNOTAKEYNOTAKEY', maxRetries: 0 });
    const error = await badKey.messages.create({ model: 'chat-anthropic', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.AuthenticationError);
    const body = (error as InstanceType<typeof Anthropic.AuthenticationError>).error as { type: string; error: { type: string; message: string; code: string } };
    expect(body).toMatchObject({ type: 'error', error: { type: 'authentication_error', code: 'invalid_api_key' } });
    expect(typeof body.error.message).toBe('string');

    const client = new Anthropic({ baseURL: gateway.url, apiKey: account.key, maxRetries: 0 });
    const invalid = await client.messages.create({ model: 'chat-anthropic', messages: [{ role: 'user', content: 'x' }] } as never).catch((caught: unknown) => caught);
    expect(invalid).toBeInstanceOf(Anthropic.BadRequestError);
  });

  it('the Google SDK gets an ApiError with the status, and the body keeps string code and type', async () => {
    const badKey = new GoogleGenAI({ apiKey: 'sk-NOTAKEYNOTAKEYNOTAKEYNOTAKEY', httpOptions: { baseUrl: gateway.url } });
    const error = await badKey.models.generateContent({ model: 'chat-gemini', contents: 'x' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(401);
    const raw = await fetch(`${gateway.url}/v1beta/models/chat-gemini:generateContent`, { method: 'POST', headers: { 'x-goog-api-key': 'sk-NOTAKEYNOTAKEYNOTAKEYNOTAKEY' }, body: '{}' });
    const body = (await raw.json()) as { error: { message: string; type: string; code: string; status: string } };
    expect(body.error).toMatchObject({ status: 'UNAUTHENTICATED' });
    expect(typeof body.error.code).toBe('string');
    expect(typeof body.error.type).toBe('string');
    expect(typeof body.error.message).toBe('string');
  });

  it('accepts the key as ?key= on the generative-content family', async () => {
    const response = await fetch(`${gateway.url}/v1beta/models/chat-openai:generateContent?key=${account.key}`, {
      method: 'POST',
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Say heron' }] }] }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { candidates: Array<{ content: { parts: Array<{ text: string }> } }> };
    expect(body.candidates[0]?.content.parts[0]?.text).toContain('heron');
  });

  it('ends a translated stream that breaks mid-way with an error event in the caller format', async () => {
    anthropicUpstream.setFault({ kind: 'cut-stream', afterEvents: 4, times: 1 });
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: account.key, maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: 'chat-anthropic', stream: true, messages: [{ role: 'user', content: 'a long answer please, with many words in it' }] });
    const error = await (async () => {
      for await (const _chunk of stream) {
        // drain until the error event
      }
    })().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.APIError);
  });
});

describe('token counting is never billed', () => {
  it('count_tokens asks the Anthropic upstream and counts locally for others', async () => {
    const client = new Anthropic({ baseURL: gateway.url, apiKey: account.key, maxRetries: 0 });
    const upstreamCount = await client.messages.countTokens({ model: 'chat-anthropic', messages: [{ role: 'user', content: 'How many tokens is this sentence?' }] });
    expect(upstreamCount.input_tokens).toBeGreaterThan(0);
    expect(anthropicUpstream.requests.at(-1)?.path).toBe('/v1/messages/count_tokens');
    const local = await client.messages.countTokens({ model: 'chat-openai', messages: [{ role: 'user', content: 'How many tokens is this sentence?' }] });
    expect(local.input_tokens).toBeGreaterThan(3);
  });

  it(':countTokens works through the Google SDK against a Gemini and an Anthropic upstream', async () => {
    const client = new GoogleGenAI({ apiKey: account.key, httpOptions: { baseUrl: gateway.url } });
    const native = await client.models.countTokens({ model: 'chat-gemini', contents: 'How many tokens is this sentence?' });
    expect(native.totalTokens).toBeGreaterThan(0);
    expect(geminiUpstream.requests.at(-1)?.path).toMatch(/:countTokens$/);
    const translated = await client.models.countTokens({ model: 'chat-anthropic', contents: 'How many tokens is this sentence?' });
    expect(translated.totalTokens).toBeGreaterThan(0);
    expect(anthropicUpstream.requests.at(-1)?.path).toBe('/v1/messages/count_tokens');
  });

  it('writes no charge for counting', async () => {
    await flushWrites(gateway);
    const usage = await gateway.admin<{ data: Array<{ endpoint: string; cost_usd: number }> }>('GET', `/admin/usage?key_id=${account.keyId}&limit=200`);
    expect(usage.body.data.filter((row) => /count/i.test(row.endpoint)).every((row) => row.cost_usd === 0)).toBe(true);
  });
});

describe('embeddings cross families', () => {
  it('the openai SDK (base64 by default) embeds through a Gemini upstream', async () => {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: account.key, maxRetries: 0 });
    const result = await client.embeddings.create({ model: 'embed-gemini', input: ['first text', 'second text'], dimensions: 8 });
    expect(result.data).toHaveLength(2);
    expect(result.data[0]?.embedding).toHaveLength(8);
    expect(result.data[0]?.embedding.every((value) => Number.isFinite(value))).toBe(true);
    expect(result.usage.prompt_tokens).toBeGreaterThan(0);
    expect(geminiUpstream.requests.at(-1)?.path).toMatch(/:batchEmbedContents$/);
  });

  it('the Google SDK embeds through an OpenAI upstream, and natively through Gemini', async () => {
    const client = new GoogleGenAI({ apiKey: account.key, httpOptions: { baseUrl: gateway.url } });
    const translated = await client.models.embedContent({ model: 'embed-openai', contents: ['hello world', 'second'] });
    expect(translated.embeddings).toHaveLength(2);
    expect(translated.embeddings?.[0]?.values?.length).toBeGreaterThan(0);
    expect(openaiUpstream.requests.at(-1)?.path).toBe('/v1/embeddings');
    const native = await client.models.embedContent({ model: 'embed-gemini', contents: 'hello world' });
    expect(native.embeddings?.[0]?.values?.length).toBeGreaterThan(0);
  });

  it('the openai SDK embeds through an OpenAI upstream untouched, float format included', async () => {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: account.key, maxRetries: 0 });
    const result = await client.embeddings.create({ model: 'embed-openai', input: 'plain float please', encoding_format: 'float' });
    expect(result.data[0]?.embedding.length).toBeGreaterThan(0);
    expect((openaiUpstream.requests.at(-1)?.body as { model: string }).model).toBe('text-embedding-3-small');
  });
});

describe('Gemini streaming without alt=sse (the streamed JSON array)', () => {
  it('answers a JSON array of GenerateContentResponse chunks, from any upstream', async () => {
    for (const model of ['chat-gemini', 'chat-openai', 'chat-anthropic']) {
      const response = await fetch(`${gateway.url}/v1beta/models/${model}:streamGenerateContent`, {
        method: 'POST',
        headers: { 'x-goog-api-key': account.key },
        body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Say kingfisher' }] }] }),
      });
      expect(response.status, model).toBe(200);
      const chunks = JSON.parse(await response.text()) as Array<{ candidates?: Array<{ content?: { parts?: Array<{ text?: string }> }; finishReason?: string }>; usageMetadata?: { totalTokenCount: number } }>;
      expect(Array.isArray(chunks)).toBe(true);
      const text = chunks.flatMap((chunk) => chunk.candidates?.[0]?.content?.parts?.map((part) => part.text ?? '') ?? []).join('');
      expect(text, model).toContain('kingfisher');
      expect(chunks.at(-1)?.candidates?.[0]?.finishReason, model).toBe('STOP');
      expect(chunks.at(-1)?.usageMetadata?.totalTokenCount, model).toBeGreaterThan(0);
    }
  });
});

describe('headers as real clients send them', () => {
  it('forwards anthropic-version and anthropic-beta (or the vendorb-version alias) on the pass-through path', async () => {
    const body = JSON.stringify({ model: 'chat-anthropic', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] });
    const real = await fetch(`${gateway.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': account.key, 'anthropic-version': '2023-06-01', 'anthropic-beta': 'prompt-caching-2024-07-31' }, body });
    expect(real.status).toBe(200);
    expect(anthropicUpstream.requests.at(-1)?.headers['anthropic-beta']).toBe('prompt-caching-2024-07-31');
    const alias = await fetch(`${gateway.url}/v1/messages`, { method: 'POST', headers: { authorization: `Bearer ${account.key}`, 'vendorb-version': '2026-10-21' }, body });
    expect(alias.status).toBe(200);
    expect(anthropicUpstream.requests.at(-1)?.headers['anthropic-version']).toBe('2026-10-21');
  });
});

describe('upstream errors are classified by what they mean, not their status alone', () => {
  it("treats Gemini's 400 API_KEY_INVALID as the channel's credential failing (502), not the caller's mistake", async () => {
    geminiUpstream.setFault({
      kind: 'status',
      status: 400,
      times: 1,
      body: { error: { code: 400, message: 'API key not valid. Please pass a valid API key.', status: 'INVALID_ARGUMENT', details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' }] } },
    });
    const response = await fetch(`${gateway.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat-gemini', messages: [{ role: 'user', content: 'x' }] }),
    });
    const text = await response.text();
    expect(response.status).toBe(502);
    expect((JSON.parse(text) as { error: { code: string } }).error.code).toBe('upstream_error');
    expect(text).not.toContain('API key not valid');
  });
});
