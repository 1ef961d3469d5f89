/** One gateway in front of the mock OpenAI and Gemini upstreams, with image, audio and moderation models priced. */
import { flushWrites, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockGeminiUpstream, type MockGeminiUpstream } from '../../support/mock-gemini-upstream.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';

export interface MediaSetup {
  gateway: TestGateway;
  openai: MockOpenAIUpstream;
  gemini: MockGeminiUpstream;
  close(): Promise<void>;
}

export interface UsageRow {
  request_id: string;
  model: string | null;
  protocol: string;
  endpoint: string;
  stream: boolean;
  status: number;
  error_code: string | null;
  prompt_tokens: number;
  completion_tokens: number;
  cost_usd: number;
  attempts: number;
}

/** Public model → [kind, pricing in USD, OpenAI upstream model or null, Gemini upstream model or null]. */
const MODELS: Record<string, { kind: string; pricing: Record<string, number>; openai?: string; gemini?: string }> = {
  'dalle-3': { kind: 'image', pricing: { per_image: 0.04 }, openai: 'dall-e-3' },
  'dalle-2': { kind: 'image', pricing: { per_image: 0.02 }, openai: 'dall-e-2' },
  'gpt-image': { kind: 'image', pricing: { input_per_mtok: 5, output_per_mtok: 40 }, openai: 'gpt-image-1' },
  'nano-banana': { kind: 'image', pricing: { per_image: 0.039 }, gemini: 'gemini-2.5-flash-image' },
  whisper: { kind: 'audio', pricing: { per_audio_minute: 0.006 }, openai: 'whisper-1' },
  transcribe: { kind: 'audio', pricing: { input_per_mtok: 2.5, output_per_mtok: 10 }, openai: 'gpt-4o-transcribe' },
  'tts-1': { kind: 'audio', pricing: { per_mchar: 15 }, openai: 'tts-1' },
  'tts-mini': { kind: 'audio', pricing: { per_mchar: 0.6 }, openai: 'gpt-4o-mini-tts' },
  'omni-moderation-latest': { kind: 'moderation', pricing: {}, openai: 'omni-moderation-latest' },
  'priced-moderation': { kind: 'moderation', pricing: { per_request: 0.001 }, openai: 'omni-moderation-latest' },
  'embed-openai': { kind: 'embedding', pricing: { input_per_mtok: 0.02 }, openai: 'text-embedding-3-small' },
  'embed-gemini': { kind: 'embedding', pricing: { input_per_mtok: 0.15 }, gemini: 'gemini-embedding-001' },
  'chat-openai': { kind: 'chat', pricing: { input_per_mtok: 1, output_per_mtok: 2 }, openai: 'gpt-4o-mini' },
};

export async function startMediaSetup(env: Record<string, string> = {}): Promise<MediaSetup> {
  // Speech audio arrives in 16 KiB chunks 20 ms apart, so streaming to the caller is observable.
  const openai = await startMockOpenAIUpstream({ chunkDelayMs: 20 });
  const gemini = await startMockGeminiUpstream();
  const gateway = await startTestGateway({ env });
  const openaiModels: Record<string, string> = {};
  const geminiModels: Record<string, string> = {};
  for (const [id, model] of Object.entries(MODELS)) {
    const created = await gateway.admin('POST', '/admin/models', { id, kind: model.kind, pricing: model.pricing });
    if (created.status !== 201) throw new Error(`model ${id}: ${JSON.stringify(created.body)}`);
    if (model.openai !== undefined) openaiModels[id] = model.openai;
    if (model.gemini !== undefined) geminiModels[id] = model.gemini;
  }
  // Two OpenAI channels, so a failed attempt is retried on the other with the same upload.
  for (const name of ['openai-a', 'openai-b']) {
    const channel = await gateway.admin('POST', '/admin/channels', { name, type: 'openai', base_url: openai.url, api_key: 'sk-upstream-test', models: openaiModels });
    if (channel.status !== 201) throw new Error(JSON.stringify(channel.body));
  }
  const channel = await gateway.admin('POST', '/admin/channels', { name: 'gemini', type: 'gemini', base_url: gemini.url, api_key: 'gemini-upstream-test', models: geminiModels });
  if (channel.status !== 201) throw new Error(JSON.stringify(channel.body));
  await gateway.gateway.services.catalog.reload();
  return {
    gateway,
    openai,
    gemini,
    async close() {
      await gateway.close();
      await Promise.all([openai.close(), gemini.close()]);
    },
  };
}

export async function newAccount(setup: MediaSetup, key: Record<string, unknown> = {}): Promise<SeededAccount> {
  return seedAccount(setup.gateway, { balanceUsd: 20, key });
}

/** The usage row of one request (by the x-request-id the gateway answered with). */
export async function usageRow(setup: MediaSetup, account: SeededAccount, requestId: string | null): Promise<UsageRow> {
  await flushWrites(setup.gateway);
  const usage = await setup.gateway.admin<{ data: UsageRow[] }>('GET', `/admin/usage?key_id=${account.keyId}&limit=200`);
  const row = usage.body.data.find((entry) => entry.request_id === requestId);
  if (row === undefined) throw new Error(`no usage row for ${String(requestId)} among ${usage.body.data.length}`);
  return row;
}

/** USD from nano-USD, as the admin API shows it. */
export function usd(nano: bigint): number {
  return Number(nano) / 1e9;
}

/** ceil(tokens × price-per-million) in nano-USD, as the gateway computes it. */
export function tokenCostNano(tokensAndPrices: Array<[number, number]>): bigint {
  const sum = tokensAndPrices.reduce((total, [tokens, usdPerMillion]) => total + BigInt(tokens) * BigInt(Math.round(usdPerMillion * 1e9)), 0n);
  return (sum + 999_999n) / 1_000_000n;
}
