import { CohereClient, CohereClientV2, CohereError } from 'cohere-ai';
import { GoogleGenAI } from '@google/genai';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, flushWrites, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockGeminiUpstream, type MockGeminiUpstream } from '../../support/mock-gemini-upstream.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { startMockRerankUpstream, type MockRerankUpstream } from '../../support/mock-rerank-upstream.js';

/**
 * Input guardrails on the endpoints that carry caller text besides chat, over real HTTP with the official SDKs
 * against mock upstreams: a card number in an embeddings input masked before the upstream sees it (OpenAI and Gemini
 * wires), a denied word in a rerank query refused with the spec's error object and nothing charged, and what ran in
 * the `x-gateway-guardrails` header and on the usage row. Runs on PostgreSQL when TEST_DATABASE_URL names one.
 */
let gateway: TestGateway;
let openaiUpstream: MockOpenAIUpstream;
let geminiUpstream: MockGeminiUpstream;
let cohere: MockRerankUpstream;
let guarded: SeededAccount;
let plain: SeededAccount;

const CARD = '4111 1111 1111 1111';

interface UsageRow { request_id: string | null; status: number; error_code: string | null; cost_usd: number; guardrails: Array<{ name: string; direction: string; outcome: string; count: number }> }

async function usageRows(account: SeededAccount): Promise<UsageRow[]> {
  await flushWrites(gateway);
  return (await gateway.admin<{ data: UsageRow[] }>('GET', `/admin/usage?account_id=${account.accountId}&limit=200`)).body.data;
}

beforeAll(async () => {
  [openaiUpstream, geminiUpstream, cohere] = await Promise.all([startMockOpenAIUpstream(), startMockGeminiUpstream(), startMockRerankUpstream('cohere')]);
  gateway = await startTestGateway({ env: { BATCH_POLL_MS: '20' } });
  await addRoutedModel(gateway, { model: 'embed-openai', kind: 'embedding', pricing: { input_per_mtok: 0.1 }, channel: { name: 'o', type: 'openai', base_url: openaiUpstream.url, api_key: 'sk-upstream-test', models: { 'embed-openai': 'text-embedding-3-small' } } });
  await addRoutedModel(gateway, { model: 'embed-gemini', kind: 'embedding', pricing: { input_per_mtok: 0.1 }, channel: { name: 'g', type: 'gemini', base_url: geminiUpstream.url, api_key: 'gemini-upstream-test', models: { 'embed-gemini': 'gemini-embedding-001' } } });
  await addRoutedModel(gateway, { model: 'rerank-cohere', kind: 'rerank', pricing: { per_search_unit: 0.002 }, channel: { name: 'c', type: 'cohere', base_url: cohere.url, api_key: 'cohere-upstream-key', models: { 'rerank-cohere': 'rerank-v3.5' } } });
  await addRoutedModel(gateway, { model: 'dalle-3', kind: 'image', pricing: { per_image: 0.04 }, channel: { name: 'oi', type: 'openai', base_url: openaiUpstream.url, api_key: 'sk-upstream-test', models: { 'dalle-3': 'dall-e-3' } } });
  await addRoutedModel(gateway, { model: 'tts-1', kind: 'audio', pricing: { per_mchar: 15 }, channel: { name: 'oa', type: 'openai', base_url: openaiUpstream.url, api_key: 'sk-upstream-test', models: { 'tts-1': 'tts-1' } } });
  await gateway.gateway.services.catalog.reload();
  guarded = await seedAccount(gateway, { balanceUsd: 20 });
  plain = await seedAccount(gateway, { balanceUsd: 20 });
  for (const policy of [
    // Reversible: no text comes back from these endpoints, so it masks as a plain mask does.
    { name: 'cards', kind: 'pii', mode: 'mask', applies_to: 'input', settings: { detectors: ['card'], reversible: true } },
    { name: 'no-zanzibar', kind: 'deny_list', mode: 'block', applies_to: 'input', settings: { words: ['zanzibar'] } },
  ]) {
    expect((await gateway.admin('POST', '/admin/guardrails', policy)).status).toBe(201);
  }
  expect((await gateway.admin('PATCH', `/admin/accounts/${guarded.accountId}`, { guardrails: ['cards', 'no-zanzibar'] })).status).toBe(200);
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([openaiUpstream?.close(), geminiUpstream?.close(), cohere?.close()]);
});

