import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { anthropicDriver, geminiDriver, openAIDriver } from '../families/client-drivers.js';

/** Preset channel types through the admin API and the relay (their quirks are proven in the unit fixtures). */
let gateway: TestGateway;
let upstream: MockOpenAIUpstream;
let account: SeededAccount;

beforeAll(async () => {
  upstream = await startMockOpenAIUpstream();
  gateway = await startTestGateway();
  await addRoutedModel(gateway, { model: 'llama-on-together', channel: { name: 'together', type: 'together', base_url: upstream.url, api_key: 'sk-upstream-test', models: { 'llama-on-together': 'gpt-4o-mini' } } });
  account = await seedAccount(gateway, { balanceUsd: 5 });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

describe('preset channel types', () => {
  it('are created from the type alone: base URL from the preset, local servers without a key', async () => {
    for (const type of ['mistral', 'groq', 'deepseek', 'xai', 'openrouter', 'together', 'fireworks']) {
      const created = await gateway.admin<{ type: string; base_url: string | null }>('POST', '/admin/channels', { name: `preset-${type}`, type, api_key: 'sk-test', models: ['m'] });
      expect(created.status, type).toBe(201);
      expect(created.body.type).toBe(type);
    }
    for (const type of ['ollama', 'vllm', 'lmstudio']) {
      const created = await gateway.admin('POST', '/admin/channels', { name: `preset-${type}`, type, models: ['m'] });
      expect(created.status, type).toBe(201);
    }
    const keyless = await gateway.admin<{ error: { param: string } }>('POST', '/admin/channels', { name: 'no-key', type: 'groq', models: ['m'] });
    expect(keyless.status).toBe(400);
    expect(keyless.body.error.param).toBe('api_key');
  });

  it('serve every client family through the preset adapter', async () => {
    expect(await openAIDriver(gateway.baseURL, account.key).plain('llama-on-together', 'Say pelican')).toContain('pelican');
    expect((await anthropicDriver(gateway.url, account.key, 'x-api-key').stream('llama-on-together', 'Tell me about the otter')).text).toContain('otter');
    expect((await geminiDriver(gateway.url, account.key).toolRoundTrip('llama-on-together')).toolName).toBe('get_weather');
    expect(upstream.requests.at(-1)!.headers.authorization).toBe('Bearer sk-upstream-test');
  });
});
