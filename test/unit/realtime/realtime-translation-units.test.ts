/**
 * The realtime protocol translators as pure functions over parsed events: usage mapped so the bill is the same either
 * way, the session configuration both ways, and the lifecycle details the end-to-end tests do not reach (manual
 * turns, the setup queue, interruptions, transcriptions, output resampling, queued responses, upstream errors).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { usageOfLiveMetadata } from '../../../src/realtime/gemini-live-usage.js';
import { usageOfRealtimeResponse } from '../../../src/realtime/realtime-usage.js';
import { OpenAIClientOnGemini } from '../../../src/realtime/translation/openai-client-on-gemini.js';
import { GeminiClientOnOpenAI } from '../../../src/realtime/translation/gemini-client-on-openai.js';
import { MAX_QUEUED_BYTES } from '../../../src/realtime/translation/openai-on-gemini-state.js';
import { geminiUsageOfOpenAI, openAIUsageOfGemini } from '../../../src/realtime/translation/usage-mapping.js';
import { applySessionUpdate, defaultOpenAISession, geminiSetupOfSession, openAISessionOfSetup } from '../../../src/realtime/translation/session-config.js';
import type { Usage } from '../../../src/ir/usage.js';

/** What the bill depends on: uncached and cached input, all output, and the audio among them. */
function billed(usage: Usage | null): unknown {
  if (usage === null) return null;
  return { noCache: usage.input.noCache, cacheRead: usage.input.cacheRead, output: usage.output.total, audio: usage.audio ?? { input: 0, cacheRead: 0, output: 0 } };
}

const split = (total: number) => fc.integer({ min: 0, max: total });

const geminiUsage = fc.record({ text: fc.nat(5000), audio: fc.nat(5000), outText: fc.nat(3000), outAudio: fc.nat(3000), thoughts: fc.nat(500) }).chain((base) => fc.record({
  base: fc.constant(base),
  cachedText: split(base.text),
  cachedAudio: split(base.audio),
}));

const openAIUsage = fc.record({ text: fc.nat(5000), audio: fc.nat(5000), image: fc.nat(100), outText: fc.nat(3000), outAudio: fc.nat(3000) }).chain((base) => fc.record({
  base: fc.constant(base),
  cachedText: split(base.text),
  cachedAudio: split(base.audio),
}));

const frames = (translated: { toClient: string[] }): Array<Record<string, unknown>> => translated.toClient.map((frame) => JSON.parse(frame) as Record<string, unknown>);
const upstream = (translated: { toUpstream: string[] }): Array<Record<string, unknown>> => translated.toUpstream.map((frame) => JSON.parse(frame) as Record<string, unknown>);
const send = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));

describe('usage mapping', () => {
  it('bills Gemini usage metadata the same after it is written as OpenAI usage', () => {
    fc.assert(fc.property(geminiUsage, ({ base, cachedText, cachedAudio }) => {
      const metadata = {
        promptTokenCount: base.text + base.audio,
        cachedContentTokenCount: cachedText + cachedAudio,
        responseTokenCount: base.outText + base.outAudio,
        thoughtsTokenCount: base.thoughts,
        promptTokensDetails: [{ modality: 'TEXT', tokenCount: base.text }, { modality: 'AUDIO', tokenCount: base.audio }],
        cacheTokensDetails: [{ modality: 'TEXT', tokenCount: cachedText }, { modality: 'AUDIO', tokenCount: cachedAudio }],
        responseTokensDetails: [{ modality: 'TEXT', tokenCount: base.outText }, { modality: 'AUDIO', tokenCount: base.outAudio }],
      };
      expect(billed(usageOfRealtimeResponse(openAIUsageOfGemini(metadata)))).toEqual(billed(usageOfLiveMetadata(metadata)));
    }));
  });

  it('bills OpenAI usage the same after it is written as Gemini usage metadata', () => {
    fc.assert(fc.property(openAIUsage, ({ base, cachedText, cachedAudio }) => {
      const input = base.text + base.audio + base.image;
      const usage = {
        input_tokens: input,
        output_tokens: base.outText + base.outAudio,
        total_tokens: input + base.outText + base.outAudio,
        input_token_details: { text_tokens: base.text, audio_tokens: base.audio, image_tokens: base.image, cached_tokens: cachedText + cachedAudio, cached_tokens_details: { text_tokens: cachedText, audio_tokens: cachedAudio, image_tokens: 0 } },
        output_token_details: { text_tokens: base.outText, audio_tokens: base.outAudio },
      };
      expect(billed(usageOfLiveMetadata(geminiUsageOfOpenAI(usage)))).toEqual(billed(usageOfRealtimeResponse(usage)));
    }));
  });
});

