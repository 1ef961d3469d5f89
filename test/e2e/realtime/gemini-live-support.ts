/** A gateway in front of the mock Gemini Live upstream, with a live model priced for text and audio tokens, and the SDK's client. */
import type { Clock } from '../../../src/shared/clock.js';
import { GoogleGenAI, Modality, type LiveConnectConfig, type LiveServerMessage, type Session } from '@google/genai';
import { startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { startMockGeminiLive, type GeminiLiveUsage, type MockGeminiLive, type MockGeminiLiveOptions } from '../../support/mock-gemini-live.js';

/** Gemini 2.5 Flash native audio's prices in USD per million tokens (the cached ones a tenth). */
export const LIVE_PRICES = { text: 0.5, cachedText: 0.05, audio: 3, cachedAudio: 0.3, outText: 2, outAudio: 12 };
export const LIVE_MODEL = 'live-voice';
export const LIVE_UPSTREAM_MODEL = 'gemini-live-2.5-flash-preview';
/** The Live path of the API version the SDK uses by default (the gateway sends the upstream the caller's version). */
export const LIVE_PATH = '/ws/google.ai.generativelanguage.v1.GenerativeService.BidiGenerateContent';

export interface LiveSetup {
  gateway: TestGateway;
  upstream: MockGeminiLive;
  close(): Promise<void>;
}

export async function startLiveSetup(env: Record<string, string> = {}, mock: MockGeminiLiveOptions = {}, channels = 1, clock?: Clock): Promise<LiveSetup> {
  const upstream = await startMockGeminiLive(mock);
  const gateway = await startTestGateway({ env, ...(clock === undefined ? {} : { clock }) });
  const model = await gateway.admin('POST', '/admin/models', {
    id: LIVE_MODEL,
    kind: 'chat',
    pricing: { input_per_mtok: LIVE_PRICES.text, cached_input_per_mtok: LIVE_PRICES.cachedText, output_per_mtok: LIVE_PRICES.outText, input_audio_per_mtok: LIVE_PRICES.audio, cached_input_audio_per_mtok: LIVE_PRICES.cachedAudio, output_audio_per_mtok: LIVE_PRICES.outAudio },
  });
  if (model.status !== 201) throw new Error(JSON.stringify(model.body));
  for (let index = 0; index < channels; index += 1) {
    const channel = await gateway.admin('POST', '/admin/channels', { name: `live-${index}`, type: 'gemini', base_url: upstream.url, api_key: 'g-upstream-key', models: { [LIVE_MODEL]: LIVE_UPSTREAM_MODEL } });
    if (channel.status !== 201) throw new Error(JSON.stringify(channel.body));
  }
  await gateway.gateway.services.catalog.reload();
  return {
    gateway,
    upstream,
    async close() {
      await gateway.close();
      await upstream.close();
    },
  };
}

/** What one turn costs in nano-USD, computed from its usage metadata as Google prices it (rounded up once). */
export function turnCostNano(usage: GeminiLiveUsage): bigint {
  const nano = (usd: number): bigint => BigInt(Math.round(usd * 1e9));
  const of = (details: GeminiLiveUsage['promptTokensDetails'] | undefined, modality: string): number => (details ?? []).filter((detail) => detail.modality === modality).reduce((sum, detail) => sum + detail.tokenCount, 0);
  const cachedAudio = of(usage.cacheTokensDetails, 'AUDIO');
  const cachedText = (usage.cachedContentTokenCount ?? 0) - cachedAudio;
  const audio = of(usage.promptTokensDetails, 'AUDIO') - cachedAudio;
  const text = usage.promptTokenCount - of(usage.promptTokensDetails, 'AUDIO') - cachedText;
  const outAudio = of(usage.responseTokensDetails, 'AUDIO');
  const outText = usage.responseTokenCount - outAudio + (usage.thoughtsTokenCount ?? 0);
  const perMillion = BigInt(text) * nano(LIVE_PRICES.text) + BigInt(cachedText) * nano(LIVE_PRICES.cachedText) + BigInt(audio) * nano(LIVE_PRICES.audio)
    + BigInt(cachedAudio) * nano(LIVE_PRICES.cachedAudio) + BigInt(outText) * nano(LIVE_PRICES.outText) + BigInt(outAudio) * nano(LIVE_PRICES.outAudio);
  return (perMillion + 999_999n) / 1_000_000n;
}

/** A live session opened with the `@google/genai` SDK's `ai.live.connect`, its messages and its close. */
export interface SdkLive {
  session: Session;
  messages: LiveServerMessage[];
  closed: Promise<{ code: number; reason: string }>;
  /** Resolves once `count` messages with usage metadata have arrived. */
  waitForUsage(count: number, timeoutMs?: number): Promise<void>;
  waitFor(check: (message: LiveServerMessage) => boolean, timeoutMs?: number): Promise<LiveServerMessage>;
}

export async function sdkLive(baseUrl: string, apiKey: string, model: string, config: LiveConnectConfig = { responseModalities: [Modality.AUDIO] }, apiVersion?: string): Promise<SdkLive> {
  const ai = new GoogleGenAI({ apiKey, httpOptions: { baseUrl, ...(apiVersion === undefined ? {} : { apiVersion }) } });
  const messages: LiveServerMessage[] = [];
  let resolveClosed: (value: { code: number; reason: string }) => void = () => undefined;
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    resolveClosed = resolve;
  });
  let isClosed = false;
  const session = await ai.live.connect({
    model,
    config,
    callbacks: {
      onmessage: (message) => messages.push(message),
      onerror: () => undefined,
      onclose: (event) => {
        isClosed = true;
        resolveClosed({ code: event.code, reason: event.reason });
      },
    },
  });
  const waitFor = async (check: (message: LiveServerMessage) => boolean, timeoutMs = 10_000): Promise<LiveServerMessage> => {
    for (let waited = 0; ; waited += 20) {
      const found = messages.find(check);
      if (found !== undefined) return found;
      if (waited > timeoutMs || isClosed) throw new Error(`no such message (${messages.map((message) => Object.keys(message).join('+')).join(', ')})`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  return {
    session,
    messages,
    closed,
    waitFor,
    async waitForUsage(count, timeoutMs = 10_000) {
      for (let waited = 0; messages.filter((message) => message.usageMetadata !== undefined).length < count; waited += 20) {
        if (waited > timeoutMs) throw new Error(`only ${messages.filter((message) => message.usageMetadata !== undefined).length} usage messages`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
  };
}

/** Connects with the SDK and reports how it failed: the close code and reason, or the error. */
export async function sdkRefusal(baseUrl: string, apiKey: string, model: string, apiVersion?: string): Promise<string> {
  try {
    const live = await sdkLive(baseUrl, apiKey, model, undefined, apiVersion);
    live.session.close();
    return 'opened';
  } catch (error) {
    return (error as Error).message;
  }
}
