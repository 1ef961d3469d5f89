import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, flushWrites, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from '../../support/mock-anthropic-upstream.js';
import { startMockGeminiUpstream, type MockGeminiUpstream } from '../../support/mock-gemini-upstream.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { aiSdkDriver } from './ai-sdk-driver.js';
import { anthropicDriver, geminiDriver, openAIDriver, type ClientDriver } from './client-drivers.js';

/**
 * Every client family reaches every upstream type. Each cell drives the official SDK against the
 * gateway, whose channel points at a mock upstream of another (or the same) vendor, strict like the real API.
 */
interface Upstreams {
  openai: MockOpenAIUpstream;
  anthropic: MockAnthropicUpstream;
  gemini: MockGeminiUpstream;
}

const MODELS = { openai: 'via-openai', anthropic: 'via-anthropic', gemini: 'via-gemini' } as const;
type UpstreamKind = keyof typeof MODELS;

let gateway: TestGateway;
let upstreams: Upstreams;
let account: SeededAccount;

beforeAll(async () => {
  upstreams = {
    openai: await startMockOpenAIUpstream(),
    anthropic: await startMockAnthropicUpstream(),
    gemini: await startMockGeminiUpstream(),
  };
  gateway = await startTestGateway();
  await addRoutedModel(gateway, { model: MODELS.openai, channel: { name: 'openai-up', type: 'openai', base_url: upstreams.openai.url, api_key: 'sk-upstream-test', models: { [MODELS.openai]: 'gpt-4o-mini' } } });
  await addRoutedModel(gateway, { model: MODELS.anthropic, channel: { name: 'anthropic-up', type: 'anthropic', base_url: upstreams.anthropic.url, api_key: 'sk-ant-upstream-test', models: { [MODELS.anthropic]: 'claude-sonnet-4-5' } } });
  await addRoutedModel(gateway, { model: MODELS.gemini, channel: { name: 'gemini-up', type: 'gemini', base_url: upstreams.gemini.url, api_key: 'gemini-upstream-test', models: { [MODELS.gemini]: 'gemini-2.5-flash' } } });
  account = await seedAccount(gateway, { balanceUsd: 50 });
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all(Object.values(upstreams ?? {}).map((upstream: { close(): Promise<void> }) => upstream.close()));
});

function drivers(): ClientDriver[] {
  return [
    openAIDriver(gateway.baseURL, account.key),
    anthropicDriver(gateway.url, account.key, 'bearer'),
    anthropicDriver(gateway.url, account.key, 'x-api-key'),
    geminiDriver(gateway.url, account.key),
    aiSdkDriver('openai', gateway.url, account.key),
    aiSdkDriver('anthropic', gateway.url, account.key),
    aiSdkDriver('google', gateway.url, account.key),
  ];
}

/** The path each upstream's requests arrive on, to prove which upstream (and so which translation) served a cell. */
function lastUpstreamPath(kind: UpstreamKind): string | undefined {
  return upstreams[kind].requests.at(-1)?.path;
}

const EXPECTED_PATH: Record<UpstreamKind, RegExp> = {
  openai: /^\/v1\/chat\/completions$/,
  anthropic: /^\/v1\/messages$/,
  gemini: /^\/v1beta\/models\/gemini-2\.5-flash:(generateContent|streamGenerateContent)$/,
};

const CLIENTS = ['openai', 'anthropic (bearer)', 'anthropic (x-api-key)', 'gemini', 'ai-sdk openai', 'ai-sdk anthropic', 'ai-sdk google'] as const;
const KINDS: UpstreamKind[] = ['openai', 'anthropic', 'gemini'];

describe.each(CLIENTS)('%s client', (clientName) => {
  const driver = (): ClientDriver => drivers().find((candidate) => candidate.name === clientName)!;

  describe.each(KINDS)('→ %s upstream', (kind) => {
    it('answers a plain request', async () => {
      const text = await driver().plain(MODELS[kind], 'Say the word pelican');
      expect(text).toContain('pelican');
      expect(lastUpstreamPath(kind)).toMatch(EXPECTED_PATH[kind]);
    });

    it('streams, assembled by the SDK helper', async () => {
      const { text, deltas } = await driver().stream(MODELS[kind], 'Tell me about the river otter in a few words');
      expect(text).toContain('otter');
      expect(deltas).toBeGreaterThan(1);
    });

    it('completes a tool round trip', async () => {
      const result = await driver().toolRoundTrip(MODELS[kind]);
      expect(result.toolName).toBe('get_weather');
      expect(typeof result.args.location).toBe('string');
      expect(result.final.length).toBeGreaterThan(0);
    });

    it('carries an image', async () => {
      const before = upstreams[kind].requests.length;
      const text = await driver().image(MODELS[kind]);
      expect(text.length).toBeGreaterThan(0);
      const sent = upstreams[kind].requests.slice(before).at(-1)?.rawBody ?? '';
      expect(sent).toContain('iVBORw0KGgo');
    });
  });
});

describe('billing and usage logs are the same whatever the family', () => {
  it('logs every call with tokens and a cost, under the caller protocol', async () => {
    await flushWrites(gateway);
    const usage = await gateway.admin<{ data: Array<{ protocol: string; model: string; status: number; prompt_tokens: number; completion_tokens: number; cost_usd: number }> }>(
      'GET', `/admin/usage?key_id=${account.keyId}&limit=200`,
    );
    const rows = usage.body.data.filter((row) => row.status === 200);
    for (const protocol of ['openai-chat', 'anthropic-messages', 'gemini']) {
      for (const model of Object.values(MODELS)) {
        const row = rows.find((candidate) => candidate.protocol === protocol && candidate.model === model);
        expect(row, `${protocol} → ${model}`).toBeDefined();
        expect(row!.prompt_tokens).toBeGreaterThan(0);
        expect(row!.completion_tokens).toBeGreaterThan(0);
        expect(row!.cost_usd).toBeGreaterThan(0);
      }
    }
  });
});
