import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from '../../support/mock-anthropic-upstream.js';
import { startMockGeminiUpstream, type MockGeminiUpstream } from '../../support/mock-gemini-upstream.js';
import { startMockGuardrailService, type GuardrailCall, type MockGuardrailService } from '../../support/mock-guardrail-service.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';

/**
 * The model-backed guardrails (a webhook in Portkey's shape, a moderation model) see tool calls, as the built-in
 * detectors do, over real HTTP with the official SDKs in every family against mock upstreams: on the way in the
 * arguments of earlier turns' tool calls and the tool results (a word only there refuses the request before any
 * upstream sees it), on the way out the arguments of the calls the model made, whole or streamed (the answer is
 * stopped; a stream ends with its family's error event), shown after the built-in masking. The mock upstreams call
 * the tool a prompt names (`call lookup with {…}`) with the arguments it gives.
 */
let gateway: TestGateway;
let openaiUpstream: MockOpenAIUpstream;
let anthropicUpstream: MockAnthropicUpstream;
let geminiUpstream: MockGeminiUpstream;
let service: MockGuardrailService;
let account: SeededAccount;
const keys: Record<string, string> = {};

const TIMEOUT_MS = 2000;
const LOOKUP = { type: 'function' as const, function: { name: 'lookup', description: 'Looks a thing up.', parameters: { type: 'object', properties: { query: { type: 'string' } } } } };
/** Anthropic's mock fills a `location` argument from the prompt. */
const ANTHROPIC_LOOKUP = { name: 'lookup', description: 'Looks a thing up.', input_schema: { type: 'object' as const, properties: { location: { type: 'string' } } } };

beforeAll(async () => {
  [openaiUpstream, anthropicUpstream, geminiUpstream, service] = await Promise.all([startMockOpenAIUpstream(), startMockAnthropicUpstream(), startMockGeminiUpstream(), startMockGuardrailService()]);
  gateway = await startTestGateway();
  expect((await gateway.admin('POST', '/admin/models', { id: 'omni-moderation-latest', kind: 'moderation', pricing: { per_request: 0.0001 } })).status).toBe(201);
  await addRoutedModel(gateway, { model: 'chat-openai', channel: { name: 'o', type: 'openai', base_url: openaiUpstream.url, api_key: 'sk-upstream-test', models: { 'chat-openai': 'gpt-4o-mini', 'omni-moderation-latest': 'omni-moderation-latest' } } });
  await addRoutedModel(gateway, { model: 'chat-anthropic', channel: { name: 'a', type: 'anthropic', base_url: anthropicUpstream.url, api_key: 'sk-ant-upstream-test', models: { 'chat-anthropic': 'claude-sonnet-4-5' } } });
  await addRoutedModel(gateway, { model: 'chat-gemini', channel: { name: 'g', type: 'gemini', base_url: geminiUpstream.url, api_key: 'gemini-upstream-test', models: { 'chat-gemini': 'gemini-2.5-flash' } } });
  await gateway.gateway.services.catalog.reload();
  account = await seedAccount(gateway, { balanceUsd: 20 });
  const policies = [
    { name: 'hook-in', kind: 'webhook', mode: 'block', applies_to: 'input', settings: { url: `${service.url}/portkey`, timeout_ms: TIMEOUT_MS } },
    { name: 'cards-out', kind: 'pii', mode: 'mask', applies_to: 'output', settings: { detectors: ['card'] } },
    { name: 'hook-out', kind: 'webhook', mode: 'block', applies_to: 'output', settings: { url: `${service.url}/portkey`, timeout_ms: TIMEOUT_MS } },
    { name: 'mod-in', kind: 'moderation', mode: 'block', applies_to: 'input' },
    { name: 'mod-out', kind: 'moderation', mode: 'block', applies_to: 'output' },
  ];
  for (const policy of policies) expect((await gateway.admin('POST', '/admin/guardrails', policy)).status).toBe(201);
  for (const [name, guardrails] of Object.entries({ hookIn: ['hook-in'], hookOut: ['cards-out', 'hook-out'], modIn: ['mod-in'], modOut: ['mod-out'] })) {
    const key = await gateway.admin<{ key: string }>('POST', `/admin/accounts/${account.accountId}/keys`, { name, guardrails });
    expect(key.status).toBe(201);
    keys[name] = key.body.key;
  }
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([openaiUpstream?.close(), anthropicUpstream?.close(), geminiUpstream?.close(), service?.close()]);
});

const openai = (key: string): OpenAI => new OpenAI({ baseURL: gateway.baseURL, apiKey: key, maxRetries: 0 });
const claude = (key: string): Anthropic => new Anthropic({ baseURL: gateway.url, apiKey: key, maxRetries: 0 });
const gemini = (key: string): GoogleGenAI => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gateway.url } });
const upstreamCalls = (): number => openaiUpstream.requests.filter((request) => request.path !== '/v1/moderations').length + anthropicUpstream.requests.length + geminiUpstream.requests.length;
const lastModerationInput = (): string => (openaiUpstream.requests.filter((request) => request.path === '/v1/moderations').at(-1)?.body as { input: string }).input;

