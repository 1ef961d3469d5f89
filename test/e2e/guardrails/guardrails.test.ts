import Anthropic from '@anthropic-ai/sdk';
import { ApiError, GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, flushWrites, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from '../../support/mock-anthropic-upstream.js';
import { startMockGeminiUpstream, type MockGeminiUpstream } from '../../support/mock-gemini-upstream.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';

/**
 * Guardrail policies over real HTTP with the official SDKs against mock upstreams (which echo the last user text):
 * a card number masked reversibly before the upstream sees it and restored in the answer, a denied word refused with
 * the family's error object before any upstream call, an answer stopped mid-stream with the family's error event,
 * and what ran in the `x-gateway-guardrails` header and on the usage row. Runs on PostgreSQL when TEST_DATABASE_URL
 * names one.
 */
let gateway: TestGateway;
let openaiUpstream: MockOpenAIUpstream;
let anthropicUpstream: MockAnthropicUpstream;
let geminiUpstream: MockGeminiUpstream;
/** Bound to the account: card masking and the input deny list. */
let guarded: SeededAccount;
/** Another account of the same deployment: no policies. */
let plain: SeededAccount;
/** A key of `guarded` that also carries the output block. */
let outputKey: string;
/** A key of a third account whose answers (text and reasoning) have email addresses masked. */
let reasoningKey: string;

const CARD = '4111 1111 1111 1111';

beforeAll(async () => {
  openaiUpstream = await startMockOpenAIUpstream();
  anthropicUpstream = await startMockAnthropicUpstream();
  geminiUpstream = await startMockGeminiUpstream();
  gateway = await startTestGateway();
  await addRoutedModel(gateway, { model: 'chat-openai', channel: { name: 'o', type: 'openai', base_url: openaiUpstream.url, api_key: 'sk-upstream-test', models: { 'chat-openai': 'gpt-4o-mini' } } });
  await addRoutedModel(gateway, { model: 'chat-anthropic', channel: { name: 'a', type: 'anthropic', base_url: anthropicUpstream.url, api_key: 'sk-ant-upstream-test', models: { 'chat-anthropic': 'claude-sonnet-4-5' } } });
  await addRoutedModel(gateway, { model: 'chat-gemini', channel: { name: 'g', type: 'gemini', base_url: geminiUpstream.url, api_key: 'gemini-upstream-test', models: { 'chat-gemini': 'gemini-2.5-flash' } } });
  await gateway.gateway.services.catalog.reload();
  guarded = await seedAccount(gateway, { balanceUsd: 20 });
  plain = await seedAccount(gateway, { balanceUsd: 20 });
  for (const policy of [
    { name: 'cards', kind: 'pii', mode: 'mask', applies_to: 'input', settings: { detectors: ['card'], reversible: true } },
    { name: 'no-zanzibar', kind: 'deny_list', mode: 'block', applies_to: 'input', settings: { words: ['zanzibar'] } },
    { name: 'no-heron-out', kind: 'deny_list', mode: 'block', applies_to: 'output', settings: { words: ['heron'] } },
    { name: 'emails-out', kind: 'pii', mode: 'mask', applies_to: 'output', settings: { detectors: ['email'] } },
  ]) {
    const created = await gateway.admin('POST', '/admin/guardrails', policy);
    expect(created.status).toBe(201);
  }
  const bound = await gateway.admin('PATCH', `/admin/accounts/${guarded.accountId}`, { guardrails: ['cards', 'no-zanzibar'] });
  expect(bound.status).toBe(200);
  const key = await gateway.admin<{ id: string; key: string; guardrails: string[] }>('POST', `/admin/accounts/${guarded.accountId}/keys`, { name: 'out', guardrails: ['no-heron-out'] });
  expect(key.status).toBe(201);
  expect(key.body.guardrails).toEqual(['no-heron-out']);
  outputKey = key.body.key;
  const thinker = await seedAccount(gateway, { balanceUsd: 20 });
  const reasoning = await gateway.admin<{ key: string }>('POST', `/admin/accounts/${thinker.accountId}/keys`, { name: 'reasoning', guardrails: ['emails-out'] });
  expect(reasoning.status).toBe(201);
  reasoningKey = reasoning.body.key;
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([openaiUpstream?.close(), anthropicUpstream?.close(), geminiUpstream?.close()]);
});

const lastBodyText = (upstream: { requests: Array<{ body: unknown }> }): string => JSON.stringify(upstream.requests.at(-1)?.body ?? null);

describe('admin API of guardrail policies', () => {
  it('validates, refuses a taken name, an unknown bound name, and deleting a bound policy', async () => {
    const bad = await gateway.admin<{ error: { code: string; param?: string } }>('POST', '/admin/guardrails', { name: 'x', kind: 'pii', mode: 'mask', applies_to: 'input', settings: { detectors: ['nope'] } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('bad_request');
    const badPattern = await gateway.admin('POST', '/admin/guardrails', { name: 'y', kind: 'deny_list', mode: 'block', applies_to: 'both', settings: { patterns: ['(a+)+'] } });
    expect(badPattern.status).toBe(400);
    const maskingVerdict = await gateway.admin<{ error: { param?: string } }>('POST', '/admin/guardrails', { name: 'mod', kind: 'moderation', mode: 'mask', applies_to: 'input' });
    expect(maskingVerdict.status).toBe(400);
    expect(maskingVerdict.body.error.param).toBe('mode');
    const taken = await gateway.admin('POST', '/admin/guardrails', { name: 'cards', kind: 'pii', mode: 'log', applies_to: 'input' });
    expect(taken.status).toBe(409);
    const unknown = await gateway.admin<{ error: { param?: string } }>('PATCH', `/admin/accounts/${plain.accountId}`, { guardrails: ['no-such-policy'] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.param).toBe('guardrails');
    const unknownOnModel = await gateway.admin('PATCH', '/admin/models/chat-openai', { guardrails: ['no-such-policy'] });
    expect(unknownOnModel.status).toBe(400);

    const list = await gateway.admin<{ data: Array<{ id: string; name: string; bound_to: Array<{ scope: string; id: string }> }> }>('GET', '/admin/guardrails');
    const cards = list.body.data.find((entry) => entry.name === 'cards');
    expect(cards?.bound_to).toEqual([{ scope: 'account', id: guarded.accountId }]);
    const refused = await gateway.admin('DELETE', `/admin/guardrails/${cards?.id}`);
    expect(refused.status).toBe(409);

    const temp = await gateway.admin<{ id: string }>('POST', '/admin/guardrails', { name: 'temp', kind: 'pii', mode: 'log', applies_to: 'both' });
    const renamed = await gateway.admin<{ name: string; mode: string }>('PATCH', `/admin/guardrails/${temp.body.id}`, { name: 'temp-2', mode: 'mask' });
    expect(renamed.body).toMatchObject({ name: 'temp-2', mode: 'mask' });
    expect((await gateway.admin('DELETE', `/admin/guardrails/${temp.body.id}`)).status).toBe(200);
    expect((await gateway.admin('GET', `/admin/guardrails/${temp.body.id}`)).status).toBe(404);
    const account = await gateway.admin<{ guardrails: string[] }>('GET', `/admin/accounts/${guarded.accountId}`);
    expect(account.body.guardrails).toEqual(['cards', 'no-zanzibar']);
  });
});

describe('a card number is masked before the upstream sees it and restored in the answer', () => {
  it('OpenAI chat to an OpenAI upstream (the same family takes the checked path)', async () => {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: guarded.key, maxRetries: 0 });
    const { data, response } = await client.chat.completions.create({ model: 'chat-openai', messages: [{ role: 'user', content: `My card is ${CARD}, thanks` }] }).withResponse();
    expect(lastBodyText(openaiUpstream)).not.toContain(CARD);
    expect(lastBodyText(openaiUpstream)).toContain('[CARD_1]');
    expect(data.choices[0]?.message.content).toContain(CARD);
    expect(response.headers.get('x-gateway-guardrails')).toBe('cards/input=masked;1, no-zanzibar/input=passed;0');
  });

  it('OpenAI chat streamed: the placeholder is restored across chunks', async () => {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: guarded.key, maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: 'chat-anthropic', stream: true, messages: [{ role: 'user', content: `Card ${CARD} please` }] });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(lastBodyText(anthropicUpstream)).not.toContain(CARD);
    expect(text).toContain(CARD);
  });

  it('a tool result carrying a card number is masked too', async () => {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: guarded.key, maxRetries: 0 });
    await client.chat.completions.create({
      model: 'chat-openai',
      messages: [
        { role: 'user', content: 'What is on file?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: `card on file: ${CARD}` },
      ],
      tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } }],
    });
    expect(lastBodyText(openaiUpstream)).not.toContain(CARD);
    expect(lastBodyText(openaiUpstream)).toContain('[CARD_1]');
  });

  it('OpenAI Responses', async () => {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: guarded.key, maxRetries: 0 });
    const answer = await client.responses.create({ model: 'chat-openai', input: `Remember ${CARD}` });
    expect(lastBodyText(openaiUpstream)).not.toContain(CARD);
    expect(answer.output_text).toContain(CARD);
  });

  it('Anthropic messages', async () => {
    const client = new Anthropic({ baseURL: gateway.url, apiKey: guarded.key, maxRetries: 0 });
    const { data, response } = await client.messages.create({ model: 'chat-anthropic', max_tokens: 200, system: `Card holder ${CARD}`, messages: [{ role: 'user', content: `Pay with ${CARD}` }] }).withResponse();
    expect(lastBodyText(anthropicUpstream)).not.toContain(CARD);
    const text = data.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
    expect(text).toContain(CARD);
    expect(response.headers.get('x-gateway-guardrails')).toContain('cards/input=masked;2');
  });

  it('Gemini generateContent', async () => {
    const client = new GoogleGenAI({ apiKey: guarded.key, httpOptions: { baseUrl: gateway.url } });
    const answer = await client.models.generateContent({ model: 'chat-gemini', contents: `Card ${CARD}` });
    expect(lastBodyText(geminiUpstream)).not.toContain(CARD);
    expect(answer.text).toContain(CARD);
    expect(answer.sdkHttpResponse?.headers?.['x-gateway-guardrails']).toContain('cards/input=masked;1');
  });

  it('an account without policies is untouched (its body goes upstream as it came)', async () => {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: plain.key, maxRetries: 0 });
    const { data, response } = await client.chat.completions.create({ model: 'chat-openai', messages: [{ role: 'user', content: `My card is ${CARD}` }] }).withResponse();
    expect(lastBodyText(openaiUpstream)).toContain(CARD);
    expect(data.choices[0]?.message.content).toContain(CARD);
    expect(response.headers.get('x-gateway-guardrails')).toBeNull();
  });
});

