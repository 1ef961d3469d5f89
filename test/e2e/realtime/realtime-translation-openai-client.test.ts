/**
 * An OpenAI Realtime client (the `openai` SDK's WebSocket client, over TLS as it insists on wss:) on a model only a
 * Gemini channel serves: the gateway speaks Gemini Live to the mock upstream and translates both ways — text and
 * audio responses (PCM16 24 kHz in, 16 kHz to Gemini), a function call round trip, usage mapped token for token —
 * and charges each response exactly as the pass-through path does, from Gemini's usage metadata.
 */
import OpenAI from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import type { RealtimeServerEvent } from 'openai/resources/realtime/realtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedAccount, type SeededAccount } from '../../support/gateway-harness.js';
import { startTlsTerminator, type TlsTerminator } from '../../support/tls-terminator.js';
import { LIVE_MODEL, LIVE_UPSTREAM_MODEL, startLiveSetup, turnCostNano, type LiveSetup } from './gemini-live-support.js';
import { balanceNano, openRaw, usageRows } from './realtime-support.js';

let setup: LiveSetup;
let tls: TlsTerminator;

beforeAll(async () => {
  setup = await startLiveSetup();
  tls = await startTlsTerminator(setup.gateway.url);
});

afterAll(async () => {
  await tls?.close();
  await setup?.close();
});

interface SdkSession {
  rt: OpenAIRealtimeWS;
  events: RealtimeServerEvent[];
  waitFor(type: string, count?: number): Promise<void>;
  of<T extends RealtimeServerEvent['type']>(type: T): Array<Extract<RealtimeServerEvent, { type: T }>>;
  close(): Promise<void>;
}

