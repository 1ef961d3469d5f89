/** Audio: transcriptions, translations (multipart) and speech (streamed) through the gateway with the openai SDK. */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wavOfSeconds } from '../../support/audio-fixtures.js';
import type { SeededAccount } from '../../support/gateway-harness.js';
import { speechAudio } from '../../support/mock-openai-media-answers.js';
import { newAccount, startMediaSetup, tokenCostNano, usageRow, usd, type MediaSetup } from './media-support.js';

let setup: MediaSetup;
let account: SeededAccount;
let client: OpenAI;
const wav = wavOfSeconds(2);
/** whisper at $0.006 a minute, for `seconds` of audio, in nano-USD rounded up as the gateway does. */
const perMinute = (seconds: number): number => usd((BigInt(Math.ceil(seconds)) * 6_000_000n + 59n) / 60n);

beforeAll(async () => {
  setup = await startMediaSetup();
  account = await newAccount(setup);
  client = new OpenAI({ baseURL: setup.gateway.baseURL, apiKey: account.key, maxRetries: 0 });
});

afterAll(async () => {
  await setup?.close();
});

describe('POST /v1/audio/transcriptions and /v1/audio/translations', () => {
  it('streams the uploaded file to the upstream unchanged, with the upstream model, and bills the reported duration', async () => {
    const { data: result, response } = await client.audio.transcriptions.create({ file: await toFile(wav, 'speech.wav', { type: 'audio/wav' }), model: 'whisper', response_format: 'verbose_json' }).withResponse();
    expect(result.duration).toBe(2);
    const sent = setup.openai.requests.at(-1)?.body as { fields: Record<string, string>; files: Array<{ field: string; filename: string; size: number; sha256: string }> };
    expect(sent.fields).toMatchObject({ model: 'whisper-1', response_format: 'verbose_json' });
    expect(sent.files).toEqual([expect.objectContaining({ field: 'file', filename: 'speech.wav', size: wav.length })]);
    expect(result.text).toContain(`of ${wav.length} bytes`);
    const row = await usageRow(setup, account, response.headers.get('x-request-id'));
    expect(row).toMatchObject({ status: 200, model: 'whisper', endpoint: '/v1/audio/transcriptions', protocol: 'openai-audio' });
    expect(row.cost_usd).toBeCloseTo(perMinute(2), 12);
    expect(Number(response.headers.get('x-request-cost-usd'))).toBeCloseTo(perMinute(2), 12);
  });

  it('answers text formats as text/plain and bills the WAV header duration when the upstream reports none', async () => {
    const { data: text, response } = await client.audio.transcriptions.create({ file: await toFile(wav, 'speech.wav'), model: 'whisper', response_format: 'srt' }).withResponse();
    expect(response.headers.get('content-type')).toContain('text/plain');
    expect(String(text)).toMatch(/^1\n00:00:00,000 --> 00:00:02,000\n/);
    const row = await usageRow(setup, account, response.headers.get('x-request-id'));
    expect(row.cost_usd).toBeCloseTo(perMinute(2), 12);
  });

  it('bills gpt-4o-transcribe by the tokens it reports', async () => {
    const { data: result, response } = await client.audio.transcriptions.create({ file: await toFile(wav, 'speech.wav'), model: 'transcribe' }).withResponse();
    const usage = result.usage as { type: 'tokens'; input_tokens: number; output_tokens: number };
    expect(usage.type).toBe('tokens');
    const row = await usageRow(setup, account, response.headers.get('x-request-id'));
    expect(row.prompt_tokens).toBe(usage.input_tokens);
    expect(row.cost_usd).toBeCloseTo(usd(tokenCostNano([[usage.input_tokens, 2.5], [usage.output_tokens, 10]])), 12);
  });

  it('streams a transcription (stream: true) as SSE and bills the usage of its last event', async () => {
    const { data: stream, response } = await client.audio.transcriptions.create({ file: await toFile(wav, 'speech.wav'), model: 'transcribe', stream: true }).withResponse();
    let text = '';
    let usage: { input_tokens: number; output_tokens: number } | undefined;
    for await (const event of stream) {
      if (event.type === 'transcript.text.delta') text += event.delta;
      if (event.type === 'transcript.text.done') usage = event.usage;
    }
    expect(text).toContain('speech.wav');
    const row = await usageRow(setup, account, response.headers.get('x-request-id'));
    expect(row.stream).toBe(true);
    expect(row.cost_usd).toBeCloseTo(usd(tokenCostNano([[usage?.input_tokens ?? -1, 2.5], [usage?.output_tokens ?? -1, 10]])), 12);
  });

  it('translates', async () => {
    const result = await client.audio.translations.create({ file: await toFile(wav, 'speech.wav'), model: 'whisper' });
    expect(result.text).toContain('Translated audio speech.wav');
  });

  it('resends the spooled file when the first channel fails before answering', async () => {
    setup.openai.setFault({ kind: 'status', status: 500, times: 1 });
    const before = setup.openai.requests.length;
    const { data: result, response } = await client.audio.transcriptions.create({ file: await toFile(wav, 'retry.wav'), model: 'whisper' }).withResponse();
    expect(result.text).toContain('retry.wav');
    const attempts = setup.openai.requests.slice(before).map((request) => (request.body as { files: Array<{ sha256: string; size: number }> }).files[0]);
    expect(attempts).toHaveLength(2);
    expect(attempts[1]).toEqual(attempts[0]);
    expect((await usageRow(setup, account, response.headers.get('x-request-id'))).attempts).toBe(2);
  });

  it('refuses bad forms with the error object: no file, wrong content type, malformed multipart, empty file', async () => {
    const url = `${setup.gateway.baseURL}/audio/transcriptions`;
    const headers = { authorization: `Bearer ${account.key}` };
    const noFile = new FormData();
    noFile.set('model', 'whisper');
    const missing = await fetch(url, { method: 'POST', headers, body: noFile });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ error: { code: 'bad_request', param: 'file', type: 'invalid_request_error' } });
    const json = await fetch(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'whisper' }) });
    expect(json.status).toBe(400);
    expect(await json.json()).toMatchObject({ error: { code: 'bad_request', type: 'invalid_request_error' } });
    const malformed = await fetch(url, { method: 'POST', headers: { ...headers, 'content-type': 'multipart/form-data; boundary=xyz' }, body: '--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n\r\nabc' });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { error: { message: string } }).error.message).toContain('malformed');
    const empty = new FormData();
    empty.set('model', 'whisper');
    empty.set('file', new Blob([]), 'empty.wav');
    expect((await fetch(url, { method: 'POST', headers, body: empty })).status).toBe(400);
    const noModel = await client.audio.transcriptions.create({ file: await toFile(wav, 'a.wav'), model: '' }).catch((caught: unknown) => caught);
    expect(noModel).toBeInstanceOf(OpenAI.BadRequestError);
  });

  it('refuses a model outside the key allowlist with 403 after reading the form', async () => {
    const limited = await newAccount(setup, { allowed_models: ['tts-1'] });
    const other = new OpenAI({ baseURL: setup.gateway.baseURL, apiKey: limited.key, maxRetries: 0 });
    const error = await other.audio.transcriptions.create({ file: await toFile(wav, 'a.wav'), model: 'whisper' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect((error as InstanceType<typeof OpenAI.PermissionDeniedError>).error).toMatchObject({ code: 'model_not_allowed' });
  });
});

