/** A gateway in front of the mock OpenAI Realtime upstream, with a realtime model priced for text and audio tokens. */
import WebSocket from 'ws';
import type { Clock } from '../../../src/shared/clock.js';
import { flushWrites, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockOpenAIRealtime, type MockOpenAIRealtime, type MockRealtimeOptions, type RealtimeUsage } from '../../support/mock-openai-realtime.js';

/** gpt-realtime's prices in USD per million tokens, as the bundled catalog lists them. */
export const PRICES = { text: 4, cachedText: 0.4, audio: 32, cachedAudio: 0.4, outText: 16, outAudio: 64 };
export const MODEL = 'voice';
export const UPSTREAM_MODEL = 'gpt-realtime';

export interface RealtimeSetup {
  gateway: TestGateway;
  upstream: MockOpenAIRealtime;
  /** `ws://127.0.0.1:<port>/v1/realtime?model=voice` */
  url: string;
  close(): Promise<void>;
}

export async function startRealtimeSetup(env: Record<string, string> = {}, mock: MockRealtimeOptions = {}, channels = 1, clock?: Clock): Promise<RealtimeSetup> {
  const upstream = await startMockOpenAIRealtime(mock);
  const gateway = await startTestGateway({ env, ...(clock === undefined ? {} : { clock }) });
  const model = await gateway.admin('POST', '/admin/models', {
    id: MODEL,
    kind: 'chat',
    pricing: { input_per_mtok: PRICES.text, cached_input_per_mtok: PRICES.cachedText, output_per_mtok: PRICES.outText, input_audio_per_mtok: PRICES.audio, cached_input_audio_per_mtok: PRICES.cachedAudio, output_audio_per_mtok: PRICES.outAudio },
  });
  if (model.status !== 201) throw new Error(JSON.stringify(model.body));
  for (let index = 0; index < channels; index += 1) {
    const channel = await gateway.admin('POST', '/admin/channels', { name: `realtime-${index}`, type: 'openai', base_url: upstream.baseUrl, api_key: 'sk-upstream-test', models: { [MODEL]: UPSTREAM_MODEL } });
    if (channel.status !== 201) throw new Error(JSON.stringify(channel.body));
  }
  await gateway.gateway.services.catalog.reload();
  return {
    gateway,
    upstream,
    url: `${gateway.url.replace(/^http/, 'ws')}/v1/realtime?model=${MODEL}`,
    async close() {
      await gateway.close();
      await upstream.close();
    },
  };
}

export function newAccount(setup: { gateway: TestGateway }, balanceUsd = 20, key: Record<string, unknown> = {}): Promise<SeededAccount> {
  return seedAccount(setup.gateway, { balanceUsd, key });
}

/** What one response costs in nano-USD, computed from its usage as OpenAI prices it (rounded up once). */
export function responseCostNano(usage: RealtimeUsage): bigint {
  const nano = (usd: number): bigint => BigInt(Math.round(usd * 1e9));
  const cachedAudio = usage.input_token_details.cached_tokens_details.audio_tokens;
  const cachedText = usage.input_token_details.cached_tokens - cachedAudio;
  const audio = usage.input_token_details.audio_tokens - cachedAudio;
  const text = usage.input_tokens - usage.input_token_details.audio_tokens - cachedText;
  const perMillion = BigInt(text) * nano(PRICES.text) + BigInt(cachedText) * nano(PRICES.cachedText) + BigInt(audio) * nano(PRICES.audio)
    + BigInt(cachedAudio) * nano(PRICES.cachedAudio) + BigInt(usage.output_token_details.text_tokens) * nano(PRICES.outText) + BigInt(usage.output_token_details.audio_tokens) * nano(PRICES.outAudio);
  return (perMillion + 999_999n) / 1_000_000n;
}

export async function balanceNano(setup: { gateway: TestGateway }, account: SeededAccount): Promise<bigint> {
  await flushWrites(setup.gateway);
  const record = await setup.gateway.gateway.services.storage.accounts.getById(account.accountId);
  if (record === null) throw new Error('no account');
  return record.balanceNano;
}

export interface UsageRow {
  request_id: string;
  model: string | null;
  protocol: string;
  endpoint: string;
  status: number;
  error_code: string | null;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  cost_usd: number;
}

export async function usageRows(setup: { gateway: TestGateway }, account: SeededAccount): Promise<UsageRow[]> {
  await flushWrites(setup.gateway);
  const usage = await setup.gateway.admin<{ data: UsageRow[] }>('GET', `/admin/usage?key_id=${account.keyId}&limit=200`);
  return usage.body.data;
}

/** A raw WebSocket client to the gateway that records every event it receives. */
export interface RawSession {
  socket: WebSocket;
  events: Array<Record<string, unknown> & { type: string }>;
  closed: Promise<{ code: number; reason: string }>;
  requestId: string | null;
  /** The headers of the handshake's answer (the admission's rate-limit headers among them). */
  upgradeHeaders: Record<string, string | string[] | undefined>;
  /** Resolves with the next event of `type` (one already received counts once). */
  next(type: string, timeoutMs?: number): Promise<Record<string, unknown> & { type: string }>;
  send(event: Record<string, unknown>): void;
}

export function openRaw(url: string, options: { key?: string; protocols?: string[]; headers?: Record<string, string> } = {}): Promise<RawSession> {
  const socket = new WebSocket(url, options.protocols ?? [], { headers: { ...(options.key === undefined ? {} : { authorization: `Bearer ${options.key}` }), ...options.headers } });
  const events: RawSession['events'] = [];
  const consumed = new Set<number>();
  const waiters: Array<() => void> = [];
  let requestId: string | null = null;
  let upgradeHeaders: RawSession['upgradeHeaders'] = {};
  socket.on('upgrade', (response) => {
    requestId = String(response.headers['x-request-id'] ?? '');
    upgradeHeaders = response.headers;
  });
  socket.on('message', (data) => {
    events.push(JSON.parse(data.toString()) as RawSession['events'][number]);
    for (const wake of waiters.splice(0)) wake();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => socket.on('close', (code, reason) => {
    resolve({ code, reason: reason.toString() });
    for (const wake of waiters.splice(0)) wake();
  }));
  const session: RawSession = {
    socket,
    events,
    closed,
    get requestId() {
      return requestId;
    },
    get upgradeHeaders() {
      return upgradeHeaders;
    },
    async next(type, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const index = events.findIndex((event, at) => event.type === type && !consumed.has(at));
        if (index >= 0) {
          consumed.add(index);
          return events[index] as RawSession['events'][number];
        }
        if (socket.readyState === socket.CLOSED || Date.now() > deadline) throw new Error(`no ${type} event (got ${events.map((event) => event.type).join(', ')})`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 50);
        });
      }
    },
    send(event) {
      socket.send(JSON.stringify(event));
    },
  };
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve(session));
    socket.once('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => reject(Object.assign(new Error(`refused ${response.statusCode}`), { status: response.statusCode, body: JSON.parse(body || '{}') as unknown })));
    });
    socket.once('error', reject);
  });
}
