import { createHash, randomBytes } from 'node:crypto';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wavHeader } from '../../support/audio-fixtures.js';
import { addRoutedModel, flushWrites, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockGeminiUpstream, type MockGeminiUpstream } from '../../support/mock-gemini-upstream.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';

/**
 * Input guardrails on the text fields of multipart requests, over real HTTP with the openai SDK against mock
 * upstreams: an image edit's `prompt` and a transcription's or translation's `prompt` are masked in the form the
 * upstream gets (the uploaded files byte for byte as sent, even when their bytes hold the same card number), a denied
 * word refuses the request before any upstream call, and what ran is in `x-gateway-guardrails` and on the usage row.
 * Runs on PostgreSQL when TEST_DATABASE_URL names one.
 */
let gateway: TestGateway;
let openaiUpstream: MockOpenAIUpstream;
let geminiUpstream: MockGeminiUpstream;
let guarded: SeededAccount;
let plain: SeededAccount;

const CARD = '4111 1111 1111 1111';
const MASKED = 'cards/input=masked;1, no-zanzibar/input=passed;0';

/** An "image" whose bytes carry the card number as text: guardrails read form fields, never the files. */
const IMAGE = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.from(`tEXt card ${CARD} `), randomBytes(70_000)]);
const IMAGE_SHA = createHash('sha256').update(IMAGE).digest('hex');
const AUDIO_DATA = Buffer.concat([Buffer.from(`card ${CARD} `), Buffer.alloc(32_000 - 25, 7)]);
const AUDIO = Buffer.concat([wavHeader(AUDIO_DATA.length), AUDIO_DATA]);
const AUDIO_SHA = createHash('sha256').update(AUDIO).digest('hex');

interface SentForm { fields: Record<string, string>; files: Array<{ field: string; size: number; sha256: string }> }
const lastForm = (): SentForm => openaiUpstream.requests.at(-1)?.body as SentForm;

function refusal(error: unknown): InstanceType<typeof OpenAI.BadRequestError> {
  expect(error).toBeInstanceOf(OpenAI.BadRequestError);
  return error as InstanceType<typeof OpenAI.BadRequestError>;
}

beforeAll(async () => {
  [openaiUpstream, geminiUpstream] = await Promise.all([startMockOpenAIUpstream(), startMockGeminiUpstream()]);
  gateway = await startTestGateway();
  await addRoutedModel(gateway, { model: 'gpt-image', kind: 'image', pricing: { per_image: 0.04 }, channel: { name: 'oi', type: 'openai', base_url: openaiUpstream.url, api_key: 'sk-upstream-test', models: { 'gpt-image': 'gpt-image-1' } } });
  await addRoutedModel(gateway, { model: 'nano-banana', kind: 'image', pricing: { per_image: 0.039 }, channel: { name: 'gi', type: 'gemini', base_url: geminiUpstream.url, api_key: 'gemini-upstream-test', models: { 'nano-banana': 'gemini-2.5-flash-image' } } });
  expect((await gateway.admin('POST', '/admin/models', { id: 'transcribe', kind: 'audio', pricing: { per_audio_minute: 0.003 } })).status).toBe(201);
  await addRoutedModel(gateway, { model: 'whisper', kind: 'audio', pricing: { per_audio_minute: 0.006 }, channel: { name: 'oa', type: 'openai', base_url: openaiUpstream.url, api_key: 'sk-upstream-test', models: { whisper: 'whisper-1', transcribe: 'gpt-4o-mini-transcribe' } } });
  await gateway.gateway.services.catalog.reload();
  guarded = await seedAccount(gateway, { balanceUsd: 20 });
  plain = await seedAccount(gateway, { balanceUsd: 20 });
  for (const policy of [
    { name: 'cards', kind: 'pii', mode: 'mask', applies_to: 'input', settings: { detectors: ['card'] } },
    { name: 'no-zanzibar', kind: 'deny_list', mode: 'block', applies_to: 'input', settings: { words: ['zanzibar'] } },
  ]) {
    expect((await gateway.admin('POST', '/admin/guardrails', policy)).status).toBe(201);
  }
  expect((await gateway.admin('PATCH', `/admin/accounts/${guarded.accountId}`, { guardrails: ['cards', 'no-zanzibar'] })).status).toBe(200);
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([openaiUpstream?.close(), geminiUpstream?.close()]);
});

