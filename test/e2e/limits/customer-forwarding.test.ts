/**
 * An end customer named only by `x-gateway-customer` reaches the upstream in the field the upstream has for it
 * (OpenAI's `user`, Anthropic's `metadata.user_id`), whether the body passes through or is translated; a body that
 * names its own keeps it; a request that names none sends none. Checked in what the mock upstreams received, with the
 * official SDKs as clients.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from '../../support/mock-anthropic-upstream.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';

const GPT = 'forward-gpt';
const CLAUDE = 'forward-claude';
const EMBEDDING = 'forward-embedding';
let gateway: TestGateway;
let openaiUpstream: MockOpenAIUpstream;
let anthropicUpstream: MockAnthropicUpstream;
let account: SeededAccount;

beforeAll(async () => {
  gateway = await startTestGateway();
  openaiUpstream = await startMockOpenAIUpstream();
  anthropicUpstream = await startMockAnthropicUpstream();
  await addRoutedModel(gateway, { model: GPT, channel: { name: 'forward-openai', type: 'openai', base_url: openaiUpstream.url, api_key: 'sk-upstream-test', models: { [GPT]: 'gpt-4o-mini' } } });
  await addRoutedModel(gateway, { model: CLAUDE, channel: { name: 'forward-anthropic', type: 'anthropic', base_url: anthropicUpstream.url, api_key: 'sk-ant-upstream-test', models: { [CLAUDE]: 'claude-sonnet-4-5' } } });
  await addRoutedModel(gateway, { model: EMBEDDING, kind: 'embedding', pricing: { input_per_mtok: 0.1 }, channel: { name: 'forward-openai-embeddings', type: 'openai', base_url: openaiUpstream.url, api_key: 'sk-upstream-test', models: { [EMBEDDING]: 'text-embedding-3-small' } } });
  account = await seedAccount(gateway, { balanceUsd: 5 });
});

afterAll(async () => {
  await gateway?.close();
  await openaiUpstream?.close();
  await anthropicUpstream?.close();
});

const lastBody = (upstream: { requests: Array<{ body: unknown }> }): Record<string, unknown> => upstream.requests.at(-1)?.body as Record<string, unknown>;

describe('forwarding the header-named end customer', () => {
  const openai = (): OpenAI => new OpenAI({ apiKey: account.key, baseURL: gateway.baseURL, maxRetries: 0 });
  const anthropic = (): Anthropic => new Anthropic({ apiKey: account.key, baseURL: gateway.url, maxRetries: 0 });
  const messages = [{ role: 'user' as const, content: 'hello' }];

  it('OpenAI chat passed through: the header becomes `user`; a body `user` or `safety_identifier` stays; none sends none', async () => {
    await openai().chat.completions.create({ model: GPT, messages }, { headers: { 'x-gateway-customer': 'acme' } });
    expect(lastBody(openaiUpstream).user).toBe('acme');
    await openai().chat.completions.create({ model: GPT, messages, user: 'own-user' }, { headers: { 'x-gateway-customer': 'acme' } });
    expect(lastBody(openaiUpstream).user).toBe('own-user');
    await openai().chat.completions.create({ model: GPT, messages, safety_identifier: 'hashed-1' } as OpenAI.ChatCompletionCreateParamsNonStreaming, { headers: { 'x-gateway-customer': 'acme' } });
    expect(lastBody(openaiUpstream).user).toBeUndefined();
    expect(lastBody(openaiUpstream).safety_identifier).toBe('hashed-1');
    await openai().chat.completions.create({ model: GPT, messages }, { headers: { 'x-gateway-tags': 'team=search' } });
    expect('user' in lastBody(openaiUpstream)).toBe(false);
  });

  it('OpenAI embeddings: the header becomes `user`', async () => {
    await openai().embeddings.create({ model: EMBEDDING, input: 'hello' }, { headers: { 'x-gateway-customer': 'acme' } });
    expect(openaiUpstream.requests.at(-1)?.path).toMatch(/\/embeddings$/);
    expect(lastBody(openaiUpstream).user).toBe('acme');
    await openai().embeddings.create({ model: EMBEDDING, input: 'hello' });
    expect('user' in lastBody(openaiUpstream)).toBe(false);
  });

  it('Anthropic Messages passed through: the header becomes metadata.user_id, beside metadata the body has; none sends none', async () => {
    await anthropic().messages.create({ model: CLAUDE, max_tokens: 16, messages }, { headers: { 'x-gateway-customer': 'acme' } });
    expect(lastBody(anthropicUpstream).metadata).toEqual({ user_id: 'acme' });
    await anthropic().messages.create({ model: CLAUDE, max_tokens: 16, messages, metadata: { user_id: 'own-id' } }, { headers: { 'x-gateway-customer': 'acme' } });
    expect(lastBody(anthropicUpstream).metadata).toEqual({ user_id: 'own-id' });
    await anthropic().messages.create({ model: CLAUDE, max_tokens: 16, messages });
    expect(lastBody(anthropicUpstream).metadata).toBeUndefined();
  });

  it('translated: an OpenAI request to a Claude model carries the header customer as metadata.user_id', async () => {
    await openai().chat.completions.create({ model: CLAUDE, messages, max_tokens: 16 }, { headers: { 'x-gateway-customer': 'acme' } });
    expect(lastBody(anthropicUpstream).metadata).toEqual({ user_id: 'acme' });
    await openai().chat.completions.create({ model: CLAUDE, messages, max_tokens: 16 });
    expect(lastBody(anthropicUpstream).metadata).toBeUndefined();
  });

  it('OpenAI Responses: the header becomes `user` upstream, but the answer echoes only what the caller sent (passed through, streamed, translated)', async () => {
    const headers = { 'x-gateway-customer': 'acme' };
    const plain = await openai().responses.create({ model: GPT, input: 'hello' }, { headers });
    expect(openaiUpstream.requests.at(-1)?.path).toMatch(/\/responses$/);
    expect(lastBody(openaiUpstream).user).toBe('acme');
    expect(plain.user ?? null).toBeNull();
    expect(plain.output_text).not.toBe('');

    const stream = await openai().responses.create({ model: GPT, input: 'hello', stream: true }, { headers });
    const echoed: Array<[string, unknown]> = [];
    for await (const event of stream) {
      if ('response' in event) echoed.push([event.type, (event.response as { user?: unknown }).user ?? null]);
    }
    expect(lastBody(openaiUpstream).user).toBe('acme');
    expect(echoed.map(([type]) => type)).toContain('response.completed');
    expect(echoed.filter(([, user]) => user !== null)).toEqual([]);

    const own = await openai().responses.create({ model: GPT, input: 'hello', user: 'own-user' }, { headers });
    expect(lastBody(openaiUpstream).user).toBe('own-user');
    expect(own.user).toBe('own-user');

    const translated = await openai().responses.create({ model: CLAUDE, input: 'hello', max_output_tokens: 16 }, { headers });
    expect(lastBody(anthropicUpstream).metadata).toEqual({ user_id: 'acme' });
    expect(translated.user ?? null).toBeNull();
    const translatedStream = await openai().responses.create({ model: CLAUDE, input: 'hello', max_output_tokens: 16, stream: true }, { headers });
    const translatedEchoes: unknown[] = [];
    for await (const event of translatedStream) if ('response' in event) translatedEchoes.push((event.response as { user?: unknown }).user ?? null);
    expect(translatedEchoes.length).toBeGreaterThan(0);
    expect(translatedEchoes.filter((user) => user !== null)).toEqual([]);
    const translatedOwn = await openai().responses.create({ model: CLAUDE, input: 'hello', max_output_tokens: 16, user: 'own-user' }, { headers });
    expect(translatedOwn.user).toBe('own-user');
  });
});