/** An earlier turn that called `lookup` with `q`, and the tool's result, in each family's own shape. */
function chatTurns(q: string, result: string): OpenAI.Chat.ChatCompletionMessageParam[] {
  return [
    { role: 'user', content: 'look it up' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: JSON.stringify({ query: q }) } }] },
    { role: 'tool', tool_call_id: 'call_1', content: result },
  ];
}
function anthropicTurns(q: string, result: string): Anthropic.MessageParam[] {
  return [
    { role: 'user', content: 'look it up' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { query: q } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: result }] },
  ];
}
function geminiTurns(q: string, result: string) {
  return [
    { role: 'user', parts: [{ text: 'look it up' }] },
    { role: 'model', parts: [{ functionCall: { name: 'lookup', args: { query: q } } }] },
    { role: 'user', parts: [{ functionResponse: { name: 'lookup', response: { result } } }] },
  ];
}
function responsesTurns(q: string, result: string): OpenAI.Responses.ResponseInputItem[] {
  return [
    { role: 'user', content: 'look it up' },
    { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: JSON.stringify({ query: q }) },
    { type: 'function_call_output', call_id: 'call_1', output: result },
  ];
}

/** Each family's request with an earlier tool call and its result; resolves to the refusal's code, or 'passed'. */
const families: Record<string, (key: string, q: string, result: string) => Promise<string>> = {
  'OpenAI chat': (key, q, result) => openai(key).chat.completions.create({ model: 'chat-openai', tools: [LOOKUP], messages: chatTurns(q, result) }).then(() => 'passed', (error: unknown) => (error as InstanceType<typeof OpenAI.BadRequestError>).code ?? String(error)),
  'OpenAI Responses': (key, q, result) => openai(key).responses.create({ model: 'chat-openai', tools: [{ type: 'function', name: 'lookup', parameters: LOOKUP.function.parameters, strict: false }], input: responsesTurns(q, result) }).then(() => 'passed', (error: unknown) => (error as InstanceType<typeof OpenAI.BadRequestError>).code ?? String(error)),
  'Anthropic messages': (key, q, result) => claude(key).messages.create({ model: 'chat-anthropic', max_tokens: 100, tools: [ANTHROPIC_LOOKUP], messages: anthropicTurns(q, result) }).then(() => 'passed', (error: unknown) => ((error as InstanceType<typeof Anthropic.BadRequestError>).error as { error?: { code?: string } } | undefined)?.error?.code ?? String(error)),
  'Gemini generateContent': (key, q, result) => gemini(key).models.generateContent({ model: 'chat-gemini', contents: geminiTurns(q, result), config: { tools: [{ functionDeclarations: [{ name: 'lookup', parametersJsonSchema: LOOKUP.function.parameters }] }] } }).then(() => 'passed', (error: unknown) => (/guardrail_blocked/.test(String((error as Error).message)) ? 'guardrail_blocked' : String(error))),
};

describe('input: earlier turns\' tool-call arguments and tool results', () => {
  for (const [family, send] of Object.entries(families)) {
    it(`${family}: a webhook is shown the tool call and refuses a word only in its arguments or its result; the moderation model likewise`, async () => {
      const calls = service.calls.length;
      expect(await send(keys.hookIn as string, 'herons', 'fine')).toBe('passed');
      const shown = service.calls.at(-1) as GuardrailCall;
      expect(service.calls.length).toBe(calls + 1);
      const body = shown.body as GuardrailCall['body'] & { tool_calls: Array<{ type: string; function: { name: string; arguments: string } }> };
      expect(body.tool_calls).toEqual([expect.objectContaining({ type: 'function', function: { name: 'lookup', arguments: expect.stringContaining('herons') } })]);
      expect(JSON.stringify(body.request.json.messages)).toContain('herons');
      expect(body.request.text).toContain('herons');
      expect(body.request.text).toContain('fine');

      const before = upstreamCalls();
      expect(await send(keys.hookIn as string, 'forbidden', 'fine')).toBe('guardrail_blocked');
      expect(await send(keys.hookIn as string, 'herons', 'forbidden')).toBe('guardrail_blocked');
      expect(await send(keys.modIn as string, 'attack the castle', 'fine')).toBe('guardrail_blocked');
      expect(lastModerationInput()).toContain('attack the castle');
      expect(upstreamCalls()).toBe(before);
    });
  }
});

/** Drains a stream; resolves to the error that ended it, or null. */
async function drain(stream: AsyncIterable<unknown>): Promise<unknown> {
  try {
    for await (const _event of stream) {
      // until the end or the error event
    }
    return null;
  } catch (error) {
    return error;
  }
}

