/**
 * A Gemini Live client (`@google/genai`'s `live.connect`) on a model only an OpenAI Realtime channel serves: the
 * gateway turns the setup into the session's `session.update`, the client's turns, 16 kHz audio (to 24 kHz) and tool
 * responses into OpenAI client events, and OpenAI's response events into `serverContent` / `toolCall` /
 * `usageMetadata`; each response is charged exactly from OpenAI's `response.done` usage.
 */
import { Modality, type LiveServerMessage } from '@google/genai';
import OpenAI from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import type { RealtimeServerEvent } from 'openai/resources/realtime/realtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTlsTerminator, type TlsTerminator } from '../../support/tls-terminator.js';
import { PCM16_BYTES_PER_TOKEN } from '../../support/mock-openai-realtime.js';
import { sdkLive } from './gemini-live-support.js';
import { balanceNano, MODEL, newAccount, responseCostNano, startRealtimeSetup, UPSTREAM_MODEL, usageRows, type RealtimeSetup } from './realtime-support.js';

let setup: RealtimeSetup;
let upstreamTls: TlsTerminator;

beforeAll(async () => {
  setup = await startRealtimeSetup();
  upstreamTls = await startTlsTerminator(setup.upstream.url);
});

afterAll(async () => {
  await upstreamTls?.close();
  await setup?.close();
});

const WEATHER_TOOL = { functionDeclarations: [{ name: 'get_weather', description: 'Weather of a city', parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } } } }] };

/** The upstream's client events of one type, in order. */
function upstreamEvents(type: string): Array<Record<string, unknown>> {
  return (setup.upstream.connections.at(-1)?.events ?? []).filter((event) => event.type === type);
}

const usageMessages = (messages: LiveServerMessage[]): LiveServerMessage[] => messages.filter((message) => message.usageMetadata !== undefined);

