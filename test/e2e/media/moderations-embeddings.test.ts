/** Moderations (free unless priced, logged, rate-limited) and embeddings (float, base64, dimensions) to both upstream kinds. */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SeededAccount } from '../../support/gateway-harness.js';
import { newAccount, startMediaSetup, usageRow, type MediaSetup } from './media-support.js';

let setup: MediaSetup;
let account: SeededAccount;
let client: OpenAI;

beforeAll(async () => {
  setup = await startMediaSetup();
  account = await newAccount(setup);
  client = new OpenAI({ baseURL: setup.gateway.baseURL, apiKey: account.key, maxRetries: 0 });
});

afterAll(async () => {
  await setup?.close();
});

describe('POST /v1/moderations', () => {
  it('passes through, free by default, and is logged', async () => {
    const { data: result, response } = await client.moderations.create({ input: ['a calm sea', 'I will attack them'] }).withResponse();
    expect(result.results.map((entry) => entry.flagged)).toEqual([false, true]);
    expect(result.model).toBe('omni-moderation-latest');
    const row = await usageRow(setup, account, response.headers.get('x-request-id'));
    expect(row).toMatchObject({ status: 200, model: 'omni-moderation-latest', endpoint: '/v1/moderations', protocol: 'openai-moderations', cost_usd: 0 });
    expect(row.prompt_tokens).toBeGreaterThan(0);
  });

  it('charges its price when the operator sets one', async () => {
    const { response } = await client.moderations.create({ model: 'priced-moderation', input: 'hello' }).withResponse();
    expect((setup.openai.requests.at(-1)?.body as { model: string }).model).toBe('omni-moderation-latest');
    expect((await usageRow(setup, account, response.headers.get('x-request-id'))).cost_usd).toBeCloseTo(0.001, 9);
  });

  it('is rate-limited per key like every billed endpoint, with the spec headers', async () => {
    const limited = await newAccount(setup, { rpm: 2 });
    const other = new OpenAI({ baseURL: setup.gateway.baseURL, apiKey: limited.key, maxRetries: 0 });
    const first = await other.moderations.create({ input: 'one' }).withResponse();
    expect(first.response.headers.get('x-ratelimit-limit')).toBe('2');
    await other.moderations.create({ input: 'two' });
    const error = await other.moderations.create({ input: 'three' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect((error as InstanceType<typeof OpenAI.RateLimitError>).headers?.get('retry-after')).toMatch(/^\d+$/);
  });

  it('validates input and refuses an unknown model', async () => {
    await expect(client.moderations.create({ input: [] as string[] })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    const unknown = await client.moderations.create({ model: 'no-such-moderation', input: 'x' }).catch((caught: unknown) => caught);
    expect((unknown as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ code: 'model_not_found' });
  });
});

describe('POST /v1/embeddings: float, base64 and dimensions to both upstream kinds', () => {
  it('OpenAI upstream: the SDK default (base64) and floats, with dimensions passed on', async () => {
    const base64 = await client.embeddings.create({ model: 'embed-openai', input: ['alpha', 'beta'], dimensions: 16 });
    expect(base64.data.map((entry) => entry.embedding.length)).toEqual([16, 16]);
    expect(setup.openai.requests.at(-1)?.body).toMatchObject({ model: 'text-embedding-3-small', dimensions: 16, encoding_format: 'base64' });
    const float = await client.embeddings.create({ model: 'embed-openai', input: 'alpha', dimensions: 16, encoding_format: 'float' });
    expect(float.data[0]?.embedding).toHaveLength(16);
    // The SDK decoded base64 little-endian float32; the same text gives the same vector either way.
    expect(base64.data[0]?.embedding.map((value) => Math.fround(value))).toEqual(float.data[0]?.embedding.map((value) => Math.fround(value)));
  });

  it('Gemini upstream: outputDimensionality, floats or base64 encoded by the gateway', async () => {
    const float = await client.embeddings.create({ model: 'embed-gemini', input: 'alpha', dimensions: 8, encoding_format: 'float' });
    expect(float.data[0]?.embedding).toHaveLength(8);
    expect(setup.gemini.requests.at(-1)?.body).toMatchObject({ content: { parts: [{ text: 'alpha' }] }, outputDimensionality: 8 });
    const raw = await fetch(`${setup.gateway.baseURL}/embeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'embed-gemini', input: 'alpha', dimensions: 8, encoding_format: 'base64' }),
    });
    const body = (await raw.json()) as { data: Array<{ embedding: string }> };
    const bytes = Buffer.from(body.data[0]?.embedding ?? '', 'base64');
    const decoded = Array.from(new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length)));
    expect(decoded).toEqual(float.data[0]?.embedding.map((value) => Math.fround(value)));
  });

  it('refuses a chat model before any upstream call, naming both kinds (OpenAI and Gemini wires), and charges nothing', async () => {
    const before = setup.openai.requests.length;
    const refused = await client.embeddings.create({ model: 'chat-openai', input: 'alpha' }).withResponse().catch((caught: unknown) => caught);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    const error = refused as InstanceType<typeof OpenAI.BadRequestError>;
    expect(error.error).toMatchObject({ code: 'model_not_found', param: 'model', type: 'invalid_request_error' });
    expect(error.message).toContain("'chat-openai' is a chat model; POST /v1/embeddings takes an embedding model");
    expect(setup.openai.requests.length).toBe(before);
    expect(await usageRow(setup, account, error.headers?.get('x-request-id') ?? null)).toMatchObject({ status: 400, error_code: 'model_not_found', cost_usd: 0 });
    const gemini = await fetch(`${setup.gateway.url}/v1beta/models/chat-openai:embedContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': account.key, 'content-type': 'application/json' },
      body: JSON.stringify({ content: { parts: [{ text: 'alpha' }] } }),
    });
    expect(gemini.status).toBe(400);
    expect(((await gemini.json()) as { error: { message: string } }).error.message).toContain('is a chat model');
  });
});