describe('session configuration', () => {
  it('turns an OpenAI session into a Gemini setup: modality, instructions, tools, manual turns, transcription, a Gemini voice', () => {
    const config = applySessionUpdate(defaultOpenAISession(), {
      output_modalities: ['audio'],
      instructions: 'Be brief.',
      tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object' } }],
      audio: { input: { turn_detection: null, transcription: { model: 'whisper-1' } }, output: { voice: 'Kore' } },
    });
    if ('param' in config) throw new Error(config.message);
    expect(geminiSetupOfSession(config)).toEqual({
      generationConfig: { responseModalities: ['AUDIO'], speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: 'Kore' } } } },
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      tools: [{ functionDeclarations: [{ name: 'lookup', parametersJsonSchema: { type: 'object' } }] }],
      realtimeInputConfig: { automaticActivityDetection: { disabled: true } },
      inputAudioTranscription: {},
      outputAudioTranscription: {},
    });
    // OpenAI's own voices leave Gemini's default voice.
    const alloy = applySessionUpdate(defaultOpenAISession(), { audio: { output: { voice: 'alloy' } } });
    expect('param' in alloy ? null : geminiSetupOfSession(alloy).generationConfig).toEqual({ responseModalities: ['AUDIO'] });
  });

  it('refuses audio formats other than 24 kHz PCM16 and tools other than functions', () => {
    expect(applySessionUpdate(defaultOpenAISession(), { audio: { input: { format: { type: 'audio/pcmu' } } } })).toMatchObject({ param: 'session.audio.input.format' });
    expect(applySessionUpdate(defaultOpenAISession(), { tools: [{ type: 'mcp', server_label: 'x' }] })).toMatchObject({ param: 'session.tools[0]' });
  });

  it('turns a Gemini setup into an OpenAI session.update session', () => {
    expect(openAISessionOfSetup({
      model: 'models/x',
      generationConfig: { responseModalities: ['TEXT'], maxOutputTokens: 200, speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: 'Shimmer' } } } },
      systemInstruction: { parts: [{ text: 'One' }, { text: 'Two' }] },
      tools: [{ functionDeclarations: [{ name: 'lookup', description: 'Find', parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' }, days: { type: 'ARRAY', items: { type: 'INTEGER' } } }, required: ['city'] } }] }],
      realtimeInputConfig: { automaticActivityDetection: { disabled: true } },
      inputAudioTranscription: {},
    })).toEqual({
      type: 'realtime',
      output_modalities: ['text'],
      instructions: 'One\nTwo',
      tools: [{ type: 'function', name: 'lookup', description: 'Find', parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'array', items: { type: 'integer' } } }, required: ['city'] } }],
      max_output_tokens: 200,
      audio: { input: { format: { type: 'audio/pcm', rate: 24000 }, turn_detection: null, transcription: { model: 'gpt-4o-mini-transcribe' } }, output: { format: { type: 'audio/pcm', rate: 24000 }, voice: 'shimmer' } },
    });
  });
});