const lastBody = (upstream: { requests: Array<{ body: unknown }> }): string => JSON.stringify(upstream.requests.at(-1)?.body ?? null);

describe('embeddings', () => {
  it('OpenAI SDK: a card number in a string array input is masked before the upstream sees it', async () => {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: guarded.key, maxRetries: 0 });
    const { data, response } = await client.embeddings.create({ model: 'embed-openai', input: ['nothing here', `card ${CARD} on file`] }).withResponse();
    expect(data.data).toHaveLength(2);
    expect(lastBody(openaiUpstream)).not.toContain(CARD);
    expect(lastBody(openaiUpstream)).toContain('nothing here');
    // Reversible masking has nothing to restore in an embedding: the placeholder is a plain one, no vault kept.
    expect(lastBody(openaiUpstream)).toMatch(/card \[CARD(_1)?\] on file/);
    expect(response.headers.get('x-gateway-guardrails')).toBe('cards/input=masked;1, no-zanzibar/input=passed;0');
  });

  it('OpenAI SDK: a denied word in the input is refused before any upstream call', async () => {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: guarded.key, maxRetries: 0 });
    const before = openaiUpstream.requests.length;
    const error = await client.embeddings.create({ model: 'embed-openai', input: 'a trip to Zanzibar' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('guardrail_blocked');
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).headers?.get('x-gateway-guardrails')).toContain('no-zanzibar/input=blocked;1');
    expect(openaiUpstream.requests.length).toBe(before);
  });

  it('Gemini SDK: embedContent and batchEmbedContents text parts are masked', async () => {
    const client = new GoogleGenAI({ apiKey: guarded.key, httpOptions: { baseUrl: gateway.url } });
    const answer = await client.models.embedContent({ model: 'embed-gemini', contents: [`pay with ${CARD}`, 'plain text'] });
    expect(answer.embeddings?.length).toBeGreaterThan(0);
    const sent = JSON.stringify(geminiUpstream.requests.filter((request) => request.path.includes('mbedContent')).at(-1)?.body ?? null);
    expect(sent).not.toContain(CARD);
    expect(sent).toContain('[CARD');
    expect(sent).toContain('plain text');
  });

  it('a caller with no policy is not touched', async () => {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: plain.key, maxRetries: 0 });
    const { response } = await client.embeddings.create({ model: 'embed-openai', input: `card ${CARD} on file` }).withResponse();
    expect(lastBody(openaiUpstream)).toContain(CARD);
    expect(response.headers.get('x-gateway-guardrails')).toBeNull();
  });
});

describe('image prompts and speech input', () => {
  it('OpenAI SDK: a card number in an image prompt is masked before the upstream sees it', async () => {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: guarded.key, maxRetries: 0 });
    const { response } = await client.images.generate({ model: 'dalle-3', prompt: `a card reading ${CARD}` }).withResponse();
    expect(lastBody(openaiUpstream)).not.toContain(CARD);
    expect(lastBody(openaiUpstream)).toContain('a card reading [CARD');
    expect(response.headers.get('x-gateway-guardrails')).toBe('cards/input=masked;1, no-zanzibar/input=passed;0');
  });

  it('OpenAI SDK: a card number in speech input is masked; a denied word is refused before any upstream call', async () => {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: guarded.key, maxRetries: 0 });
    const { data, response } = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: `read ${CARD} aloud` }).withResponse();
    await data.arrayBuffer();
    expect(lastBody(openaiUpstream)).not.toContain(CARD);
    expect(lastBody(openaiUpstream)).toContain('read [CARD');
    expect(response.headers.get('x-gateway-guardrails')).toBe('cards/input=masked;1, no-zanzibar/input=passed;0');
    const before = openaiUpstream.requests.length;
    const error = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'zanzibar' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('guardrail_blocked');
    expect(openaiUpstream.requests.length).toBe(before);
  });
});