describe('output: the arguments of the tool calls the model made', () => {
  // The OpenAI and Anthropic mocks fill the argument from the words after `for`; Gemini's takes them as JSON.
  const prompt = (q: string): string => `call lookup for ${q}`;
  const geminiPrompt = (q: string): string => `call lookup with ${JSON.stringify({ query: q })}`;

  it('OpenAI chat, whole: the webhook is shown the call after the built-in masking, and stops one it fails', async () => {
    const { data } = await openai(keys.hookOut as string).chat.completions.create({ model: 'chat-openai', tools: [LOOKUP], messages: [{ role: 'user', content: prompt('card 4111 1111 1111 1111') }] }).withResponse();
    expect(data.choices[0]?.message.tool_calls?.[0]).toMatchObject({ function: { name: 'lookup' } });
    const body = service.calls.at(-1)?.body as GuardrailCall['body'] & { tool_calls: Array<{ function: { arguments: string } }> };
    expect(body.eventType).toBe('afterRequestHook');
    expect(body.tool_calls[0]?.function.arguments).toContain('[CARD');
    expect(JSON.stringify(body.response)).toContain('[CARD');
    expect(JSON.stringify(body.response)).not.toContain('4111');
    const error = await openai(keys.hookOut as string).chat.completions.create({ model: 'chat-openai', tools: [LOOKUP], messages: [{ role: 'user', content: prompt('forbidden') }] }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as Error).message).toContain("'hook-out'");
  });

  it('OpenAI chat, streamed: a call the webhook fails ends the stream with the error event', async () => {
    const stream = await openai(keys.hookOut as string).chat.completions.create({ model: 'chat-openai', stream: true, tools: [LOOKUP], messages: [{ role: 'user', content: prompt('forbidden') }] });
    const error = await drain(stream);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(String((error as Error).message)).toContain('hook-out');
    expect(JSON.stringify(service.calls.at(-1)?.body.response)).toContain('forbidden');
  });

  it('OpenAI Responses, whole and streamed', async () => {
    const tools = [{ type: 'function' as const, name: 'lookup', parameters: LOOKUP.function.parameters, strict: false }];
    const whole = await openai(keys.hookOut as string).responses.create({ model: 'chat-openai', tools, input: prompt('forbidden') }).catch((caught: unknown) => caught);
    expect(whole).toBeInstanceOf(OpenAI.BadRequestError);
    expect((whole as Error).message).toContain("'hook-out'");
    const stream = await openai(keys.hookOut as string).responses.create({ model: 'chat-openai', stream: true, tools, input: prompt('forbidden') });
    expect(String(await drain(stream))).toContain('hook-out');
  });

  it('Anthropic messages, whole and streamed', async () => {
    const whole = await claude(keys.hookOut as string).messages.create({ model: 'chat-anthropic', max_tokens: 100, tools: [ANTHROPIC_LOOKUP], messages: [{ role: 'user', content: prompt('forbidden') }] }).catch((caught: unknown) => caught);
    expect(String((whole as Error).message), String(whole)).toContain('hook-out');
    expect(whole).toBeInstanceOf(Anthropic.BadRequestError);
    const stream = await claude(keys.hookOut as string).messages.create({ model: 'chat-anthropic', max_tokens: 100, stream: true, tools: [ANTHROPIC_LOOKUP], messages: [{ role: 'user', content: prompt('forbidden') }] });
    expect(String(await drain(stream))).toContain('hook-out');
  });

  it('Gemini generateContent, whole and streamed', async () => {
    const config = { tools: [{ functionDeclarations: [{ name: 'lookup', parametersJsonSchema: LOOKUP.function.parameters }] }] };
    const whole = await gemini(keys.hookOut as string).models.generateContent({ model: 'chat-gemini', contents: geminiPrompt('forbidden'), config }).catch((caught: unknown) => caught);
    expect(String((whole as Error).message)).toContain('hook-out');
    const stream = await gemini(keys.hookOut as string).models.generateContentStream({ model: 'chat-gemini', contents: geminiPrompt('forbidden'), config });
    expect(String(await drain(stream))).toContain('hook-out');
  });

  it('a moderation model is shown the call\'s arguments, whole and streamed', async () => {
    const whole = await openai(keys.modOut as string).chat.completions.create({ model: 'chat-openai', tools: [LOOKUP], messages: [{ role: 'user', content: prompt('attack the castle') }] }).catch((caught: unknown) => caught);
    expect(whole).toBeInstanceOf(OpenAI.BadRequestError);
    expect((whole as Error).message).toContain("'mod-out'");
    expect(lastModerationInput()).toContain('attack the castle');
    const stream = await openai(keys.modOut as string).chat.completions.create({ model: 'chat-openai', stream: true, tools: [LOOKUP], messages: [{ role: 'user', content: prompt('attack the castle') }] });
    expect(String(await drain(stream))).toContain('mod-out');
    const calm = await openai(keys.modOut as string).chat.completions.create({ model: 'chat-openai', tools: [LOOKUP], messages: [{ role: 'user', content: prompt('herons') }] });
    expect(calm.choices[0]?.message.tool_calls?.[0]).toMatchObject({ function: { name: 'lookup' } });
  });
});