describe('an OpenAI client on Gemini', () => {
  function opened(): OpenAIClientOnGemini {
    const translator = new OpenAIClientOnGemini('voice', 'gemini-live');
    expect(frames(translator.start())[0]).toMatchObject({ type: 'session.created', session: { type: 'realtime', model: 'voice' } });
    return translator;
  }

  it('sends the setup with the first event that needs the model, queues the rest until setupComplete', () => {
    const translator = opened();
    expect(upstream(translator.fromClient(send({ type: 'session.update', session: { instructions: 'Hi' } })))).toEqual([]);
    const first = upstream(translator.fromClient(send({ type: 'input_audio_buffer.append', audio: Buffer.alloc(4800).toString('base64') })));
    expect(first).toEqual([{ setup: expect.objectContaining({ model: 'models/gemini-live', systemInstruction: { parts: [{ text: 'Hi' }] } }) as unknown }]);
    const ready = upstream(translator.fromUpstream(send({ setupComplete: {} })));
    expect(ready).toEqual([{ realtimeInput: { audio: { data: expect.any(String) as unknown, mimeType: 'audio/pcm;rate=16000' } } }]);
    expect(Buffer.from(String((ready[0]?.realtimeInput as { audio: { data: string } }).audio.data), 'base64').length).toBe(3200);
  });

  it('ends the session when too much is queued before setupComplete', () => {
    const translator = opened();
    const chunk = Buffer.alloc(1024 * 1024).toString('base64');
    let end: unknown;
    for (let index = 0; index < 20 && end === undefined; index += 1) end = translator.fromClient(send({ type: 'input_audio_buffer.append', audio: chunk })).end;
    expect(end).toMatchObject({ code: 1011 });
    expect(MAX_QUEUED_BYTES).toBeGreaterThan(0);
  });

  it('marks manual turns with activityStart / activityEnd, and refuses an empty commit', () => {
    const translator = opened();
    translator.fromClient(send({ type: 'session.update', session: { audio: { input: { turn_detection: null } } } }));
    expect(frames(translator.fromClient(send({ type: 'input_audio_buffer.commit' })))[0]).toMatchObject({ type: 'error', error: { code: 'input_audio_buffer_commit_empty' } });
    translator.fromClient(send({ type: 'input_audio_buffer.append', audio: Buffer.alloc(480).toString('base64') }));
    translator.fromUpstream(send({ setupComplete: {} }));
    translator.fromClient(send({ type: 'input_audio_buffer.append', audio: Buffer.alloc(480).toString('base64') }));
    const commit = translator.fromClient(send({ type: 'input_audio_buffer.commit' }));
    expect(upstream(commit)).toEqual([{ realtimeInput: { activityEnd: {} } }]);
    expect(frames(commit)[0]).toMatchObject({ type: 'input_audio_buffer.committed' });
    expect(translator.state.sentSetup).toContain('"automaticActivityDetection":{"disabled":true}');
    // Gemini answers an ended turn by itself: the caller's response.create adds nothing upstream.
    expect(upstream(translator.fromClient(send({ type: 'response.create' })))).toEqual([]);
  });

  it('writes an interrupted turn as a cancelled response with speech_started, and transcribes the input audio', () => {
    const translator = opened();
    translator.fromClient(send({ type: 'input_audio_buffer.append', audio: Buffer.alloc(48_000).toString('base64') }));
    translator.fromUpstream(send({ setupComplete: {} }));
    const committed = frames(translator.fromClient(send({ type: 'input_audio_buffer.commit' })))[0] as { item_id: string };
    const heard = frames(translator.fromUpstream(send({ serverContent: { inputTranscription: { text: 'hello' } } })));
    expect(heard).toEqual([expect.objectContaining({ type: 'conversation.item.input_audio_transcription.delta', item_id: committed.item_id, delta: 'hello' })]);
    const turn = frames(translator.fromUpstream(send({ serverContent: { modelTurn: { parts: [{ text: 'thinking', thought: true }, { inlineData: { mimeType: 'audio/pcm;rate=16000', data: Buffer.alloc(3200).toString('base64') } }] } } })));
    expect(turn.map((event) => event.type)).toEqual(['conversation.item.input_audio_transcription.completed', 'response.created', 'response.output_item.added', 'response.content_part.added', 'response.output_audio.delta']);
    expect(turn[0]).toMatchObject({ transcript: 'hello', usage: { type: 'duration', seconds: 1 } });
    // Gemini's 16 kHz answer is resampled to the caller's 24 kHz (1600 samples become 2399).
    expect(Buffer.from(String(turn[4]?.delta), 'base64').length).toBe(4798);
    const interrupted = frames(translator.fromUpstream(send({ serverContent: { interrupted: true } })));
    expect(interrupted).toEqual([expect.objectContaining({ type: 'input_audio_buffer.speech_started', audio_start_ms: 1000 })]);
    // Gemini ends the turn without usage first: the response stays open for it.
    expect(frames(translator.fromUpstream(send({ serverContent: { turnComplete: true } }))).map((event) => event.type)).not.toContain('response.done');
    const done = frames(translator.fromUpstream(send({ usageMetadata: { promptTokenCount: 40, responseTokenCount: 10, promptTokensDetails: [{ modality: 'AUDIO', tokenCount: 32 }] } })));
    expect(done.at(-1)).toMatchObject({ type: 'response.done', response: { status: 'cancelled', status_details: { type: 'cancelled', reason: 'turn_detected' }, usage: { input_tokens: 40, output_tokens: 10, input_token_details: { audio_tokens: 32, text_tokens: 8 } } } });
  });

  it('answers what Gemini cannot do with OpenAI error events and leaves the session open', () => {
    const translator = opened();
    expect(frames(translator.fromClient(send({ type: 'response.cancel' })))[0]).toMatchObject({ type: 'error', error: { code: 'response_cancel_not_active' } });
    expect(frames(translator.fromClient(send({ type: 'conversation.item.delete', item_id: 'x' })))[0]).toMatchObject({ type: 'error', error: { code: 'unsupported_event' } });
    expect(frames(translator.fromClient(send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_audio', audio: 'AAAA' }] } })))[0]).toMatchObject({ type: 'error', error: { code: 'unsupported_content' } });
    expect(frames(translator.fromClient(send({ type: 'session.update', session: { audio: { output: { format: { type: 'audio/pcma' } } } } })))[0]).toMatchObject({ type: 'error', error: { param: 'session.audio.output.format' } });
    expect(frames(translator.fromClient(Buffer.from('not json')))[0]).toMatchObject({ type: 'error', error: { code: 'invalid_json' } });
  });
});

describe('a Gemini client on OpenAI', () => {
  function opened(setup: Record<string, unknown> = { model: 'models/voice' }): GeminiClientOnOpenAI {
    const translator = new GeminiClientOnOpenAI(setup);
    expect(upstream(translator.start())[0]).toMatchObject({ type: 'session.update' });
    expect(frames(translator.fromUpstream(send({ type: 'session.created', session: {} })))).toEqual([]);
    expect(frames(translator.fromUpstream(send({ type: 'session.updated', session: {} })))).toEqual([{ setupComplete: {} }]);
    return translator;
  }

  it('asks for a response asked for while one runs as that one ends, and the money hold sees it as the upstream\'s next frame', () => {
    const translator = opened();
    expect(upstream(translator.fromClient(send({ realtimeInput: { text: 'one' } }))).map((event) => event.type)).toEqual(['conversation.item.create', 'response.create']);
    translator.fromUpstream(send({ type: 'response.created', response: {} }));
    expect(upstream(translator.fromClient(send({ realtimeInput: { text: 'two' } }))).map((event) => event.type)).toEqual(['conversation.item.create']);
    const done = translator.fromUpstream(send({ type: 'response.done', response: { status: 'completed', usage: { input_tokens: 3, output_tokens: 2 } } }));
    expect(upstream(done)).toEqual([{ type: 'response.create' }]);
    expect(frames(done)).toEqual([{ serverContent: { turnComplete: true }, usageMetadata: expect.objectContaining({ promptTokenCount: 3, responseTokenCount: 2 }) as unknown }]);
  });

  it('cancels an answer the caller speaks over (manual activity) and tells an interruption the upstream detected', () => {
    const translator = opened({ model: 'models/voice', realtimeInputConfig: { automaticActivityDetection: { disabled: true } } });
    translator.fromClient(send({ realtimeInput: { text: 'talk' } }));
    translator.fromUpstream(send({ type: 'response.created', response: {} }));
    translator.fromUpstream(send({ type: 'response.output_audio.delta', delta: 'AAAA' }));
    expect(upstream(translator.fromClient(send({ realtimeInput: { activityStart: {} } })))).toEqual([{ type: 'response.cancel' }]);
    expect(frames(translator.fromUpstream(send({ type: 'input_audio_buffer.speech_started', audio_start_ms: 0, item_id: 'i' })))).toEqual([{ serverContent: { interrupted: true } }]);
    const done = frames(translator.fromUpstream(send({ type: 'response.done', response: { status: 'cancelled', usage: { input_tokens: 1, output_tokens: 1 } } })));
    expect(done).toEqual([{ serverContent: { turnComplete: true }, usageMetadata: expect.any(Object) as unknown }]);
  });

  it('passes transcriptions only when the setup asked for them', () => {
    const plain = opened();
    expect(frames(plain.fromUpstream(send({ type: 'response.output_audio_transcript.delta', delta: 'hi' })))).toEqual([]);
    const asked = opened({ model: 'models/voice', inputAudioTranscription: {}, outputAudioTranscription: {} });
    expect(frames(asked.fromUpstream(send({ type: 'response.output_audio_transcript.delta', delta: 'hi' })))).toEqual([{ serverContent: { outputTranscription: { text: 'hi' } } }]);
    expect(frames(asked.fromUpstream(send({ type: 'conversation.item.input_audio_transcription.completed', item_id: 'a', transcript: 'said this' })))).toEqual([{ serverContent: { inputTranscription: { text: 'said this', finished: true } } }]);
  });

  it('resamples the caller\'s 16 kHz audio to 24 kHz across chunks', () => {
    const translator = opened();
    let bytes = 0;
    for (let index = 0; index < 4; index += 1) {
      for (const event of upstream(translator.fromClient(send({ realtimeInput: { audio: { data: Buffer.alloc(8000).toString('base64'), mimeType: 'audio/pcm;rate=16000' } } })))) bytes += Buffer.from(String(event.audio), 'base64').length;
    }
    expect(bytes).toBe(47_998);
  });

  it('goes on after an upstream error its own timing causes, and ends with Google\'s codes on any other', () => {
    const translator = opened();
    expect(translator.fromUpstream(send({ type: 'error', error: { type: 'invalid_request_error', code: 'input_audio_buffer_commit_empty', message: 'empty' } })).end).toBeUndefined();
    expect(translator.fromUpstream(send({ type: 'error', error: { type: 'invalid_request_error', code: 'invalid_value', message: 'bad' } })).end).toEqual({ code: 1007, reason: 'bad' });
    expect(translator.fromUpstream(send({ type: 'error', error: { type: 'server_error', code: null, message: 'oops' } })).end).toEqual({ code: 1011, reason: 'oops' });
    expect(translator.fromClient(send({ setup: { model: 'models/x' } })).end).toMatchObject({ code: 1007 });
    expect(translator.fromClient(Buffer.from('{')).end).toMatchObject({ code: 1007 });
  });
});

describe('an OpenAI client\'s per-response parameters on Gemini', () => {
  it('are refused (a Gemini response uses the session\'s configuration), metadata alone is taken', () => {
    const translator = new OpenAIClientOnGemini('voice', 'gemini-live');
    translator.start();
    expect(frames(translator.fromClient(send({ type: 'response.create', response: { instructions: 'Shout.' } })))[0]).toMatchObject({ type: 'error', error: { code: 'unsupported_response_parameter', param: 'response.instructions' } });
    expect(frames(translator.fromClient(send({ type: 'response.create', response: { conversation: 'none', input: [] } })))[0]).toMatchObject({ type: 'error', error: { param: 'response.conversation' } });
    const created = translator.fromClient(send({ type: 'response.create', response: { metadata: { topic: 'x' } } }));
    expect(frames(created)).toEqual([]);
    expect(upstream(created)[0]).toMatchObject({ setup: expect.any(Object) as unknown });
  });
});

describe('session configuration a translation cannot carry', () => {
  it('tells an OpenAI caller its client secret\'s configuration was not applied, and ends a Gemini caller\'s session over a non-function tool', () => {
    const started = frames(new OpenAIClientOnGemini('voice', 'g', { audio: { input: { format: { type: 'audio/pcmu' } } } }).start());
    expect(started.map((event) => event.type)).toEqual(['session.created', 'error']);
    expect(started[1]).toMatchObject({ error: { param: 'session.audio.input.format' } });
    expect(new GeminiClientOnOpenAI({ model: 'models/x', tools: [{ googleSearch: {} }] }).start().end).toMatchObject({ code: 1007, reason: expect.stringContaining('googleSearch') as unknown });
  });
});
