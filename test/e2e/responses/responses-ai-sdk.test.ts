/**
 * The Vercel AI SDK's OpenAI provider (`openai(model)` speaks the Responses API in @ai-sdk/openai v3) against
 * POST /v1/responses: generateText, streamText and a tool loop, passed through to OpenAI and bridged to Anthropic and
 * Gemini. Bridged multi-step tool loops set `store: false`: with the default (`store: true`) the SDK refers back to
 * earlier assistant text by item_reference, which only OpenAI can resolve; the gateway keeps no items and says so.
 */
import { createOpenAI } from '@ai-sdk/openai';
import { APICallError, generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from '../../support/mock-anthropic-upstream.js';
import { startMockGeminiUpstream, type MockGeminiUpstream } from '../../support/mock-gemini-upstream.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';

let gateway: TestGateway;
let openaiUpstream: MockOpenAIUpstream;
let anthropicUpstream: MockAnthropicUpstream;
let geminiUpstream: MockGeminiUpstream;
let account: SeededAccount;

const weather = tool({
  description: 'Current weather for a city',
  inputSchema: jsonSchema<{ location: string }>({ type: 'object', properties: { location: { type: 'string' } }, required: ['location'], additionalProperties: false }),
  execute: async () => ({ temperature_c: 18, sky: 'clear' }),
});

beforeAll(async () => {
  [openaiUpstream, anthropicUpstream, geminiUpstream] = await Promise.all([startMockOpenAIUpstream(), startMockAnthropicUpstream(), startMockGeminiUpstream()]);
  gateway = await startTestGateway();
  await addRoutedModel(gateway, { model: 'v-openai', channel: { name: 'o', type: 'openai', base_url: openaiUpstream.url, api_key: 'sk-upstream-test', models: { 'v-openai': 'gpt-4o-mini' } } });
  await addRoutedModel(gateway, { model: 'v-anthropic', channel: { name: 'a', type: 'anthropic', base_url: anthropicUpstream.url, api_key: 'sk-ant-upstream-test', models: { 'v-anthropic': 'claude-sonnet-4-5' } } });
  await addRoutedModel(gateway, { model: 'v-gemini', channel: { name: 'g', type: 'gemini', base_url: geminiUpstream.url, api_key: 'gemini-upstream-test', models: { 'v-gemini': 'gemini-2.5-flash' } } });
  await gateway.gateway.services.catalog.reload();
  account = await seedAccount(gateway, { balanceUsd: 20 });
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([openaiUpstream?.close(), anthropicUpstream?.close(), geminiUpstream?.close()]);
});

describe('Vercel AI SDK openai(model) → POST /v1/responses', () => {
  const provider = () => createOpenAI({ baseURL: gateway.baseURL, apiKey: account.key });

  it.each(['v-openai', 'v-anthropic', 'v-gemini'])('generateText and streamText through %s', async (model) => {
    const generated = await generateText({ model: provider()(model), prompt: 'Say hello', maxRetries: 0 });
    expect(generated.text).toContain('hello');
    expect(generated.usage.inputTokens).toBeGreaterThan(0);
    expect(generated.usage.outputTokens).toBeGreaterThan(0);
    expect(generated.finishReason).toBe('stop');

    const streamed = streamText({ model: provider()(model), prompt: 'Stream a few words please', maxRetries: 0 });
    let deltas = 0;
    let text = '';
    for await (const delta of streamed.textStream) {
      deltas += 1;
      text += delta;
    }
    expect(text).toContain('Stream a few words please');
    expect(deltas).toBeGreaterThan(1);
    expect((await streamed.usage).outputTokens).toBeGreaterThan(0);
    expect(await streamed.finishReason).toBe('stop');
  });

  it.each(['v-openai', 'v-anthropic', 'v-gemini'])('runs a tool loop through %s (store: false)', async (model) => {
    const result = await generateText({
      model: provider()(model),
      prompt: 'What is the weather in Paris?',
      tools: { get_weather: weather },
      stopWhen: stepCountIs(2),
      maxRetries: 0,
      providerOptions: { openai: { store: false } },
    });
    const call = result.steps[0]?.toolCalls[0];
    expect(call?.toolName).toBe('get_weather');
    expect((call?.input as { location: string }).location).toContain('Paris');
    expect(result.text).toMatch(/18/);
  });

  it('streams a tool loop bridged to Anthropic', async () => {
    const result = streamText({
      model: provider()('v-anthropic'),
      prompt: 'What is the weather in Lima?',
      tools: { get_weather: weather },
      stopWhen: stepCountIs(2),
      maxRetries: 0,
      providerOptions: { openai: { store: false } },
    });
    let text = '';
    for await (const delta of result.textStream) text += delta;
    expect((await result.steps)[0]?.toolCalls[0]?.toolName).toBe('get_weather');
    expect(text).toMatch(/18/);
  });

  it('tells a default-store tool loop on a bridged model what to change', async () => {
    const error = await generateText({ model: provider()('v-anthropic'), prompt: 'What is the weather in Paris?', tools: { get_weather: weather }, stopWhen: stepCountIs(2), maxRetries: 0 }).catch((caught: unknown) => caught);
    expect(APICallError.isInstance(error)).toBe(true);
    expect((error as APICallError).statusCode).toBe(400);
    expect((error as APICallError).message).toMatch(/store = false/);
  });
});