async function sdkSession(account: SeededAccount): Promise<SdkSession> {
  const rt = new OpenAIRealtimeWS({ model: LIVE_MODEL, options: { ca: tls.ca } }, new OpenAI({ apiKey: account.key, baseURL: `${tls.url}/v1` }));
  const events: RealtimeServerEvent[] = [];
  rt.on('event', (event) => events.push(event));
  rt.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    rt.socket.once('open', () => resolve());
    rt.socket.once('error', reject);
  });
  return {
    rt,
    events,
    async waitFor(type, count = 1) {
      for (let waited = 0; events.filter((event) => event.type === type).length < count; waited += 20) {
        if (waited > 10_000) throw new Error(`no ${type} (${events.map((event) => event.type).join(', ')})`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    of: (type) => events.filter((event) => event.type === type) as never,
    async close() {
      const closed = new Promise((resolve) => rt.socket.once('close', resolve));
      rt.close();
      await closed;
    },
  };
}

const account = (): Promise<SeededAccount> => seedAccount(setup.gateway, { balanceUsd: 20 });

/** The upstream's client messages of one kind, in order. */
function upstreamMessages(kind: string): Array<Record<string, unknown>> {
  return (setup.upstream.connections.at(-1)?.messages ?? []).filter((message) => Object.keys(message)[0] === kind);
}

describe('an OpenAI Realtime client on a Gemini Live model', () => {
  it('gets a text response as OpenAI\'s event sequence, the session configuration sent as Gemini\'s setup, and is charged from Gemini\'s usage', async () => {
    const payer = await account();
    const before = await balanceNano(setup, payer);
    const session = await sdkSession(payer);
    await session.waitFor('session.created');
    session.rt.send({ type: 'session.update', session: { type: 'realtime', output_modalities: ['text'], instructions: 'Answer briefly.' } });
    await session.waitFor('session.updated');
    session.rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hello from the OpenAI side' }] } });
    session.rt.send({ type: 'response.create' });
    await session.waitFor('response.done');
    const setupMessage = setup.upstream.connections.at(-1)?.setup;
    expect(setupMessage).toMatchObject({ model: `models/${LIVE_UPSTREAM_MODEL}`, generationConfig: { responseModalities: ['TEXT'] }, systemInstruction: { parts: [{ text: 'Answer briefly.' }] } });
    expect(upstreamMessages('clientContent')).toEqual([{ clientContent: { turns: [{ role: 'user', parts: [{ text: 'Hello from the OpenAI side' }] }], turnComplete: true } }]);
    const types = session.events.map((event) => event.type);
    const lifecycle = ['response.created', 'response.output_item.added', 'response.content_part.added', 'response.output_text.delta', 'response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.done'];
    expect(types.filter((type) => lifecycle.includes(type))).toEqual(['response.created', 'response.output_item.added', 'response.content_part.added', 'response.output_text.delta', 'response.output_text.delta', 'response.output_text.delta', 'response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.done']);
    expect(session.of('response.output_text.done')[0]?.text).toBe('word0 word1 word2 ');
    const usage = setup.upstream.usages.at(-1);
    if (usage === undefined) throw new Error('no usage');
    const done = session.of('response.done')[0];
    expect(done?.response.status).toBe('completed');
    expect(done?.response.usage).toMatchObject({ input_tokens: usage.promptTokenCount, output_tokens: usage.responseTokenCount, input_token_details: { audio_tokens: 0 }, output_token_details: { text_tokens: usage.responseTokenCount, audio_tokens: 0 } });
    expect(done?.response.output?.[0]).toMatchObject({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'word0 word1 word2 ' }] });
    await session.close();
    expect(before - (await balanceNano(setup, payer))).toBe(turnCostNano(usage));
    const rows = await usageRows(setup, payer);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ model: LIVE_MODEL, protocol: 'openai-realtime', endpoint: '/v1/realtime', status: 200 });
  });

  it('sends 24 kHz audio to Gemini as 16 kHz and streams Gemini\'s 24 kHz answer back as output_audio deltas with its transcript events', async () => {
    const payer = await account();
    const before = await balanceNano(setup, payer);
    const session = await sdkSession(payer);
    await session.waitFor('session.created');
    session.rt.send({ type: 'session.update', session: { type: 'realtime', audio: { input: { transcription: { model: 'gpt-4o-transcribe' } } } } });
    // One second of 24 kHz PCM16, sent in three appends.
    for (let index = 0; index < 3; index += 1) session.rt.send({ type: 'input_audio_buffer.append', audio: Buffer.alloc(16_000, 3).toString('base64') });
    session.rt.send({ type: 'input_audio_buffer.commit' });
    session.rt.send({ type: 'response.create' });
    await session.waitFor('response.done');
    const audio = upstreamMessages('realtimeInput').flatMap((message) => {
      const input = message.realtimeInput as { audio?: { data: string; mimeType: string } };
      return input.audio === undefined ? [] : [input.audio];
    });
    expect(new Set(audio.map((blob) => blob.mimeType))).toEqual(new Set(['audio/pcm;rate=16000']));
    // 24 000 samples become 16 000: one second at 16 kHz.
    expect(audio.reduce((sum, blob) => sum + Buffer.from(blob.data, 'base64').length, 0)).toBe(32_000);
    expect(upstreamMessages('realtimeInput').at(-1)).toEqual({ realtimeInput: { audioStreamEnd: true } });
    expect(session.of('input_audio_buffer.committed')).toHaveLength(1);
    const deltas = session.of('response.output_audio.delta');
    expect(deltas).toHaveLength(3);
    for (const delta of deltas) expect(Buffer.from(delta.delta, 'base64').length).toBe(4800);
    expect(session.of('response.content_part.added')[0]?.part).toEqual({ type: 'audio', transcript: '' });
    expect(session.of('response.output_audio.done')).toHaveLength(1);
    // Gemini's output transcription is the answer's transcript; its input transcription the committed item's.
    expect(session.of('response.output_audio_transcript.delta').map((event) => event.delta).join('')).toBe('word0 word1 word2 ');
    expect(session.of('response.output_audio_transcript.done')[0]?.transcript).toBe('word0 word1 word2 ');
    expect(setup.upstream.connections.at(-1)?.setup).toMatchObject({ inputAudioTranscription: {}, outputAudioTranscription: {} });
    const committed = session.of('input_audio_buffer.committed')[0];
    expect(session.of('conversation.item.added').map((event) => event.item)).toContainEqual(expect.objectContaining({ id: committed?.item_id, type: 'message', role: 'user' }));
    expect(session.of('conversation.item.input_audio_transcription.delta')[0]).toMatchObject({ item_id: committed?.item_id, delta: 'heard 32000 bytes' });
    expect(session.of('conversation.item.input_audio_transcription.completed')[0]).toMatchObject({ item_id: committed?.item_id, transcript: 'heard 32000 bytes', usage: { type: 'duration', seconds: 1 } });
    // The response.create after the commit is the answer Gemini was already giving: one response, no error.
    expect(session.of('response.created')).toHaveLength(1);
    expect(session.of('error')).toHaveLength(0);
    const usage = setup.upstream.usages.at(-1);
    if (usage === undefined) throw new Error('no usage');
    const done = session.of('response.done')[0];
    expect(done?.response.usage?.input_token_details?.audio_tokens).toBe(32);
    expect(done?.response.usage?.output_token_details?.audio_tokens).toBe(usage.responseTokenCount);
    await session.close();
    expect(before - (await balanceNano(setup, payer))).toBe(turnCostNano(usage));
  });

  it('runs a function call round trip: Gemini\'s toolCall is a function_call item, the function_call_output goes back as toolResponse', async () => {
    const payer = await account();
    const session = await sdkSession(payer);
    await session.waitFor('session.created');
    session.rt.send({ type: 'session.update', session: { type: 'realtime', output_modalities: ['text'], tools: [{ type: 'function', name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } }] } });
    session.rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Please call get_weather for Paris' }] } });
    session.rt.send({ type: 'response.create' });
    await session.waitFor('response.done');
    expect(setup.upstream.connections.at(-1)?.setup).toMatchObject({ tools: [{ functionDeclarations: [{ name: 'get_weather', description: 'Weather of a city', parametersJsonSchema: { type: 'object' } }] }] });
    const call = session.of('response.function_call_arguments.done')[0];
    expect(call).toMatchObject({ name: 'get_weather', arguments: JSON.stringify({ city: 'Paris' }) });
    expect(session.of('response.output_item.done')[0]?.item).toMatchObject({ type: 'function_call', name: 'get_weather', call_id: call?.call_id, arguments: JSON.stringify({ city: 'Paris' }) });
    session.rt.send({ type: 'conversation.item.create', item: { type: 'function_call_output', call_id: call?.call_id ?? '', output: JSON.stringify({ temperature: 21 }) } });
    session.rt.send({ type: 'response.create' });
    await session.waitFor('response.done', 2);
    expect(upstreamMessages('toolResponse')).toEqual([{ toolResponse: { functionResponses: [{ id: call?.call_id, name: 'get_weather', response: { temperature: 21 } }] } }]);
    expect(session.of('response.output_text.done')[0]?.text).toBe('word0 word1 word2 ');
    expect(session.of('error')).toHaveLength(0);
    await session.close();
    const usages = setup.upstream.usages.slice(-2);
    expect((await usageRows(setup, payer)).reduce((sum, row) => sum + BigInt(Math.round(row.cost_usd * 1e9)), 0n)).toBe(usages.reduce((sum, usage) => sum + turnCostNano(usage), 0n));
  });

  it('charges each of three responses exactly, as it happens, with cached tokens mapped', async () => {
    const payer = await account();
    const before = await balanceNano(setup, payer);
    const session = await sdkSession(payer);
    await session.waitFor('session.created');
    const charges: bigint[] = [];
    for (let index = 1; index <= 3; index += 1) {
      session.rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: `Question number ${index}, please answer.` }] } });
      session.rt.send({ type: 'input_audio_buffer.append', audio: Buffer.alloc(24_000 * index, 5).toString('base64') });
      session.rt.send({ type: 'input_audio_buffer.commit' });
      session.rt.send({ type: 'response.create' });
      await session.waitFor('response.done', index);
      const usage = setup.upstream.usages.at(-1);
      if (usage === undefined) throw new Error('no usage');
      charges.push(turnCostNano(usage));
      expect(await balanceNano(setup, payer)).toBe(before - charges.reduce((sum, charge) => sum + charge, 0n));
      const done = session.of('response.done')[index - 1];
      expect(done?.response.usage?.input_token_details?.cached_tokens).toBe(usage.cachedContentTokenCount ?? 0);
    }
    expect(session.of('response.created')).toHaveLength(3);
    await session.close();
    const rows = (await usageRows(setup, payer)).sort((left, right) => left.request_id.localeCompare(right.request_id));
    expect(rows).toHaveLength(3);
    expect(rows.map((row) => BigInt(Math.round(row.cost_usd * 1e9)))).toEqual(charges);
    expect(rows[1]?.cached_tokens).toBeGreaterThan(0);
  });

  it('refuses a session.update that would change the setup once the conversation started, and goes on', async () => {
    const payer = await account();
    const session = await sdkSession(payer);
    await session.waitFor('session.created');
    session.rt.send({ type: 'session.update', session: { type: 'realtime', output_modalities: ['text'] } });
    session.rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] } });
    session.rt.send({ type: 'response.create' });
    await session.waitFor('response.done');
    session.rt.send({ type: 'session.update', session: { type: 'realtime', instructions: 'Now be verbose.' } });
    await session.waitFor('error');
    expect(session.of('error')[0]?.error).toMatchObject({ type: 'invalid_request_error', code: 'session_already_started', param: 'session' });
    // An update that changes nothing the setup carries is confirmed.
    session.rt.send({ type: 'session.update', session: { type: 'realtime', output_modalities: ['text'] } });
    await session.waitFor('session.updated', 2);
    session.rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Again' }] } });
    session.rt.send({ type: 'response.create' });
    await session.waitFor('response.done', 2);
    expect(setup.upstream.connections.at(-1)?.received.filter((kind) => kind === 'setup')).toHaveLength(1);
    await session.close();
  });

  it('cancels a response: the rest of Gemini\'s answer is dropped, response.done says cancelled, and what Gemini used is charged', async () => {
    setup.upstream.setOptions({ chunks: 20, chunkDelayMs: 30 });
    try {
      const payer = await account();
      const before = await balanceNano(setup, payer);
      const session = await sdkSession(payer);
      await session.waitFor('session.created');
      session.rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Tell me a long story' }] } });
      session.rt.send({ type: 'response.create' });
      await session.waitFor('response.output_audio.delta', 2);
      session.rt.send({ type: 'response.cancel' });
      await session.waitFor('response.done');
      const done = session.of('response.done')[0];
      expect(done?.response.status).toBe('cancelled');
      expect(done?.response.status_details).toMatchObject({ type: 'cancelled', reason: 'client_cancelled' });
      expect(session.of('response.output_audio.delta').length).toBeLessThan(20);
      const usage = setup.upstream.usages.at(-1);
      if (usage === undefined) throw new Error('no usage');
      await session.close();
      expect(before - (await balanceNano(setup, payer))).toBe(turnCostNano(usage));
    } finally {
      setup.upstream.setOptions({ chunks: 3, chunkDelayMs: 0 });
    }
  });

  it('takes a client secret\'s session configuration (a browser\'s session) into Gemini\'s setup', async () => {
    const payer = await account();
    const client = new OpenAI({ apiKey: payer.key, baseURL: setup.gateway.baseURL });
    const secret = await client.realtime.clientSecrets.create({ session: { type: 'realtime', model: LIVE_MODEL, instructions: 'Answer in one sentence.', output_modalities: ['text'] } });
    const session = await openRaw(`${setup.gateway.url.replace(/^http/, 'ws')}/v1/realtime?model=${LIVE_MODEL}`, { protocols: ['realtime', `openai-insecure-api-key.${secret.value}`], headers: { origin: 'https://app.example.com' } });
    expect(await session.next('session.created')).toMatchObject({ session: { instructions: 'Answer in one sentence.', output_modalities: ['text'] } });
    session.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] } });
    session.send({ type: 'response.create' });
    await session.next('response.done');
    expect(setup.upstream.connections.at(-1)?.setup).toMatchObject({ systemInstruction: { parts: [{ text: 'Answer in one sentence.' }] }, generationConfig: { responseModalities: ['TEXT'] } });
    session.socket.close();
    await session.closed;
    expect(await usageRows(setup, payer)).toHaveLength(1);
  });

  it('refuses the beta protocol before the handshake when the model needs translation', async () => {
    const payer = await account();
    const refused = await openRaw(`${setup.gateway.url.replace(/^http/, 'ws')}/v1/realtime?model=${LIVE_MODEL}`, { key: payer.key, headers: { 'openai-beta': 'realtime=v1' } }).then(() => null, (error: { status: number; body: { error: { code: string; message: string } } }) => [error.status, error.body.error.message]);
    expect(refused?.[0]).toBe(400);
    expect(String(refused?.[1])).toContain('Gemini Live');
  });

  it('ends the session with OpenAI\'s error event and close 1008 before a response the balance cannot hold', async () => {
    // The first response's hold (4 096 output audio tokens at $12 per million) and 10 µUSD: the first response is
    // admitted and charged, the second's hold (the conversation so far on top) is not.
    const payer = await seedAccount(setup.gateway, { balanceUsd: 0.049162 });
    const session = await sdkSession(payer);
    await session.waitFor('session.created');
    session.rt.send({ type: 'session.update', session: { type: 'realtime', output_modalities: ['text'] } });
    session.rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'First' }] } });
    session.rt.send({ type: 'response.create' });
    await session.waitFor('response.done');
    session.rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Second' }] } });
    session.rt.send({ type: 'response.create' });
    await session.waitFor('error');
    expect(session.of('error')[0]?.error).toMatchObject({ type: 'invalid_request_error', code: 'insufficient_balance' });
    const closed = await new Promise<number>((resolve) => {
      if (session.rt.socket.readyState === session.rt.socket.CLOSED) resolve(1008);
      else session.rt.socket.once('close', (code: number) => resolve(code));
    });
    expect(closed).toBe(1008);
    expect(session.of('response.done')).toHaveLength(1);
    expect(setup.upstream.connections.at(-1)?.received.filter((kind) => kind === 'clientContent')).toHaveLength(1);
    expect(await usageRows(setup, payer)).toHaveLength(1);
  });
});