describe('image edits (multipart)', () => {
  it('OpenAI SDK: a card number in the prompt is masked in the form the upstream gets; the images go byte for byte', async () => {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: guarded.key, maxRetries: 0 });
    const { response } = await client.images.edit({
      model: 'gpt-image',
      prompt: `paint the card ${CARD} blue`,
      image: [await toFile(IMAGE, 'one.png', { type: 'image/png' }), await toFile(IMAGE, 'two.png', { type: 'image/png' })],
      mask: await toFile(IMAGE, 'mask.png', { type: 'image/png' }),
    }).withResponse();
    expect(response.headers.get('x-gateway-guardrails')).toBe(MASKED);
    const sent = lastForm();
    expect(sent.fields.prompt).toMatch(/^paint the card \[CARD(_1)?\] blue$/);
    expect(JSON.stringify(sent.fields)).not.toContain('4111');
    expect(sent.fields.model).toBe('gpt-image-1');
    expect(sent.files.map((file) => [file.field, file.size, file.sha256]).sort()).toEqual([
      ['image[]', IMAGE.length, IMAGE_SHA],
      ['image[]', IMAGE.length, IMAGE_SHA],
      ['mask', IMAGE.length, IMAGE_SHA],
    ]);
  });

  it('Gemini image model: the masked prompt goes beside the inline image', async () => {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: guarded.key, maxRetries: 0 });
    const { response } = await client.images.edit({ model: 'nano-banana', prompt: `write ${CARD} on it`, image: await toFile(IMAGE, 'day.png', { type: 'image/png' }) }).withResponse();
    expect(response.headers.get('x-gateway-guardrails')).toBe(MASKED);
    const body = geminiUpstream.requests.at(-1)?.body as { contents: Array<{ parts: Array<{ text?: string; inlineData?: { data: string } }> }> };
    const parts = body.contents[0]?.parts ?? [];
    expect(parts.find((part) => part.text !== undefined)?.text).toMatch(/^write \[CARD(_1)?\] on it$/);
    expect(parts.find((part) => part.inlineData !== undefined)?.inlineData?.data).toBe(IMAGE.toString('base64'));
  });

  it('OpenAI SDK: a denied word in the prompt is refused before any upstream call', async () => {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: guarded.key, maxRetries: 0 });
    const before = openaiUpstream.requests.length;
    const error = refusal(await client.images.edit({ model: 'gpt-image', prompt: 'a beach in Zanzibar', image: await toFile(IMAGE, 'a.png', { type: 'image/png' }) }).catch((caught: unknown) => caught));
    expect(error.code).toBe('guardrail_blocked');
    expect(error.headers?.get('x-gateway-guardrails')).toContain('no-zanzibar/input=blocked;1');
    expect(openaiUpstream.requests.length).toBe(before);
  });

  it('a caller with no policy is not touched', async () => {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: plain.key, maxRetries: 0 });
    const { response } = await client.images.edit({ model: 'gpt-image', prompt: `card ${CARD}`, image: await toFile(IMAGE, 'a.png', { type: 'image/png' }) }).withResponse();
    expect(lastForm().fields.prompt).toBe(`card ${CARD}`);
    expect(response.headers.get('x-gateway-guardrails')).toBeNull();
  });
});

describe('audio transcriptions and translations (multipart)', () => {
  it('OpenAI SDK: a card number in a transcription prompt is masked; the audio goes byte for byte', async () => {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: guarded.key, maxRetries: 0 });
    const { response } = await client.audio.transcriptions.create({ model: 'whisper', prompt: `the caller reads ${CARD}`, file: await toFile(AUDIO, 'call.wav', { type: 'audio/wav' }) }).withResponse();
    expect(response.headers.get('x-gateway-guardrails')).toBe(MASKED);
    const sent = lastForm();
    expect(sent.fields.prompt).toMatch(/^the caller reads \[CARD(_1)?\]$/);
    expect(sent.files.map((file) => [file.field, file.size, file.sha256])).toEqual([['file', AUDIO.length, AUDIO_SHA]]);
  });

  it('OpenAI SDK: a streamed transcription carries the masked prompt and the header', async () => {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: guarded.key, maxRetries: 0 });
    const { data: stream, response } = await client.audio.transcriptions.create({ model: 'transcribe', stream: true, prompt: `spell ${CARD}`, file: await toFile(AUDIO, 'call.wav', { type: 'audio/wav' }) }).withResponse();
    for await (const _event of stream) { /* drained */ }
    expect(response.headers.get('x-gateway-guardrails')).toBe(MASKED);
    expect(lastForm().fields.prompt).toMatch(/^spell \[CARD(_1)?\]$/);
    expect(lastForm().fields.stream).toBe('true');
  });

  it('OpenAI SDK: a translation prompt is masked, and a denied word refused before any upstream call', async () => {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: guarded.key, maxRetries: 0 });
    const { response } = await client.audio.translations.create({ model: 'whisper', prompt: `number ${CARD}`, file: await toFile(AUDIO, 'call.wav', { type: 'audio/wav' }) }).withResponse();
    expect(response.headers.get('x-gateway-guardrails')).toBe(MASKED);
    expect(lastForm().fields.prompt).toMatch(/^number \[CARD(_1)?\]$/);
    const before = openaiUpstream.requests.length;
    const error = refusal(await client.audio.translations.create({ model: 'whisper', prompt: 'zanzibar', file: await toFile(AUDIO, 'call.wav', { type: 'audio/wav' }) }).catch((caught: unknown) => caught));
    expect(error.code).toBe('guardrail_blocked');
    expect(openaiUpstream.requests.length).toBe(before);
  });

  it('the usage rows say what ran, never the text; refusals cost nothing', async () => {
    await flushWrites(gateway);
    const rows = (await gateway.admin<{ data: Array<{ status: number; error_code: string | null; cost_usd: number; guardrails: Array<{ name: string; outcome: string }> }> }>('GET', `/admin/usage?account_id=${guarded.accountId}&limit=200`)).body.data;
    const refused = rows.filter((row) => row.error_code === 'guardrail_blocked');
    expect(refused).toHaveLength(2);
    for (const row of refused) expect(row.cost_usd).toBe(0);
    expect(rows.filter((row) => row.guardrails.some((hit) => hit.name === 'cards' && hit.outcome === 'masked'))).toHaveLength(5);
    expect(JSON.stringify(rows)).not.toContain('4111');
  });
});