describe('POST /v1/audio/speech', () => {
  it('streams the audio bytes back as they come, billed per character', async () => {
    const input = 'The quick brown fox jumps over the lazy dog. '.repeat(5);
    const { data: speech, response } = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input }).withResponse();
    expect(speech.headers.get('content-type')).toBe('audio/mpeg');
    const reader = (speech.body as ReadableStream<Uint8Array>).getReader();
    const chunks: Uint8Array[] = [];
    let firstAt = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (chunks.length === 0) firstAt = performance.now();
      chunks.push(value);
    }
    // 225 characters of mock audio are 6 chunks 20 ms apart: the first reached the caller well before the last.
    expect(performance.now() - firstAt).toBeGreaterThan(60);
    const audio = Buffer.concat(chunks);
    expect(audio.equals(speechAudio(input, 'mp3'))).toBe(true);
    expect(chunks.length).toBeGreaterThan(1);
    expect((setup.openai.requests.at(-1)?.body as { model: string }).model).toBe('tts-1');
    const row = await usageRow(setup, account, response.headers.get('x-request-id'));
    expect(row).toMatchObject({ status: 200, stream: true, endpoint: '/v1/audio/speech' });
    expect(row.cost_usd).toBeCloseTo(usd(tokenCostNano([[[...input].length, 15]])), 12);
  });

  it('relays SSE speech (stream_format sse) and reads its token usage', async () => {
    const { data: speech, response } = await client.audio.speech.create({ model: 'tts-mini', voice: 'alloy', input: 'Hello there', stream_format: 'sse' }).withResponse();
    expect(await speech.text()).toContain('speech.audio.done');
    const row = await usageRow(setup, account, response.headers.get('x-request-id'));
    expect(row.prompt_tokens).toBeGreaterThan(0);
    expect(row.completion_tokens).toBeGreaterThan(0);
    expect(row.cost_usd).toBeCloseTo(usd(tokenCostNano([[11, 0.6]])), 12);
  });

  it('validates input and voice', async () => {
    await expect(client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'x'.repeat(4097) })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    await expect(client.audio.speech.create({ model: 'tts-1', input: 'hi' } as never)).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    await expect(client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'hi', response_format: 'ogg' as never })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
  });

  it('records a caller who leaves mid-audio as 499 and still bills the characters the upstream was sent', async () => {
    const controller = new AbortController();
    const input = 'Long enough to take several chunks of audio to arrive. '.repeat(6);
    const response = await fetch(`${setup.gateway.baseURL}/audio/speech`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tts-1', voice: 'alloy', input }),
      signal: controller.signal,
    });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    controller.abort();
    const requestId = response.headers.get('x-request-id');
    let row = await usageRow(setup, account, requestId).catch(() => null);
    for (let tries = 0; row === null && tries < 50; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      row = await usageRow(setup, account, requestId).catch(() => null);
    }
    expect(row).toMatchObject({ status: 499, error_code: 'client_closed_request' });
    expect(row?.cost_usd).toBeCloseTo(usd(tokenCostNano([[[...input].length, 15]])), 12);
  });

  it('ends the caller connection when the upstream cuts the audio mid-way', async () => {
    setup.openai.setFault({ kind: 'cut-stream', afterChunks: 1, times: 1 });
    const response = await fetch(`${setup.gateway.baseURL}/audio/speech`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tts-1', voice: 'alloy', input: 'a fairly long sentence to speak, so that it takes several chunks of audio' }),
    });
    expect(response.status).toBe(200);
    await expect(response.arrayBuffer()).rejects.toThrow();
    const row = await usageRow(setup, account, response.headers.get('x-request-id'));
    expect(row).toMatchObject({ status: 502, error_code: 'upstream_error' });
  });
});
