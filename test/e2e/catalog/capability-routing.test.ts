/**
 * Routing by capability and context window: a request with tools, images or a JSON schema goes only to channels
 * whose model offers them, and a 400 says so when none does; a request that does not fit the context window is
 * refused before any upstream call, counted exactly only when its size says it may not fit.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';

const IMAGE = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

let upstream: MockOpenAIUpstream;
let gateway: TestGateway;
let account: SeededAccount;
let client: OpenAI;

function chatCalls(since: number): Array<{ model: string }> {
  return upstream.requests.slice(since).filter((request) => request.path === '/v1/chat/completions').map((request) => request.body as { model: string });
}

beforeAll(async () => {
  upstream = await startMockOpenAIUpstream();
  gateway = await startTestGateway({ env: { OPENAI_API_KEY: 'sk-upstream-test', OPENAI_BASE_URL: upstream.url } });
  account = await seedAccount(gateway, { balanceUsd: 20 });
  client = new OpenAI({ baseURL: gateway.baseURL, apiKey: account.key, maxRetries: 0 });
  // One public model on two channels whose upstream models differ: o3-mini takes no images, gpt-4o does.
  expect((await gateway.admin('POST', '/admin/models', { id: 'smart', pricing: { input_per_mtok: 1, output_per_mtok: 2 } })).status).toBe(201);
  const channel = (name: string, target: string, priority: number): Record<string, unknown> => ({ name, type: 'openai', base_url: upstream.url, api_key: 'sk-upstream-test', models: { smart: target }, priority });
  expect((await gateway.admin('POST', '/admin/channels', channel('text-first', 'o3-mini', 10))).status).toBe(201);
  expect((await gateway.admin('POST', '/admin/channels', channel('sees-images', 'gpt-4o', 0))).status).toBe(201);
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

describe('capability routing', () => {
  it('sends an image only to the channel whose model takes images, text to the preferred one', async () => {
    let before = upstream.requests.length;
    await client.chat.completions.create({ model: 'smart', messages: [{ role: 'user', content: 'just text' }] });
    expect(chatCalls(before)).toEqual([expect.objectContaining({ model: 'o3-mini' })]);
    before = upstream.requests.length;
    await client.chat.completions.create({ model: 'smart', messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this?' }, { type: 'image_url', image_url: { url: IMAGE } }] }] });
    expect(chatCalls(before)).toEqual([expect.objectContaining({ model: 'gpt-4o' })]);
  });

  it('answers 400 model_capability_unsupported, without an upstream call, when no channel offers what the request needs', async () => {
    const before = upstream.requests.length;
    const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } }];
    await expect(client.chat.completions.create({ model: 'o1-mini', messages: [{ role: 'user', content: 'hi' }], tools }))
      .rejects.toMatchObject({ status: 400, code: 'model_capability_unsupported', message: expect.stringContaining('tools') });
    await expect(client.chat.completions.create({ model: 'o3-mini', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: IMAGE } }] }] }))
      .rejects.toMatchObject({ status: 400, code: 'model_capability_unsupported', message: expect.stringContaining('image input') });
    await expect(client.chat.completions.create({
      model: 'gpt-3.5-turbo', messages: [{ role: 'user', content: 'hi' }],
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object', properties: {} } } },
    })).rejects.toMatchObject({ status: 400, code: 'model_capability_unsupported', message: expect.stringContaining('JSON schema') });
    expect(chatCalls(before)).toEqual([]);
  });

  it('routes and refuses Responses API requests the same way', async () => {
    const before = upstream.requests.length;
    const tools: OpenAI.Responses.FunctionTool[] = [{ type: 'function', name: 'lookup', strict: false, parameters: { type: 'object', properties: {} } }];
    await expect(client.responses.create({ model: 'o1-mini', input: 'hi', tools, store: false }))
      .rejects.toMatchObject({ status: 400, code: 'model_capability_unsupported' });
    expect(upstream.requests.slice(before)).toEqual([]);
    await client.responses.create({ model: 'smart', store: false, input: [{ role: 'user', content: [{ type: 'input_image', image_url: IMAGE, detail: 'auto' }] }] });
    expect(upstream.requests.slice(before).map((request) => (request.body as { model: string }).model)).toEqual(['gpt-4o']);
  });

  it('refuses the same in the caller’s own protocol (Anthropic Messages to an OpenAI model)', async () => {
    const anthropic = new Anthropic({ baseURL: gateway.url, apiKey: account.key, maxRetries: 0 });
    const before = upstream.requests.length;
    await expect(anthropic.messages.create({
      model: 'gpt-3.5-turbo', max_tokens: 16,
      messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: IMAGE.split(',')[1] as string } }] }],
    })).rejects.toMatchObject({ status: 400, error: { type: 'error', error: { type: 'invalid_request_error' } } });
    expect(chatCalls(before)).toEqual([]);
  });
});

describe('context window', () => {
  it('refuses a prompt longer than the window before the call, with the counts in the message', async () => {
    const before = upstream.requests.length;
    const long = 'lorem ipsum dolor sit amet '.repeat(5000);
    await expect(client.chat.completions.create({ model: 'gpt-3.5-turbo', messages: [{ role: 'user', content: long }] }))
      .rejects.toMatchObject({ status: 400, code: 'context_length_exceeded', message: expect.stringMatching(/needs \d+ tokens.*16385 tokens of context/) });
    expect(chatCalls(before)).toEqual([]);
  });

  it('counts the output asked for', async () => {
    const before = upstream.requests.length;
    await expect(client.chat.completions.create({ model: 'gpt-3.5-turbo', max_tokens: 15000, messages: [{ role: 'user', content: 'hello '.repeat(2000) }] }))
      .rejects.toMatchObject({ status: 400, code: 'context_length_exceeded', message: expect.stringContaining('15000 of output asked for') });
    expect(chatCalls(before)).toEqual([]);
  });

  it('lets through a body larger than the window in bytes whose exact count fits', async () => {
    const before = upstream.requests.length;
    const text = 'hello '.repeat(4000);
    expect(Buffer.byteLength(text)).toBeGreaterThan(16385);
    const completion = await client.chat.completions.create({ model: 'gpt-3.5-turbo', messages: [{ role: 'user', content: text }] });
    expect(completion.object).toBe('chat.completion');
    expect(chatCalls(before)).toHaveLength(1);
  });
});