describe('a denied word is refused before any upstream call, in each family\'s error object', () => {
  const prompt = 'Tell me about Zanzibar';

  it('OpenAI chat and Responses', async () => {
    const before = openaiUpstream.requests.length;
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: guarded.key, maxRetries: 0 });
    const error = await client.chat.completions.create({ model: 'chat-openai', messages: [{ role: 'user', content: prompt }] }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const failure = error as InstanceType<typeof OpenAI.BadRequestError>;
    expect(failure.code).toBe('guardrail_blocked');
    expect(failure.message).toContain("'no-zanzibar'");
    expect(failure.message.toLowerCase()).not.toContain('zanzibar about');
    expect(failure.headers.get('x-gateway-guardrails')).toContain('no-zanzibar/input=blocked;1');
    const responses = await client.responses.create({ model: 'chat-openai', input: prompt }).catch((caught: unknown) => caught);
    expect(responses).toBeInstanceOf(OpenAI.BadRequestError);
    expect(openaiUpstream.requests.length).toBe(before);
  });

  it('Anthropic messages', async () => {
    const before = anthropicUpstream.requests.length;
    const client = new Anthropic({ baseURL: gateway.url, apiKey: guarded.key, maxRetries: 0 });
    const error = await client.messages.create({ model: 'chat-anthropic', max_tokens: 50, messages: [{ role: 'user', content: prompt }] }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    const body = (error as InstanceType<typeof Anthropic.BadRequestError>).error as { type: string; error: { type: string; code: string; message: string } };
    expect(body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', code: 'guardrail_blocked' } });
    expect(anthropicUpstream.requests.length).toBe(before);
  });

  it('Gemini generateContent', async () => {
    const before = geminiUpstream.requests.length;
    const client = new GoogleGenAI({ apiKey: guarded.key, httpOptions: { baseUrl: gateway.url } });
    const error = await client.models.generateContent({ model: 'chat-gemini', contents: prompt }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(400);
    expect(geminiUpstream.requests.length).toBe(before);
  });
});

describe('output policies', () => {
  it('a unary answer with a denied word is refused', async () => {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: outputKey, maxRetries: 0 });
    const error = await client.chat.completions.create({ model: 'chat-openai', messages: [{ role: 'user', content: 'Say heron' }] }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).message).toContain("'no-heron-out'");
  });

  it('OpenAI stream: ends with the error event, the text before it delivered', async () => {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: outputKey, maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: 'chat-openai', stream: true, messages: [{ role: 'user', content: 'A long sentence first, then the bird heron at the end' }] });
    let text = '';
    const error = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    })().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(String((error as Error).message)).toContain('no-heron-out');
    expect(text.toLowerCase()).not.toContain('heron');
  });

  it('Anthropic stream: ends with its error event', async () => {
    const client = new Anthropic({ baseURL: gateway.url, apiKey: outputKey, maxRetries: 0 });
    const stream = client.messages.stream({ model: 'chat-anthropic', max_tokens: 200, messages: [{ role: 'user', content: 'Say heron' }] });
    const error = await stream.finalMessage().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.APIError);
  });

  it('Gemini stream: ends with its error', async () => {
    const client = new GoogleGenAI({ apiKey: outputKey, httpOptions: { baseUrl: gateway.url } });
    const error = await (async () => {
      for await (const _chunk of await client.models.generateContentStream({ model: 'chat-gemini', contents: 'Say heron' })) {
        // drain until the error
      }
    })().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Error);
  });

  it('Anthropic thinking is checked too: an email in the reasoning is masked, whole and streamed', async () => {
    const client = new Anthropic({ baseURL: gateway.url, apiKey: reasoningKey, maxRetries: 0 });
    const request = { model: 'chat-anthropic', max_tokens: 2048, thinking: { type: 'enabled' as const, budget_tokens: 1024 }, messages: [{ role: 'user' as const, content: 'Write to ann.lee@example.com about the heron' }] };
    // The upstream saw the address (no input policy), and thought about it.
    const whole = await client.messages.create(request);
    expect(lastBodyText(anthropicUpstream)).toContain('ann.lee@example.com');
    const thinking = whole.content.find((block) => block.type === 'thinking');
    expect(thinking?.type === 'thinking' ? thinking.thinking : '').toContain('[EMAIL]');
    expect(JSON.stringify(whole.content)).not.toContain('ann.lee@example.com');
    const streamed = await client.messages.stream(request).finalMessage();
    const streamedThinking = streamed.content.find((block) => block.type === 'thinking');
    expect(streamedThinking?.type === 'thinking' ? streamedThinking.thinking : '').toContain('Thinking about: Write to [EMAIL]');
    expect(JSON.stringify(streamed.content)).not.toContain('ann.lee@example.com');
  });

  it('the usage rows say what ran, never the text', async () => {
    await flushWrites(gateway);
    const usage = await gateway.admin<{ data: Array<{ status: number; error_code: string | null; stream: boolean; guardrails: Array<{ name: string; direction: string; outcome: string; count: number }> }> }>('GET', `/admin/usage?account_id=${guarded.accountId}&limit=200`);
    const rows = usage.body.data;
    expect(rows.some((row) => row.guardrails.some((hit) => hit.name === 'cards' && hit.outcome === 'masked' && hit.count >= 1))).toBe(true);
    const blockedIn = rows.find((row) => row.error_code === 'guardrail_blocked' && row.guardrails.some((hit) => hit.name === 'no-zanzibar' && hit.outcome === 'blocked'));
    expect(blockedIn?.status).toBe(400);
    const blockedStream = rows.find((row) => row.stream && row.error_code === 'guardrail_blocked');
    expect(blockedStream?.guardrails).toContainEqual({ name: 'no-heron-out', direction: 'output', outcome: 'blocked', count: 1 });
    expect(JSON.stringify(rows)).not.toContain('4111');
    const plainRows = await gateway.admin<{ data: Array<{ guardrails: unknown[] }> }>('GET', `/admin/usage?account_id=${plain.accountId}&limit=10`);
    expect(plainRows.body.data.every((row) => row.guardrails.length === 0)).toBe(true);
  });
});
