import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';

let gateway: TestGateway;
let account: SeededAccount;
const MODELS = ['list-a', 'list-b', 'list-c'];

beforeAll(async () => {
  gateway = await startTestGateway();
  await gateway.admin('POST', '/admin/channels', { name: 'sim', type: 'simulator', api_key: 'none', models: MODELS });
  for (const id of MODELS) {
    await gateway.admin('POST', '/admin/models', { id, public: true, pricing: { input_per_mtok: 3, output_per_mtok: 15, cached_input_per_mtok: 0.3 } });
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await gateway.gateway.services.catalog.reload();
  account = await seedAccount(gateway);
});

afterAll(async () => {
  await gateway?.close();
});

describe('GET /v1/models answers in the caller\'s family', () => {
  it('the Anthropic SDK lists and retrieves models in Anthropic\'s shape, paged', async () => {
    const client = new Anthropic({ baseURL: gateway.url, apiKey: account.key, maxRetries: 0 });
    const ids: string[] = [];
    for await (const model of client.models.list({ limit: 2 })) ids.push(model.id);
    expect(ids).toEqual([...MODELS].reverse());
    const first = await client.models.list({ limit: 2 });
    expect(first.has_more).toBe(true);
    expect(first.data[0]).toMatchObject({ type: 'model', id: 'list-c', display_name: 'list-c' });
    expect(Number.isNaN(Date.parse(first.data[0]!.created_at))).toBe(false);
    const one = await client.models.retrieve('list-a');
    expect(one).toMatchObject({ type: 'model', id: 'list-a' });
    const missing = await client.models.retrieve('no-such-model').catch((caught: unknown) => caught);
    expect(missing).toBeInstanceOf(Anthropic.NotFoundError);
    expect((missing as InstanceType<typeof Anthropic.NotFoundError>).error).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
  });

  it('the OpenAI shape carries prices as OpenRouter does (USD per token, decimal strings)', async () => {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: account.key, maxRetries: 0 });
    const list = await client.models.list();
    const model = list.data.find((entry) => entry.id === 'list-a') as unknown as { pricing: Record<string, string> };
    // OpenRouter's fields sit beside the gateway's own USD-per-million fields; prices the model lacks have no OpenRouter field.
    const openRouterFields = Object.fromEntries(Object.entries(model.pricing).filter(([name]) => ['prompt', 'completion', 'input_cache_read', 'input_cache_write', 'request', 'image'].includes(name)));
    expect(openRouterFields).toEqual({ prompt: '0.000003', completion: '0.000015', input_cache_read: '0.0000003' });
    expect(model.pricing).toMatchObject({ input_per_mtok: 3, output_per_mtok: 15, cached_input_per_mtok: 0.3 });
  });

  it('the Google SDK gets Gemini\'s list on /v1beta/models', async () => {
    const client = new GoogleGenAI({ apiKey: account.key, httpOptions: { baseUrl: gateway.url } });
    const names: string[] = [];
    for await (const model of await client.models.list()) names.push(model.name ?? '');
    expect(names).toEqual(expect.arrayContaining(MODELS.map((id) => `models/${id}`)));
  });
});