describe('batch lines', () => {
  it('run through the route in process: a card number in an embeddings line is masked, even where a provider batch could take it', async () => {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: guarded.key, maxRetries: 0 });
    const line = { custom_id: 'one', method: 'POST', url: '/v1/embeddings', body: { model: 'embed-openai', input: `batch card ${CARD}` } };
    const file = await client.files.create({ file: await toFile(Buffer.from(`${JSON.stringify(line)}\n`), 'batch.jsonl'), purpose: 'batch' });
    const created = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/embeddings', completion_window: '24h' });
    let batch = created;
    for (let attempt = 0; attempt < 600 && !['completed', 'failed', 'expired', 'cancelled'].includes(batch.status); attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      batch = await client.batches.retrieve(created.id);
    }
    expect(batch.status).toBe('completed');
    const sent = openaiUpstream.requests.filter((request) => JSON.stringify(request.body ?? null).includes('batch card'));
    expect(sent.length).toBeGreaterThan(0);
    expect(JSON.stringify(sent.map((request) => request.body))).not.toContain(CARD);
    const rows = await usageRows(guarded);
    expect(rows.find((row) => row.request_id?.startsWith(`req_${created.id}`))?.guardrails).toContainEqual({ name: 'cards', direction: 'input', outcome: 'masked', count: 1 });
  });
});

describe('rerank', () => {
  it('Cohere SDK: a denied word in the query is refused with the spec error object, nothing charged', async () => {
    const client = new CohereClientV2({ token: guarded.key, environment: gateway.url });
    const before = cohere.requests.length;
    const error = await client.rerank({ model: 'rerank-cohere', query: 'flights to zanzibar', documents: ['a', 'b'] }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CohereError);
    expect((error as CohereError).statusCode).toBe(400);
    expect((error as CohereError).body).toMatchObject({ error: { code: 'guardrail_blocked' } });
    expect(cohere.requests.length).toBe(before);
  });

  it('Cohere SDK: card numbers in the query and documents are masked, the caller gets its documents back', async () => {
    const client = new CohereClient({ token: guarded.key, environment: gateway.url });
    const { data, rawResponse } = await client.rerank({ model: 'rerank-cohere', query: `who paid with ${CARD}`, documents: [`receipt ${CARD}`, 'weather report'], returnDocuments: true }).withRawResponse();
    const sent = lastBody(cohere);
    expect(sent).not.toContain(CARD);
    expect(sent).toContain('weather report');
    expect(rawResponse.headers.get('x-gateway-guardrails')).toBe('cards/input=masked;2, no-zanzibar/input=passed;0');
    expect(data.results.map((result) => result.document?.text)).toContain(`receipt ${CARD}`);
  });

  it('the usage rows say what ran, never the text; the refusal cost nothing', async () => {
    const rows = await usageRows(guarded);
    const refused = rows.filter((row) => row.error_code === 'guardrail_blocked');
    expect(refused.length).toBeGreaterThanOrEqual(3);
    for (const row of refused) {
      expect(row.status).toBe(400);
      expect(row.cost_usd).toBe(0);
      expect(row.guardrails).toContainEqual({ name: 'no-zanzibar', direction: 'input', outcome: 'blocked', count: 1 });
    }
    expect(rows.filter((row) => row.guardrails.some((hit) => hit.name === 'cards' && hit.outcome === 'masked')).length).toBeGreaterThanOrEqual(5);
    expect(JSON.stringify(rows)).not.toContain('4111');
    expect((await usageRows(plain)).every((row) => row.guardrails.length === 0)).toBe(true);
  });
});
