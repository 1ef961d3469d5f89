/**
 * Fidelity of the mock Anthropic upstream: the official `@anthropic-ai/sdk`, pointed straight at it, must accept
 * every answer (messages, the SSE event sequence, tool use, thinking with signatures, count_tokens, errors) as if
 * it were Anthropic, and the mock must refuse what the real API refuses.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import Anthropic, {
  APIError,
  AuthenticationError,
  BadRequestError,
  InternalServerError,
  NotFoundError,
  OverloadedError,
  PaymentRequiredError,
  RateLimitError,
} from '@anthropic-ai/sdk';
import type { MessageCreateParamsNonStreaming, MessageParam, Tool } from '@anthropic-ai/sdk/resources/messages';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from '../support/mock-anthropic-upstream.js';

const API_KEY = 'sk-ant-upstream-test';
const MODEL = 'claude-haiku-4-5-20251001';
const PNG_1PX = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const weatherTool: Tool = {
  name: 'get_weather',
  description: 'Current weather of a city',
  input_schema: { type: 'object', properties: { location: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } }, required: ['location', 'unit'] },
};

let mock: MockAnthropicUpstream;
let client: Anthropic;

beforeAll(async () => {
  mock = await startMockAnthropicUpstream({ apiKey: API_KEY });
  client = new Anthropic({ baseURL: mock.url, apiKey: API_KEY, maxRetries: 0, timeout: 10_000 });
});
afterAll(async () => {
  await mock.close();
});
afterEach(() => {
  mock.setFault(null);
  mock.requests.length = 0;
});

/** A body the SDK's types no longer describe (e.g. temperature), sent as it is. */
function rawParams(body: Record<string, unknown>): MessageCreateParamsNonStreaming {
  return body as unknown as MessageCreateParamsNonStreaming;
}

async function rejection(promise: Promise<unknown>): Promise<APIError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof APIError) return error;
    throw error;
  }
  throw new Error('expected the request to fail');
}

