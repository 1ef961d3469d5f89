/**
 * The mock's media endpoints are faithful enough to stand in for OpenAI and Gemini: the official SDKs, pointed straight
 * at the mocks, send their real requests and read the answers into their own types.
 */
import { GoogleGenAI, Modality } from '@google/genai';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wavOfSeconds } from '../support/audio-fixtures.js';
import { startMockGeminiUpstream, type MockGeminiUpstream } from '../support/mock-gemini-upstream.js';
import { MOCK_PNG_BASE64 } from '../support/mock-openai-media-answers.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../support/mock-openai-upstream.js';

let mock: MockOpenAIUpstream;
let gemini: MockGeminiUpstream;
let client: OpenAI;
const png = Buffer.from(MOCK_PNG_BASE64, 'base64');

beforeAll(async () => {
  mock = await startMockOpenAIUpstream();
  gemini = await startMockGeminiUpstream();
  client = new OpenAI({ baseURL: mock.url, apiKey: 'sk-upstream-test', maxRetries: 0 });
});

afterAll(async () => {
  await Promise.all([mock?.close(), gemini?.close()]);
});

describe('mock OpenAI media endpoints through the openai SDK', () => {
  it('generates images: gpt-image-1 with token usage, dall-e-3 with a url', async () => {
    const tokens = await client.images.generate({ model: 'gpt-image-1', prompt: 'a lighthouse at dusk', n: 2 });
    expect(tokens.data).toHaveLength(2);
    expect(tokens.data?.[0]?.b64_json).toBe(MOCK_PNG_BASE64);
    expect(tokens.usage?.output_tokens).toBe(2 * 1056);
    const dalle = await client.images.generate({ model: 'dall-e-3', prompt: 'a lighthouse' });
    expect(dalle.data?.[0]?.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mock-images\//);
    expect(dalle.data?.[0]?.revised_prompt).toContain('lighthouse');
    await expect(client.images.generate({ model: 'gpt-image-1', prompt: 'x', response_format: 'url' })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
  });

  it('edits and varies images sent as multipart files', async () => {
    const edit = await client.images.edit({ model: 'gpt-image-1', prompt: 'add a boat', image: [await toFile(png, 'a.png', { type: 'image/png' }), await toFile(png, 'b.png', { type: 'image/png' })] });
    expect(edit.usage?.input_tokens_details.image_tokens).toBe(2 * 323);
    const recorded = mock.requests.at(-1)?.body as { fields: Record<string, string>; files: Array<{ field: string; size: number }> };
    expect(recorded.fields.prompt).toBe('add a boat');
    expect(recorded.files.map((file) => file.field)).toEqual(['image[]', 'image[]']);
    const variation = await client.images.createVariation({ model: 'dall-e-2', image: await toFile(png, 'a.png', { type: 'image/png' }), response_format: 'b64_json' });
    expect(variation.data?.[0]?.b64_json).toBe(MOCK_PNG_BASE64);
  });

  it('transcribes and translates audio files, billing whisper by duration and gpt-4o-transcribe by tokens', async () => {
    const wav = wavOfSeconds(2);
    const whisper = await client.audio.transcriptions.create({ file: await toFile(wav, 'speech.wav', { type: 'audio/wav' }), model: 'whisper-1', response_format: 'verbose_json' });
    expect(whisper.duration).toBe(2);
    expect(whisper.text).toContain('speech.wav');
    const tokens = await client.audio.transcriptions.create({ file: await toFile(wav, 'speech.wav'), model: 'gpt-4o-transcribe' });
    expect(tokens.usage).toMatchObject({ type: 'tokens', input_tokens: 20 });
    const text = await client.audio.transcriptions.create({ file: await toFile(wav, 'speech.wav'), model: 'whisper-1', response_format: 'text' });
    expect(String(text)).toContain('Transcribed audio');
    const translation = await client.audio.translations.create({ file: await toFile(wav, 'speech.wav'), model: 'whisper-1' });
    expect(translation.text).toContain('Translated audio');
  });

  it('streams a transcription as SSE events ending with usage', async () => {
    const stream = await client.audio.transcriptions.create({ file: await toFile(wavOfSeconds(1), 'speech.wav'), model: 'gpt-4o-mini-transcribe', stream: true });
    const types: string[] = [];
    let usage: unknown;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'transcript.text.done') usage = event.usage;
    }
    expect(types.at(-1)).toBe('transcript.text.done');
    expect(types.filter((type) => type === 'transcript.text.delta').length).toBeGreaterThan(1);
    expect(usage).toMatchObject({ type: 'tokens', input_tokens: 10 });
  });

  it('speaks text as a streamed binary body, and as SSE with usage', async () => {
    const speech = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'Hello there' });
    expect(speech.headers.get('content-type')).toBe('audio/mpeg');
    const audio = Buffer.from(await speech.arrayBuffer());
    expect(audio.length).toBe(11 * 400);
    expect(audio.subarray(0, 3).toString()).toBe('ID3');
    const sse = await client.audio.speech.create({ model: 'gpt-4o-mini-tts', voice: 'alloy', input: 'Hello there', stream_format: 'sse' });
    expect(sse.headers.get('content-type')).toContain('text/event-stream');
    expect(await sse.text()).toContain('speech.audio.done');
  });

  it('moderates text', async () => {
    const result = await client.moderations.create({ model: 'omni-moderation-latest', input: ['a calm sea', 'I will attack them'] });
    expect(result.results.map((entry) => entry.flagged)).toEqual([false, true]);
    expect(result.results[1]?.categories.violence).toBe(true);
  });

  it('refuses a wrong key, a missing file and a file over 25 MB like OpenAI', async () => {
    const bad = new OpenAI({ baseURL: mock.url, apiKey: 'sk-wrong', maxRetries: 0 });
    await expect(bad.moderations.create({ input: 'x' })).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    const missing = await fetch(`${mock.url}/audio/transcriptions`, { method: 'POST', headers: { authorization: 'Bearer sk-upstream-test' }, body: (() => { const form = new FormData(); form.set('model', 'whisper-1'); return form; })() });
    expect(missing.status).toBe(400);
    const big = new FormData();
    big.set('model', 'whisper-1');
    big.set('file', new Blob([new Uint8Array(25 * 1024 * 1024 + 1)]), 'big.wav');
    const tooLarge = await fetch(`${mock.url}/audio/transcriptions`, { method: 'POST', headers: { authorization: 'Bearer sk-upstream-test' }, body: big });
    expect(tooLarge.status).toBe(413);
  });
});

describe('mock Gemini image models through @google/genai', () => {
  it('answers generateContent with an inlineData image and image token usage', async () => {
    const genai = new GoogleGenAI({ apiKey: 'gemini-upstream-test', httpOptions: { baseUrl: gemini.url } });
    const result = await genai.models.generateContent({ model: 'gemini-2.5-flash-image', contents: 'a red kite', config: { responseModalities: [Modality.IMAGE], imageConfig: { aspectRatio: '16:9' } } });
    const part = result.candidates?.[0]?.content?.parts?.[0];
    expect(part?.inlineData?.mimeType).toBe('image/png');
    expect(part?.inlineData?.data).toBe(MOCK_PNG_BASE64);
    expect(result.usageMetadata?.candidatesTokenCount).toBe(1290);
    const blocked = await genai.models.generateContent({ model: 'gemini-2.5-flash-image', contents: 'something forbidden', config: { responseModalities: [Modality.IMAGE] } });
    expect(blocked.promptFeedback?.blockReason).toBe('PROHIBITED_CONTENT');
  });
});