describe('the mock OpenAI Realtime upstream', () => {
  it('answers a text session and calls a declared function as the SDK expects when the SDK connects to it directly', async () => {
    const rt = new OpenAIRealtimeWS({ model: UPSTREAM_MODEL, options: { ca: upstreamTls.ca } }, new OpenAI({ apiKey: 'sk-upstream-test', baseURL: `${upstreamTls.url}/v1` }));
    const events: RealtimeServerEvent[] = [];
    rt.on('event', (event) => events.push(event));
    rt.on('error', () => undefined);
    await new Promise<void>((resolve, reject) => {
      rt.socket.once('open', () => resolve());
      rt.socket.once('error', reject);
    });
    const waitFor = async (type: string, count: number): Promise<void> => {
      for (let waited = 0; events.filter((event) => event.type === type).length < count; waited += 20) {
        if (waited > 10_000) throw new Error(`no ${type}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    rt.send({ type: 'session.update', session: { type: 'realtime', output_modalities: ['text'], tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object' } }] } });
    rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'call get_weather' }] } });
    rt.send({ type: 'response.create' });
    await waitFor('response.done', 1);
    const call = events.find((event) => event.type === 'response.function_call_arguments.done');
    expect(call?.type === 'response.function_call_arguments.done' && call.name).toBe('get_weather');
    rt.send({ type: 'conversation.item.create', item: { type: 'function_call_output', call_id: call?.type === 'response.function_call_arguments.done' ? call.call_id : '', output: '{"temperature":21}' } });
    rt.send({ type: 'response.create' });
    await waitFor('response.done', 2);
    expect(events.filter((event) => event.type === 'response.output_text.delta')).toHaveLength(3);
    expect(events.some((event) => event.type === 'response.output_audio.delta')).toBe(false);
    rt.close();
  });
});

describe('a Gemini Live client on an OpenAI Realtime model', () => {
  it('gets a text turn as serverContent with usageMetadata from OpenAI\'s usage; its setup is the session.update; charged exactly', async () => {
    const account = await newAccount(setup);
    const before = await balanceNano(setup, account);
    const live = await sdkLive(setup.gateway.url, account.key, MODEL, { responseModalities: [Modality.TEXT], systemInstruction: 'Answer briefly.' });
    await live.waitFor((message) => message.setupComplete !== undefined);
    live.session.sendClientContent({ turns: [{ role: 'user', parts: [{ text: 'Hello from the Gemini side' }] }], turnComplete: true });
    await live.waitForUsage(1);
    const update = upstreamEvents('session.update')[0];
    expect(update).toMatchObject({ session: { type: 'realtime', output_modalities: ['text'], instructions: 'Answer briefly.' } });
    expect(upstreamEvents('conversation.item.create')[0]).toMatchObject({ item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hello from the Gemini side' }] } });
    expect(upstreamEvents('response.create')).toHaveLength(1);
    const text = live.messages.flatMap((message) => message.serverContent?.modelTurn?.parts ?? []).map((part) => part.text ?? '').join('');
    expect(text).toBe('word0 word1 word2 ');
    const usage = setup.upstream.usages.at(-1);
    if (usage === undefined) throw new Error('no usage');
    const final = usageMessages(live.messages)[0];
    expect(final?.serverContent?.turnComplete).toBe(true);
    expect(final?.usageMetadata).toMatchObject({ promptTokenCount: usage.input_tokens, responseTokenCount: usage.output_tokens, totalTokenCount: usage.total_tokens });
    expect(live.messages.some((message) => message.serverContent?.generationComplete === true)).toBe(true);
    live.session.close();
    await live.closed;
    expect(before - (await balanceNano(setup, account))).toBe(responseCostNano(usage));
    expect((await usageRows(setup, account))[0]).toMatchObject({ model: MODEL, protocol: 'gemini-live', status: 200 });
  });

  it('sends 16 kHz audio to OpenAI as 24 kHz, commits it at audioStreamEnd, and streams the 24 kHz answer with its output transcription', async () => {
    const account = await newAccount(setup);
    const before = await balanceNano(setup, account);
    const live = await sdkLive(setup.gateway.url, account.key, MODEL, { responseModalities: [Modality.AUDIO], outputAudioTranscription: {}, inputAudioTranscription: {} });
    // One second at 16 kHz, in two chunks.
    for (let index = 0; index < 2; index += 1) live.session.sendRealtimeInput({ audio: { data: Buffer.alloc(16_000, 9).toString('base64'), mimeType: 'audio/pcm;rate=16000' } });
    live.session.sendRealtimeInput({ audioStreamEnd: true });
    await live.waitForUsage(1);
    const appended = upstreamEvents('input_audio_buffer.append').reduce((sum, event) => sum + Buffer.from(String(event.audio), 'base64').length, 0);
    // 16 000 samples become 23 999 (the last output sample falls on the last input sample).
    expect(appended).toBe(47_998);
    expect(upstreamEvents('input_audio_buffer.commit')).toHaveLength(1);
    const audio = live.messages.flatMap((message) => message.serverContent?.modelTurn?.parts ?? []).filter((part) => part.inlineData !== undefined);
    expect(audio).toHaveLength(3);
    for (const part of audio) {
      expect(part.inlineData?.mimeType).toBe('audio/pcm;rate=24000');
      expect(Buffer.from(part.inlineData?.data ?? '', 'base64').length).toBe(4800);
    }
    expect(live.messages.map((message) => message.serverContent?.outputTranscription?.text ?? '').join('')).toBe('word0 word1 word2 ');
    expect(live.messages.find((message) => message.serverContent?.inputTranscription !== undefined)?.serverContent?.inputTranscription).toEqual({ text: 'heard 47998 bytes', finished: true });
    expect(upstreamEvents('session.update')[0]).toMatchObject({ session: { audio: { input: { transcription: { model: 'gpt-4o-mini-transcribe' } } } } });
    const usage = setup.upstream.usages.at(-1);
    if (usage === undefined) throw new Error('no usage');
    expect(usage.input_token_details.audio_tokens).toBe(Math.floor(47_998 / PCM16_BYTES_PER_TOKEN));
    expect(usageMessages(live.messages)[0]?.usageMetadata?.promptTokensDetails).toEqual(expect.arrayContaining([{ modality: 'AUDIO', tokenCount: usage.input_token_details.audio_tokens }]));
    live.session.close();
    await live.closed;
    expect(before - (await balanceNano(setup, account))).toBe(responseCostNano(usage));
  });

  it('runs a function call round trip: OpenAI\'s function call is a toolCall, the toolResponse goes back as function_call_output', async () => {
    const account = await newAccount(setup);
    const live = await sdkLive(setup.gateway.url, account.key, MODEL, { responseModalities: [Modality.TEXT], tools: [WEATHER_TOOL] });
    live.session.sendClientContent({ turns: [{ role: 'user', parts: [{ text: 'Please call get_weather for Paris' }] }], turnComplete: true });
    const toolCall = await live.waitFor((message) => message.toolCall !== undefined);
    const call = toolCall.toolCall?.functionCalls?.[0];
    expect(call).toMatchObject({ name: 'get_weather', args: { city: 'Paris' } });
    expect(upstreamEvents('session.update')[0]).toMatchObject({ session: { tools: [{ type: 'function', name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object' } }] } });
    await live.waitForUsage(1);
    live.session.sendToolResponse({ functionResponses: [{ id: call?.id ?? '', name: 'get_weather', response: { temperature: 21 } }] });
    await live.waitForUsage(2);
    expect(upstreamEvents('conversation.item.create').at(-1)).toMatchObject({ item: { type: 'function_call_output', call_id: call?.id, output: JSON.stringify({ temperature: 21 }) } });
    // The call's turn ends with its usage alone; the answer's with turnComplete.
    const usages = usageMessages(live.messages);
    expect(usages[0]?.serverContent?.turnComplete).toBeUndefined();
    expect(usages[1]?.serverContent?.turnComplete).toBe(true);
    live.session.close();
    await live.closed;
    const charged = (await usageRows(setup, account)).reduce((sum, row) => sum + BigInt(Math.round(row.cost_usd * 1e9)), 0n);
    expect(charged).toBe(setup.upstream.usages.slice(-2).reduce((sum, usage) => sum + responseCostNano(usage), 0n));
  });

  it('charges each of three turns exactly, as it happens', async () => {
    const account = await newAccount(setup);
    const before = await balanceNano(setup, account);
    const live = await sdkLive(setup.gateway.url, account.key, MODEL);
    const charges: bigint[] = [];
    for (let index = 1; index <= 3; index += 1) {
      live.session.sendClientContent({ turns: [{ role: 'user', parts: [{ text: `Question number ${index}, please answer.` }] }], turnComplete: true });
      await live.waitForUsage(index);
      const usage = setup.upstream.usages.at(-1);
      if (usage === undefined) throw new Error('no usage');
      charges.push(responseCostNano(usage));
      expect(await balanceNano(setup, account)).toBe(before - charges.reduce((sum, charge) => sum + charge, 0n));
    }
    live.session.close();
    await live.closed;
    const rows = (await usageRows(setup, account)).sort((left, right) => left.request_id.localeCompare(right.request_id));
    expect(rows.map((row) => BigInt(Math.round(row.cost_usd * 1e9)))).toEqual(charges);
  });

  it('ends the session with 1007 for input OpenAI Realtime cannot take (video), as Google does', async () => {
    const account = await newAccount(setup);
    const live = await sdkLive(setup.gateway.url, account.key, MODEL);
    live.session.sendRealtimeInput({ video: { data: Buffer.alloc(10).toString('base64'), mimeType: 'image/jpeg' } });
    const closed = await live.closed;
    expect(closed.code).toBe(1007);
    expect(closed.reason).toContain('Video input');
  });

  it('closes with 1008 and the reason before a turn the balance cannot hold, as Google ends sessions', async () => {
    // The first response's hold (4 096 output audio tokens at $64 per million) and 10 µUSD.
    const account = await newAccount(setup, 0.262154);
    const live = await sdkLive(setup.gateway.url, account.key, MODEL);
    live.session.sendClientContent({ turns: [{ role: 'user', parts: [{ text: 'First' }] }], turnComplete: true });
    await live.waitForUsage(1);
    live.session.sendClientContent({ turns: [{ role: 'user', parts: [{ text: 'Second' }] }], turnComplete: true });
    const closed = await live.closed;
    expect(closed.code).toBe(1008);
    expect(closed.reason).toMatch(/balance/i);
    expect(upstreamEvents('response.create')).toHaveLength(1);
    expect(await usageRows(setup, account)).toHaveLength(1);
  });
});