describe('messages.create', () => {
  it('answers a message object with deterministic text and usage', async () => {
    const message = await client.messages.create({ model: MODEL, max_tokens: 256, system: 'Be terse.', messages: [{ role: 'user', content: 'Hello there, mock!' }] });
    expect(message.id).toMatch(/^msg_01[A-Za-z0-9]{22}$/);
    expect(message).toMatchObject({ type: 'message', role: 'assistant', model: MODEL, stop_reason: 'end_turn', stop_sequence: null });
    expect(message.content).toEqual([{ type: 'text', text: 'Echo: Hello there, mock!' }]);
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    expect(message.usage).toMatchObject({ cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
    const recorded = mock.requests[0]!;
    expect(recorded.path).toBe('/v1/messages');
    expect(recorded.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(recorded.headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it('accepts the key in x-api-key as well', async () => {
    const response = await fetch(`${mock.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': API_KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('request-id')).toMatch(/^req_/);
  });

  it('cuts at stop sequences and at max_tokens', async () => {
    const stopped = await client.messages.create({ model: MODEL, max_tokens: 256, stop_sequences: ['mock'], messages: [{ role: 'user', content: 'Hello mock world' }] });
    expect(stopped).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'mock', content: [{ type: 'text', text: 'Echo: Hello ' }] });
    const capped = await client.messages.create({ model: MODEL, max_tokens: 2, messages: [{ role: 'user', content: 'a long enough sentence to be cut' }] });
    expect(capped.stop_reason).toBe('max_tokens');
    expect(capped.usage.output_tokens).toBe(2);
  });

  it('reports prompt caching: a cache_control prefix is written once, then read', async () => {
    const system = [{ type: 'text' as const, text: 'Rules. '.repeat(800), cache_control: { type: 'ephemeral' as const } }];
    const params = { model: MODEL, max_tokens: 32, system, messages: [{ role: 'user' as const, content: 'cache me' }] };
    const first = await client.messages.create(params);
    const second = await client.messages.create(params);
    expect(first.usage.cache_creation_input_tokens).toBeGreaterThanOrEqual(1024);
    expect(first.usage.cache_read_input_tokens).toBe(0);
    expect(second.usage.cache_read_input_tokens).toBe(first.usage.cache_creation_input_tokens);
    expect(second.usage.input_tokens).toBe(first.usage.input_tokens);
  });

  it('takes images by base64 and by URL', async () => {
    const message = await client.messages.create({
      model: MODEL,
      max_tokens: 64,
      messages: [{
        role: 'user',
        content: [
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_1PX } },
          { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
          { type: 'text', text: 'What is this?' },
        ],
      }],
    });
    expect(message.content).toEqual([{ type: 'text', text: 'Echo: What is this?' }]);
  });
});

describe('messages.stream', () => {
  it('streams the real event sequence and finalMessage() rebuilds the message', async () => {
    const stream = client.messages.stream({ model: MODEL, max_tokens: 256, messages: [{ role: 'user', content: 'Stream this please' }] });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    const message = await stream.finalMessage();
    expect(types[0]).toBe('message_start');
    expect(types.slice(-2)).toEqual(['message_delta', 'message_stop']);
    expect(types).toContain('content_block_delta');
    expect(message.content).toEqual([{ type: 'text', text: 'Echo: Stream this please' }]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage.output_tokens).toBeGreaterThan(1);
    const raw = await fetch(`${mock.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': API_KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const text = await raw.text();
    expect(text).toMatch(/^event: message_start\ndata: \{/);
    expect(text).toContain('event: ping\ndata: {"type":"ping"}\n\n');
  });

  it('raises a mid-stream error event as an APIError with its type', async () => {
    mock.setFault({ kind: 'stream-error', afterEvents: 3, times: 1 });
    const stream = client.messages.stream({ model: MODEL, max_tokens: 256, messages: [{ role: 'user', content: 'fail midway' }] });
    const error = await rejection(stream.finalMessage());
    expect(error.type).toBe('overloaded_error');
    expect(error.message).toContain('Overloaded');
  });
});

describe('tool use', () => {
  it('runs a tool round trip, one tool_use per place, answers after tool_result', async () => {
    const messages: MessageParam[] = [{ role: 'user', content: 'What is the weather in Paris and Tokyo?' }];
    const first = await client.messages.create({ model: MODEL, max_tokens: 512, tools: [weatherTool], messages });
    expect(first.stop_reason).toBe('tool_use');
    const uses = first.content.filter((block) => block.type === 'tool_use');
    expect(uses.map((use) => use.input)).toEqual([{ location: 'Paris', unit: 'celsius' }, { location: 'Tokyo', unit: 'celsius' }]);
    messages.push({ role: 'assistant', content: first.content });
    messages.push({ role: 'user', content: uses.map((use) => ({ type: 'tool_result' as const, tool_use_id: use.id, content: `sunny in ${String((use.input as { location: string }).location)}` })) });
    const second = await client.messages.create({ model: MODEL, max_tokens: 512, tools: [weatherTool], messages });
    expect(second.content).toEqual([{ type: 'text', text: 'Tool get_weather returned: sunny in Paris\nTool get_weather returned: sunny in Tokyo' }]);
  });

  it('streams tool input as input_json_delta that finalMessage() parses; disable_parallel_tool_use gives one call', async () => {
    const stream = client.messages.stream({
      model: MODEL,
      max_tokens: 512,
      tools: [weatherTool],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      messages: [{ role: 'user', content: 'weather in Oslo and Rome' }],
    });
    const message = await stream.finalMessage();
    expect(message.content).toHaveLength(1);
    expect(message.content[0]).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { location: 'Oslo', unit: 'celsius' } });
  });
});

describe('extended thinking', () => {
  it('returns signed thinking that is accepted back in a tool loop, and refuses a tampered signature', async () => {
    const thinking = { type: 'enabled' as const, budget_tokens: 1024 };
    const messages: MessageParam[] = [{ role: 'user', content: 'weather in Lima?' }];
    const first = await client.messages.create({ model: MODEL, max_tokens: 2048, thinking, tools: [weatherTool], messages });
    expect(first.content[0]).toMatchObject({ type: 'thinking', thinking: 'Thinking about: weather in Lima?' });
    expect((first.content[0] as { signature: string }).signature.length).toBeGreaterThan(20);
    expect(first.usage.output_tokens_details?.thinking_tokens).toBeGreaterThan(0);
    const use = first.content.find((block) => block.type === 'tool_use')!;
    const answer: MessageParam = { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'rainy' }] };
    const second = await client.messages.create({ model: MODEL, max_tokens: 2048, thinking, tools: [weatherTool], messages: [...messages, { role: 'assistant', content: first.content }, answer] });
    expect(second.content.at(-1)).toEqual({ type: 'text', text: 'Tool get_weather returned: rainy' });

    const tampered = first.content.map((block) => (block.type === 'thinking' ? { ...block, thinking: `${block.thinking}!` } : block));
    const refused = await rejection(client.messages.create({ model: MODEL, max_tokens: 2048, thinking, tools: [weatherTool], messages: [...messages, { role: 'assistant', content: tampered }, answer] }));
    expect(refused).toBeInstanceOf(BadRequestError);
    expect(refused.message).toContain('Invalid `signature`');

    const withoutThinking = first.content.filter((block) => block.type !== 'thinking');
    const missing = await rejection(client.messages.create({ model: MODEL, max_tokens: 2048, thinking, tools: [weatherTool], messages: [...messages, { role: 'assistant', content: withoutThinking }, answer] }));
    expect(missing.message).toContain('must start with a thinking block');
  });

  it('streams thinking with a signature_delta and redacted thinking that travels back', async () => {
    const stream = client.messages.stream({ model: MODEL, max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'please redact this' }] });
    const message = await stream.finalMessage();
    expect(message.content.map((block) => block.type)).toEqual(['thinking', 'redacted_thinking', 'text']);
    const next = await client.messages.create({
      model: MODEL,
      max_tokens: 2048,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [{ role: 'user', content: 'please redact this' }, { role: 'assistant', content: message.content }, { role: 'user', content: 'thanks' }],
    });
    expect(next.content.at(-1)).toEqual({ type: 'text', text: 'Echo: thanks' });
  });

  it('enforces the thinking rules', async () => {
    const user: MessageParam[] = [{ role: 'user', content: 'hi' }];
    expect((await rejection(client.messages.create({ model: MODEL, max_tokens: 1024, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: user }))).message).toContain('`max_tokens` must be greater than `thinking.budget_tokens`');
    expect((await rejection(client.messages.create({ model: MODEL, max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 512 }, messages: user }))).message).toContain('greater than or equal to 1024');
    expect((await rejection(client.messages.create(rawParams({ model: MODEL, max_tokens: 4096, temperature: 0.5, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: user })))).message).toContain('`temperature` may only be set to 1');
    expect((await rejection(client.messages.create({ model: MODEL, max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 1024 }, tools: [weatherTool], tool_choice: { type: 'any' }, messages: user }))).message).toContain('forces tool use');
  });
});

describe('count_tokens and models', () => {
  it('counts the input tokens a message would use', async () => {
    const params = { model: MODEL, system: 'Be terse.', tools: [weatherTool], messages: [{ role: 'user' as const, content: 'count these tokens please' }] };
    const counted = await client.messages.countTokens(params);
    const created = await client.messages.create({ ...params, max_tokens: 32 });
    expect(counted.input_tokens).toBe(created.usage.input_tokens);
    const withMax = await rejection(client.messages.countTokens({ ...params, max_tokens: 10 } as typeof params));
    expect(withMax.message).toContain('max_tokens: Extra inputs are not permitted');
  });

  it('lists models', async () => {
    const page = await client.models.list();
    expect(page.data.map((model) => model.id)).toContain(MODEL);
    expect(page.data[0]).toMatchObject({ type: 'model' });
  });
});

describe('errors raise the SDK error classes', () => {
  it('401 for a wrong key, 404 for an unknown model', async () => {
    const wrong = new Anthropic({ baseURL: mock.url, apiKey: 'sk-ant-wrong', maxRetries: 0 });
    const auth = await rejection(wrong.messages.create({ model: MODEL, max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }));
    expect(auth).toBeInstanceOf(AuthenticationError);
    expect(auth.type).toBe('authentication_error');
    const missing = await rejection(client.messages.create({ model: 'unknown-model', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }));
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing.type).toBe('not_found_error');
  });

  it.each([
    [402, PaymentRequiredError, 'billing_error'],
    [429, RateLimitError, 'rate_limit_error'],
    [500, InternalServerError, 'api_error'],
    [529, OverloadedError, 'overloaded_error'],
  ] as const)('status %i → %o', async (status, errorClass, type) => {
    mock.setFault({ kind: 'status', status, times: 1 });
    const error = await rejection(client.messages.create({ model: MODEL, max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }));
    expect(error).toBeInstanceOf(errorClass);
    expect(error.status).toBe(status);
    expect(error.type).toBe(type);
    expect(error.requestID).toMatch(/^req_/);
  });

  it('requires anthropic-version', async () => {
    const response = await fetch(`${mock.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: 'anthropic-version: header is required' } });
  });
});

describe('rejects what the real API rejects', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['missing max_tokens', { model: MODEL, messages: [{ role: 'user', content: 'hi' }] }, 'max_tokens: Field required'],
    ['non-alternating roles', { model: MODEL, max_tokens: 8, messages: [{ role: 'user', content: 'a' }, { role: 'user', content: 'b' }] }, 'roles must alternate'],
    ['a conversation opening with the assistant', { model: MODEL, max_tokens: 8, messages: [{ role: 'assistant', content: 'a' }, { role: 'user', content: 'b' }] }, 'first message must use the "user" role'],
    ['an empty text block', { model: MODEL, max_tokens: 8, messages: [{ role: 'user', content: [{ type: 'text', text: '' }] }] }, 'text content blocks must be non-empty'],
    ['an empty user message', { model: MODEL, max_tokens: 8, messages: [{ role: 'user', content: [] }] }, 'must have non-empty content'],
    ['trailing whitespace in the final assistant turn', { model: MODEL, max_tokens: 8, messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b ' }] }, 'cannot end with trailing whitespace'],
    ['temperature above 1', { model: MODEL, max_tokens: 8, temperature: 1.5, messages: [{ role: 'user', content: 'a' }] }, 'temperature: Input should be less than or equal to 1'],
    ['an unknown field', { model: MODEL, max_tokens: 8, seed: 1, messages: [{ role: 'user', content: 'a' }] }, 'seed: Extra inputs are not permitted'],
    ['an image of an unsupported type', { model: MODEL, max_tokens: 8, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/bmp', data: 'AAAA' } }] }] }, "Input should be 'image/jpeg'"],
    ['tool_choice without tools', { model: MODEL, max_tokens: 8, tool_choice: { type: 'any' }, messages: [{ role: 'user', content: 'a' }] }, 'tool_choice may only be specified while providing tools'],
    [
      'an unanswered tool_use',
      { model: MODEL, max_tokens: 8, tools: [weatherTool], messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} }] }, { role: 'user', content: 'b' }] },
      '`tool_use` ids were found without `tool_result` blocks immediately after: toolu_1',
    ],
    [
      'a tool_result after text',
      {
        model: MODEL,
        max_tokens: 8,
        tools: [weatherTool],
        messages: [
          { role: 'user', content: 'a' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} }] },
          { role: 'user', content: [{ type: 'text', text: 'here' }, { type: 'tool_result', tool_use_id: 'toolu_1', content: 'x' }] },
        ],
      },
      '`tool_result` blocks must come first',
    ],
    [
      'a tool_result without its tool_use',
      { model: MODEL, max_tokens: 8, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_9', content: 'x' }] }] },
      'unexpected `tool_use_id` found in `tool_result` blocks: toolu_9',
    ],
  ];

  it.each(cases)('%s', async (_name, body, message) => {
    const error = await rejection(client.messages.create(rawParams(body)));
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error.type).toBe('invalid_request_error');
    expect(error.apiMessage).toContain(message);
  });

  it('merges consecutive same-role turns like today\'s API when asked to', async () => {
    const lenient = await startMockAnthropicUpstream({ apiKey: API_KEY, requireAlternation: false });
    try {
      const sdk = new Anthropic({ baseURL: lenient.url, apiKey: API_KEY, maxRetries: 0 });
      const message = await sdk.messages.create({ model: MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'first' }, { role: 'user', content: 'second' }] });
      expect(message.content).toEqual([{ type: 'text', text: 'Echo: first second' }]);
    } finally {
      await lenient.close();
    }
  });
});
