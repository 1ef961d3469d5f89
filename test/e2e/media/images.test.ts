/** Images: the openai SDK through the gateway to OpenAI-wire and Gemini upstreams, billed per image or token. */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SeededAccount } from '../../support/gateway-harness.js';
import { MOCK_PNG_BASE64 } from '../../support/mock-openai-media-answers.js';
import { newAccount, startMediaSetup, tokenCostNano, usageRow, usd, type MediaSetup } from './media-support.js';

let setup: MediaSetup;
let account: SeededAccount;
let client: OpenAI;
const png = Buffer.from(MOCK_PNG_BASE64, 'base64');

beforeAll(async () => {
  setup = await startMediaSetup();
  account = await newAccount(setup);
  client = new OpenAI({ baseURL: setup.gateway.baseURL, apiKey: account.key, maxRetries: 0 });
});

afterAll(async () => {
  await setup?.close();
});

describe('POST /v1/images/generations', () => {
  it('relays an OpenAI-wire answer and bills per image', async () => {
    const { data: result, response } = await client.images.generate({ model: 'dalle-3', prompt: 'a lighthouse at dusk', size: '1024x1024' }).withResponse();
    expect(result.data?.[0]?.url).toMatch(/\/mock-images\//);
    const sent = setup.openai.requests.at(-1);
    expect(sent?.path).toBe('/v1/images/generations');
    expect((sent?.body as { model: string }).model).toBe('dall-e-3');
    const row = await usageRow(setup, account, response.headers.get('x-request-id'));
    expect(row).toMatchObject({ status: 200, model: 'dalle-3', endpoint: '/v1/images/generations', protocol: 'openai-images' });
    expect(row.cost_usd).toBeCloseTo(0.04, 9);
    expect(response.headers.get('x-request-cost-usd')).toBe('0.04');
  });

  it('bills gpt-image-1 by the tokens it reports', async () => {
    const { data: result, response } = await client.images.generate({ model: 'gpt-image', prompt: 'two boats', n: 2 }).withResponse();
    expect(result.data).toHaveLength(2);
    const usage = result.usage as NonNullable<typeof result.usage>;
    const row = await usageRow(setup, account, response.headers.get('x-request-id'));
    expect(row.prompt_tokens).toBe(usage.input_tokens);
    expect(row.completion_tokens).toBe(usage.output_tokens);
    expect(row.cost_usd).toBeCloseTo(usd(tokenCostNano([[usage.input_tokens, 5], [usage.output_tokens, 40]])), 9);
  });

  it('generates with a Gemini image model: one generateContent per image, b64_json back, billed per image', async () => {
    const before = setup.gemini.requests.length;
    const { data: result, response } = await client.images.generate({ model: 'nano-banana', prompt: 'a red kite over hills', n: 2, size: '1792x1024' }).withResponse();
    expect(result.data?.map((image) => image.b64_json)).toEqual([MOCK_PNG_BASE64, MOCK_PNG_BASE64]);
    expect(result.usage?.output_tokens).toBe(2 * 1290);
    const calls = setup.gemini.requests.slice(before);
    expect(calls).toHaveLength(2);
    expect(calls[0]?.path).toBe('/v1beta/models/gemini-2.5-flash-image:generateContent');
    expect(calls[0]?.body).toMatchObject({ contents: [{ role: 'user', parts: [{ text: 'a red kite over hills' }] }], generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '16:9' } } });
    const row = await usageRow(setup, account, response.headers.get('x-request-id'));
    expect(row.cost_usd).toBeCloseTo(0.078, 9);
    expect(response.headers.get('x-request-cost-usd')).toBe('0.078');
    expect(row.completion_tokens).toBe(2 * 1290);
  });

  it('answers a data: URL for response_format url from a Gemini model (no image storage)', async () => {
    const result = await client.images.generate({ model: 'nano-banana', prompt: 'a kite', response_format: 'url' });
    expect(result.data?.[0]?.url).toBe(`data:image/png;base64,${MOCK_PNG_BASE64}`);
  });

  it('refuses with 400 when the Gemini model blocks the prompt, and bills no image', async () => {
    const error = await client.images.generate({ model: 'nano-banana', prompt: 'something forbidden' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).message).toContain('PROHIBITED_CONTENT');
    const row = await usageRow(setup, account, (error as InstanceType<typeof OpenAI.BadRequestError>).requestID ?? (error as { headers: Headers }).headers.get('x-request-id'));
    expect(row).toMatchObject({ status: 400, error_code: 'bad_request', cost_usd: 0 });
  });

  it('validates the request and the model kind', async () => {
    await expect(client.images.generate({ model: 'dalle-3', prompt: '' })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    await expect(client.images.generate({ model: 'dalle-3', prompt: 'x', n: 11 })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    const wrongKind = await client.images.generate({ model: 'chat-openai', prompt: 'x' }).catch((caught: unknown) => caught);
    expect(wrongKind).toBeInstanceOf(OpenAI.BadRequestError);
    expect((wrongKind as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ code: 'model_not_found', param: 'model', type: 'invalid_request_error' });
    expect((wrongKind as Error).message).toContain("'chat-openai' is a chat model; POST /v1/images/generations takes an image model");
  });
});

describe('POST /v1/images/edits and /v1/images/variations (multipart)', () => {
  it('forwards an edit with several images as a rebuilt form carrying the upstream model', async () => {
    const { data: result, response } = await client.images.edit({
      model: 'gpt-image',
      prompt: 'add a boat',
      image: [await toFile(png, 'first.png', { type: 'image/png' }), await toFile(png, 'second.png', { type: 'image/png' })],
    }).withResponse();
    expect(result.data?.[0]?.b64_json).toBe(MOCK_PNG_BASE64);
    const sent = setup.openai.requests.at(-1)?.body as { fields: Record<string, string>; files: Array<{ field: string; filename: string; contentType: string; size: number }> };
    expect(sent.fields).toMatchObject({ model: 'gpt-image-1', prompt: 'add a boat' });
    expect(sent.files).toEqual([
      expect.objectContaining({ field: 'image[]', filename: 'first.png', contentType: 'image/png', size: png.length }),
      expect.objectContaining({ field: 'image[]', filename: 'second.png', contentType: 'image/png', size: png.length }),
    ]);
    const usage = result.usage as NonNullable<typeof result.usage>;
    const row = await usageRow(setup, account, response.headers.get('x-request-id'));
    expect(row.cost_usd).toBeCloseTo(usd(tokenCostNano([[usage.input_tokens, 5], [usage.output_tokens, 40]])), 9);
  });

  it('creates variations billed per image', async () => {
    const { data: result, response } = await client.images.createVariation({ model: 'dalle-2', image: await toFile(png, 'v.png', { type: 'image/png' }), n: 3, response_format: 'b64_json' }).withResponse();
    expect(result.data).toHaveLength(3);
    const row = await usageRow(setup, account, response.headers.get('x-request-id'));
    expect(row.cost_usd).toBeCloseTo(0.06, 9);
  });

  it('edits with a Gemini image model: the uploaded images inline before the prompt', async () => {
    const { data: result, response } = await client.images.edit({ model: 'nano-banana', prompt: 'make it night', image: await toFile(png, 'day.png', { type: 'image/png' }) }).withResponse();
    expect(result.data?.[0]?.b64_json).toBe(MOCK_PNG_BASE64);
    expect(setup.gemini.requests.at(-1)?.body).toMatchObject({
      contents: [{ role: 'user', parts: [{ inlineData: { mimeType: 'image/png', data: MOCK_PNG_BASE64 } }, { text: 'make it night' }] }],
      generationConfig: { responseModalities: ['IMAGE'] },
    });
    expect((await usageRow(setup, account, response.headers.get('x-request-id'))).cost_usd).toBeCloseTo(0.039, 9);
    // Gemini has no masks: an edit with one has no channel to go to.
    const masked = await client.images.edit({ model: 'nano-banana', prompt: 'x', image: await toFile(png, 'a.png', { type: 'image/png' }), mask: await toFile(png, 'm.png', { type: 'image/png' }) }).catch((caught: unknown) => caught);
    expect((masked as Error).message).toContain('no channel that serves image edits');
  });

  it('says no channel serves variations for a Gemini image model', async () => {
    const error = await client.images.createVariation({ model: 'nano-banana', image: await toFile(png, 'v.png', { type: 'image/png' }) }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as Error).message).toContain('no channel that serves image variations');
  });

  it('refuses an edit without an image, and a JSON body, with the error object', async () => {
    const missing = new FormData();
    missing.set('model', 'gpt-image');
    missing.set('prompt', 'x');
    const noImage = await fetch(`${setup.gateway.baseURL}/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${account.key}` }, body: missing });
    expect(noImage.status).toBe(400);
    expect(await noImage.json()).toMatchObject({ error: { code: 'bad_request', param: 'image', type: 'invalid_request_error' } });
    const json = await fetch(`${setup.gateway.baseURL}/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' }, body: '{"model":"gpt-image"}' });
    expect(json.status).toBe(400);
    expect(((await json.json()) as { error: { message: string } }).error.message).toContain('multipart/form-data');
  });
});
