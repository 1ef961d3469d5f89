import Anthropic from '@anthropic-ai/sdk';
import { ApiError, GoogleGenAI, Type } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, flushWrites, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { splitIntoTokens as anthropicPieces, startMockAnthropicUpstream, type MockAnthropicUpstream } from '../../support/mock-anthropic-upstream.js';
import { startMockGeminiUpstream, type MockGeminiUpstream } from '../../support/mock-gemini-upstream.js';
import { splitWords as geminiWords } from '../../support/mock-gemini-upstream-answers.js';
import { splitIntoTokens, startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';

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
/** A key of a third account whose answers (text, reasoning and tool calls) have email addresses and cards masked. */
let reasoningKey: string;
/** Keys of `guarded` whose answers may not say `whale`, or the phrase `grey whale`. */
let whaleKey: string;
let greyWhaleKey: string;

const CARD = '4111 1111 1111 1111';

beforeAll(async () => {
  openaiUpstream = await startMockOpenAIUpstream();
  anthropicUpstream = await startMockAnthropicUpstream();
  geminiUpstream = await startMockGeminiUpstream();
  gateway = await startTestGateway();
  await addRoutedModel(gateway, { model: 'chat-openai', channel: { name: 'o', type: 'openai', base_url: openaiUpstream.url, api_key: 'sk-upstream-test', models: { 'chat-openai': 'gpt-4o-mini' } } });
  await addRoutedModel(gateway, { model: 'chat-anthropic', channel: { name: 'a', type: 'anthropic', base_url: anthropicUpstream.url, api_key: 'sk-ant-upstream-test', models: { 'chat-anthropic': 'claude-sonnet-4-5' } } });
  await addRoutedModel(gateway, { model: 'chat-guarded', channel: { name: 'o2', type: 'openai', base_url: openaiUpstream.url, api_key: 'sk-upstream-test', models: { 'chat-guarded': 'gpt-4o-mini' } } });
  await addRoutedModel(gateway, { model: 'chat-gemini', channel: { name: 'g', type: 'gemini', base_url: geminiUpstream.url, api_key: 'gemini-upstream-test', models: { 'chat-gemini': 'gemini-2.5-flash' } } });
  await gateway.gateway.services.catalog.reload();
  guarded = await seedAccount(gateway, { balanceUsd: 20 });
  plain = await seedAccount(gateway, { balanceUsd: 20 });
  for (const policy of [
    { name: 'cards', kind: 'pii', mode: 'mask', applies_to: 'input', settings: { detectors: ['card'], reversible: true } },
    { name: 'no-zanzibar', kind: 'deny_list', mode: 'block', applies_to: 'input', settings: { words: ['zanzibar'] } },
    { name: 'no-heron-out', kind: 'deny_list', mode: 'block', applies_to: 'output', settings: { words: ['heron'] } },
    { name: 'emails-out', kind: 'pii', mode: 'mask', applies_to: 'output', settings: { detectors: ['email'] } },
    { name: 'cards-out', kind: 'pii', mode: 'mask', applies_to: 'output', settings: { detectors: ['card'] } },
    { name: 'no-whale-out', kind: 'deny_list', mode: 'block', applies_to: 'output', settings: { words: ['whale'] } },
    { name: 'no-grey-whale-out', kind: 'deny_list', mode: 'block', applies_to: 'output', settings: { words: ['grey whale'] } },
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
  const reasoning = await gateway.admin<{ key: string }>('POST', `/admin/accounts/${thinker.accountId}/keys`, { name: 'reasoning', guardrails: ['emails-out', 'cards-out'] });
  expect(reasoning.status).toBe(201);
  reasoningKey = reasoning.body.key;
  for (const [name, assign] of [['no-whale-out', (key: string) => (whaleKey = key)], ['no-grey-whale-out', (key: string) => (greyWhaleKey = key)]] as const) {
    const created = await gateway.admin<{ key: string }>('POST', `/admin/accounts/${guarded.accountId}/keys`, { name, guardrails: [name] });
    expect(created.status).toBe(201);
    assign(created.body.key);
  }
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
    // Named as the operator knows it: the account by its email.
    const guardedEmail = (await gateway.admin<{ email: string }>('GET', `/admin/accounts/${guarded.accountId}`)).body.email;
    expect(cards?.bound_to).toEqual([{ scope: 'account', id: guarded.accountId, name: guardedEmail }]);
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
    const { data: stream, response } = await client.chat.completions.create({ model: 'chat-anthropic', stream: true, messages: [{ role: 'user', content: `Card ${CARD} please` }] }).withResponse();
    // A stream's header goes before its answer: it names the input policies' results.
    expect(response.headers.get('x-gateway-guardrails')).toBe('cards/input=masked;1, no-zanzibar/input=passed;0');
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

  it('OpenAI Responses: a tool\'s output (function_call_output) is masked, and a streamed answer restores the card', async () => {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: guarded.key, maxRetries: 0 });
    await client.responses.create({
      model: 'chat-openai',
      input: [
        { role: 'user', content: 'What is on file?' },
        { type: 'function_call', call_id: 'call_9', name: 'lookup', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_9', output: `card on file: ${CARD}` },
      ],
      tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} }, strict: false }],
    });
    expect(lastBodyText(openaiUpstream)).not.toContain(CARD);
    expect(lastBodyText(openaiUpstream)).toContain('[CARD_1]');
    let text = '';
    for await (const event of await client.responses.create({ model: 'chat-openai', stream: true, input: `Remember ${CARD} for me` })) {
      if (event.type === 'response.output_text.delta') text += event.delta;
    }
    expect(lastBodyText(openaiUpstream)).not.toContain(CARD);
    expect(text).toContain(CARD);
  });

  it('Anthropic messages: a tool_result is masked, and a streamed answer restores the card', async () => {
    const client = new Anthropic({ baseURL: gateway.url, apiKey: guarded.key, maxRetries: 0 });
    await client.messages.create({
      model: 'chat-anthropic',
      max_tokens: 200,
      tools: [{ name: 'lookup', input_schema: { type: 'object', properties: {} } }],
      messages: [
        { role: 'user', content: 'What is on file?' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: `card on file: ${CARD}` }] },
      ],
    });
    expect(lastBodyText(anthropicUpstream)).not.toContain(CARD);
    expect(lastBodyText(anthropicUpstream)).toContain('[CARD_1]');
    const streamed = await client.messages.stream({ model: 'chat-anthropic', max_tokens: 200, messages: [{ role: 'user', content: `Pay with ${CARD} today` }] }).finalMessage();
    expect(lastBodyText(anthropicUpstream)).not.toContain(CARD);
    expect(streamed.content.map((block) => (block.type === 'text' ? block.text : '')).join('')).toContain(CARD);
  });

  it('Gemini: a functionResponse is masked, and a streamed answer restores the card', async () => {
    const client = new GoogleGenAI({ apiKey: guarded.key, httpOptions: { baseUrl: gateway.url } });
    await client.models.generateContent({
      model: 'chat-gemini',
      contents: [
        { role: 'user', parts: [{ text: 'What is on file?' }] },
        { role: 'model', parts: [{ functionCall: { name: 'lookup', args: {} } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'lookup', response: { output: `card on file: ${CARD}` } } }] },
      ],
      config: { tools: [{ functionDeclarations: [{ name: 'lookup', parameters: { type: Type.OBJECT, properties: {} } }] }] },
    });
    expect(lastBodyText(geminiUpstream)).not.toContain(CARD);
    expect(lastBodyText(geminiUpstream)).toContain('[CARD_1]');
    let text = '';
    for await (const chunk of await client.models.generateContentStream({ model: 'chat-gemini', contents: `Card ${CARD} again` })) text += chunk.text ?? '';
    expect(lastBodyText(geminiUpstream)).not.toContain(CARD);
    expect(text).toContain(CARD);
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

describe('a policy bound to a model (the operator\'s default for it)', () => {
  it('runs for every account\'s requests to that model, beside the account\'s own, and stops when unbound', async () => {
    const bound = await gateway.admin<{ guardrails: string[] }>('PATCH', '/admin/models/chat-guarded', { guardrails: ['emails-out'] });
    expect(bound.status).toBe(200);
    const other = await seedAccount(gateway, { balanceUsd: 20 });
    const ask = async (key: string, model: string) => new OpenAI({ baseURL: gateway.baseURL, apiKey: key, maxRetries: 0 }).chat.completions.create({ model, messages: [{ role: 'user', content: 'Write to ann.lee@example.com' }] }).withResponse();
    const plainAnswer = await ask(other.key, 'chat-guarded');
    expect(plainAnswer.data.choices[0]?.message.content).toContain('[EMAIL]');
    expect(plainAnswer.response.headers.get('x-gateway-guardrails')).toBe('emails-out/output=masked;1');
    // The guarded account runs the model's policy after its own.
    const guardedAnswer = await ask(guarded.key, 'chat-guarded');
    expect(guardedAnswer.response.headers.get('x-gateway-guardrails')).toBe('cards/input=passed;0, no-zanzibar/input=passed;0, emails-out/output=masked;1');
    // Another model is not touched.
    expect((await ask(other.key, 'chat-openai')).data.choices[0]?.message.content).toContain('ann.lee@example.com');
    expect((await gateway.admin('PATCH', '/admin/models/chat-guarded', { guardrails: [] })).status).toBe(200);
    await expect.poll(async () => (await ask(other.key, 'chat-guarded')).data.choices[0]?.message.content).toContain('ann.lee@example.com');
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
    const streamed = await client.responses.create({ model: 'chat-openai', input: prompt, stream: true }).catch((caught: unknown) => caught);
    expect(streamed).toBeInstanceOf(OpenAI.BadRequestError);
    expect((streamed as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('guardrail_blocked');
    expect(openaiUpstream.requests.length).toBe(before);
  });

  it('in a tool\'s output too: Responses function_call_output and chat tool messages', async () => {
    const before = openaiUpstream.requests.length;
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: guarded.key, maxRetries: 0 });
    const responses = await client.responses.create({
      model: 'chat-openai',
      input: [
        { role: 'user', content: 'Where to?' },
        { type: 'function_call', call_id: 'call_z', name: 'lookup', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_z', output: [{ type: 'input_text', text: 'Destination: Zanzibar' }] },
      ],
      tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} }, strict: false }],
      stream: true,
    }).catch((caught: unknown) => caught);
    expect(responses).toBeInstanceOf(OpenAI.BadRequestError);
    expect((responses as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('guardrail_blocked');
    const chat = await client.chat.completions.create({
      model: 'chat-openai',
      messages: [
        { role: 'user', content: 'Where to?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_z', type: 'function', function: { name: 'lookup', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_z', content: 'Destination: Zanzibar' },
      ],
    }).catch((caught: unknown) => caught);
    expect(chat).toBeInstanceOf(OpenAI.BadRequestError);
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
    // Google's envelope with the spec's fields: { error: { code, message, type, status: 'INVALID_ARGUMENT' } }, naming the policy.
    const body = JSON.parse((error as ApiError).message) as { error: { code: string; type: string; status: string; message: string } };
    expect(body.error).toMatchObject({ code: 'guardrail_blocked', type: 'invalid_request_error', status: 'INVALID_ARGUMENT' });
    expect(body.error.message).toContain("'no-zanzibar'");
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

  it('OpenAI stream: a word split across chunks ends it with the error event, the text before it delivered', async () => {
    const prompt = 'A long sentence first, then the bird heron at the end';
    // The mock upstream streams pieces of at most four characters: the word reaches the gateway in two chunks.
    expect(splitIntoTokens(prompt)).toContain(' hero');
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: outputKey, maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: 'chat-openai', stream: true, messages: [{ role: 'user', content: prompt }] });
    let text = '';
    const error = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    })().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(String((error as Error).message)).toContain('no-heron-out');
    expect(text.toLowerCase()).not.toContain('heron');
    expect(text).toContain('A long sentence first');
  });

  /** The mock Anthropic upstream's text deltas: its pieces of at most four characters, three to a delta. */
  const anthropicDeltas = (text: string): string[] => {
    const pieces = anthropicPieces(text);
    const deltas: string[] = [];
    for (let at = 0; at < pieces.length; at += 3) deltas.push(pieces.slice(at, at + 3).join(''));
    return deltas;
  };

  it('Anthropic stream: a word split across two deltas ends it with the error event, the text before it delivered', async () => {
    const prompt = 'Calm words come first, then a grey whale';
    // The upstream's deltas split the word: one ends in "whal", the next starts with "e".
    expect(anthropicDeltas(`Echo: ${prompt}`)).toEqual(expect.arrayContaining([expect.stringMatching(/whal$/), 'e']));
    const client = new Anthropic({ baseURL: gateway.url, apiKey: whaleKey, maxRetries: 0 });
    let text = '';
    const stream = client.messages.stream({ model: 'chat-anthropic', max_tokens: 200, messages: [{ role: 'user', content: prompt }] });
    stream.on('text', (delta) => {
      text += delta;
    });
    const error = await stream.finalMessage().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect((error as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { message: expect.stringContaining("'no-whale-out'") } });
    expect(text).toContain('Calm words come first');
    expect(text.toLowerCase()).not.toContain('whal');
  });

  it('Gemini stream: a phrase split across two chunks ends it with the error, the text before it delivered', async () => {
    const prompt = 'Calm words first, then grey whale';
    // The upstream streams three words a chunk: "grey" ends one chunk, "whale" starts the next.
    const words = geminiWords(`Echo: ${prompt}`);
    const chunks: string[] = [];
    for (let at = 0; at < words.length; at += 3) chunks.push(words.slice(at, at + 3).join(''));
    expect(chunks).toEqual(expect.arrayContaining([expect.stringMatching(/grey$/), ' whale']));
    const client = new GoogleGenAI({ apiKey: greyWhaleKey, httpOptions: { baseUrl: gateway.url } });
    let text = '';
    const error = await (async () => {
      for await (const chunk of await client.models.generateContentStream({ model: 'chat-gemini', contents: prompt })) text += chunk.text ?? '';
    })().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toContain("'no-grey-whale-out'");
    expect(text).toContain('Calm words first');
    expect(text.toLowerCase()).not.toContain('whale');
  });

  it('Gemini stream of a model whose upstream splits a word across chunks: ends with the error', async () => {
    const prompt = 'Calm words come first, then a grey whale';
    expect(anthropicDeltas(`Echo: ${prompt}`)).toEqual(expect.arrayContaining([expect.stringMatching(/whal$/), 'e']));
    const client = new GoogleGenAI({ apiKey: whaleKey, httpOptions: { baseUrl: gateway.url } });
    let text = '';
    const error = await (async () => {
      for await (const chunk of await client.models.generateContentStream({ model: 'chat-anthropic', contents: prompt })) text += chunk.text ?? '';
    })().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toContain("'no-whale-out'");
    expect(text).toContain('Calm words come first');
    expect(text.toLowerCase()).not.toContain('whal');
  });

  it('Responses stream: ends with response.failed and the error event', async () => {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: outputKey, maxRetries: 0 });
    const events: string[] = [];
    const error = await (async () => {
      for await (const event of await client.responses.create({ model: 'chat-anthropic', stream: true, input: 'First some words, then heron' })) events.push(event.type);
    })().catch((caught: unknown) => caught);
    expect(events).toContain('response.output_text.delta');
    expect(events).not.toContain('response.completed');
    // response.failed, then the error event the SDK throws.
    expect(events.at(-1)).toBe('response.failed');
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(String((error as Error).message)).toContain('no-heron-out');
  });

  it('Anthropic stream: ends with its error event', async () => {
    const client = new Anthropic({ baseURL: gateway.url, apiKey: outputKey, maxRetries: 0 });
    const stream = client.messages.stream({ model: 'chat-anthropic', max_tokens: 200, messages: [{ role: 'user', content: 'Say heron' }] });
    const error = await stream.finalMessage().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    // Anthropic's own error event: { type: 'error', error: { type, message } }, naming the policy.
    expect((error as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { message: expect.stringContaining("'no-heron-out'") } });
  });

  it('Gemini stream: ends with its error', async () => {
    const client = new GoogleGenAI({ apiKey: outputKey, httpOptions: { baseUrl: gateway.url } });
    let text = '';
    const error = await (async () => {
      for await (const chunk of await client.models.generateContentStream({ model: 'chat-gemini', contents: 'First a few calm words, then say heron' })) text += chunk.text ?? '';
    })().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Error);
    // Gemini's error object as the stream's last event, naming the policy; the text before the word was delivered.
    expect((error as Error).message).toContain("'no-heron-out'");
    expect(text).toContain('First a few calm words');
    expect(text.toLowerCase()).not.toContain('heron');
  });

  it('a tool call\'s arguments are checked too: a denied word in them stops the answer, whole and streamed, in each family', async () => {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: outputKey, maxRetries: 0 });
    const parameters = { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] };
    const ask = 'What is the weather in Heron Bay';
    const whole = await client.chat.completions.create({ model: 'chat-openai', tools: [{ type: 'function', function: { name: 'get_weather', parameters } }], messages: [{ role: 'user', content: ask }] }).catch((caught: unknown) => caught);
    expect(whole).toBeInstanceOf(OpenAI.BadRequestError);
    expect((whole as Error).message).toContain("'no-heron-out'");

    let args = '';
    const streamed = await (async () => {
      for await (const chunk of await client.chat.completions.create({ model: 'chat-openai', stream: true, tools: [{ type: 'function', function: { name: 'get_weather', parameters } }], messages: [{ role: 'user', content: ask }] })) {
        args += chunk.choices[0]?.delta.tool_calls?.[0]?.function?.arguments ?? '';
      }
    })().catch((caught: unknown) => caught);
    expect(streamed).toBeInstanceOf(OpenAI.APIError);
    expect(args.toLowerCase()).not.toContain('heron');

    const events: string[] = [];
    const responses = await (async () => {
      for await (const event of await client.responses.create({ model: 'chat-anthropic', stream: true, tools: [{ type: 'function', name: 'get_weather', parameters, strict: false }], input: ask })) {
        events.push(event.type);
        if (event.type === 'response.function_call_arguments.delta') expect(event.delta.toLowerCase()).not.toContain('heron');
      }
    })().catch((caught: unknown) => caught);
    expect(responses).toBeInstanceOf(OpenAI.APIError);
    expect(events.at(-1)).toBe('response.failed');

    const claude = new Anthropic({ baseURL: gateway.url, apiKey: outputKey, maxRetries: 0 });
    const message = await claude.messages.create({ model: 'chat-anthropic', max_tokens: 200, tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { location: { type: 'string' } } } }], messages: [{ role: 'user', content: ask }] }).catch((caught: unknown) => caught);
    expect(message).toBeInstanceOf(Anthropic.BadRequestError);
  });

  it('a card in a tool call\'s arguments is masked inside the JSON, whole and streamed', async () => {
    const tools = [{ name: 'get_weather', input_schema: { type: 'object' as const, properties: { location: { type: 'string' } } } }];
    const claude = new Anthropic({ baseURL: gateway.url, apiKey: reasoningKey, maxRetries: 0 });
    const request = { model: 'chat-anthropic', max_tokens: 200, tools, messages: [{ role: 'user' as const, content: `What is the weather in ${CARD}` }] };
    const whole = await claude.messages.create(request);
    const call = whole.content.find((block) => block.type === 'tool_use');
    expect(call?.type === 'tool_use' ? call.input : null).toEqual({ location: '[CARD]' });
    const streamed = await claude.messages.stream(request).finalMessage();
    const streamedCall = streamed.content.find((block) => block.type === 'tool_use');
    expect(streamedCall?.type === 'tool_use' ? streamedCall.input : null).toEqual({ location: '[CARD]' });
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
    const usage = await gateway.admin<{ data: Array<{ status: number; error_code: string | null; stream: boolean; completion_tokens: number | null; cost_usd: number; guardrails: Array<{ name: string; direction: string; outcome: string; count: number }> }> }>('GET', `/admin/usage?account_id=${guarded.accountId}&limit=200`);
    const rows = usage.body.data;
    expect(rows.some((row) => row.guardrails.some((hit) => hit.name === 'cards' && hit.outcome === 'masked' && hit.count >= 1))).toBe(true);
    const blockedIn = rows.find((row) => row.error_code === 'guardrail_blocked' && row.guardrails.some((hit) => hit.name === 'no-zanzibar' && hit.outcome === 'blocked'));
    expect(blockedIn?.status).toBe(400);
    const blockedStream = rows.find((row) => row.stream && row.error_code === 'guardrail_blocked');
    expect(blockedStream?.guardrails).toContainEqual({ name: 'no-heron-out', direction: 'output', outcome: 'blocked', count: 1 });
    // Stopped mid-stream: billed for the text delivered before the stop, not nothing — in every family's stream.
    const stoppedStreams = rows.filter((row) => row.stream && row.error_code === 'guardrail_blocked' && row.guardrails.some((hit) => hit.direction === 'output' && hit.outcome === 'blocked'));
    expect(stoppedStreams.length).toBeGreaterThanOrEqual(4);
    for (const row of stoppedStreams) {
      expect(row.completion_tokens ?? 0).toBeGreaterThan(0);
      expect(row.cost_usd).toBeGreaterThan(0);
    }
    // Refused before any upstream call: nothing billed.
    expect(blockedIn?.cost_usd).toBe(0);
    expect(JSON.stringify(rows)).not.toContain('4111');
    const plainRows = await gateway.admin<{ data: Array<{ guardrails: unknown[] }> }>('GET', `/admin/usage?account_id=${plain.accountId}&limit=10`);
    expect(plainRows.body.data.every((row) => row.guardrails.length === 0)).toBe(true);
  });
});
