/**
 * Fidelity of the mock OpenAI upstream: the official `openai` SDK, pointed straight at it, must
 * accept every answer (objects, SSE chunks, usage chunk, tool calls, errors) as if it were OpenAI.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { startMockOpenAIUpstream, countPromptTokens, splitIntoTokens, type MockOpenAIUpstream } from '../support/mock-openai-upstream.js';

const API_KEY = 'sk-upstream-test';
const weatherTool: ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather of a city',
    parameters: {
      type: 'object',
      properties: { location: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
      required: ['location', 'unit'],
      additionalProperties: false,
    },
  },
};

let mock: MockOpenAIUpstream;
let client: OpenAI;

beforeAll(async () => {
  mock = await startMockOpenAIUpstream({ apiKey: API_KEY });
  client = new OpenAI({ baseURL: mock.url, apiKey: API_KEY, maxRetries: 0, timeout: 10_000 });
});
afterAll(async () => {
  await mock.close();
});
afterEach(() => {
  mock.setFault(null);
  mock.setUsageOverride(null);
  mock.requests.length = 0;
});

describe('non-streaming chat completions', () => {
  it('answers a chat.completion object the SDK accepts, with deterministic text and usage', async () => {
    const messages: ChatCompletionMessageParam[] = [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Hello there, mock!' },
    ];
    const res = await client.chat.completions.create({ model: 'gpt-4o-mini', messages, temperature: 0.2 });
    expect(res.id).toMatch(/^chatcmpl-[A-Za-z0-9]{29}$/);
    expect(res.object).toBe('chat.completion');
    expect(res.model).toBe('gpt-4o-mini');
    expect(Number.isInteger(res.created)).toBe(true);
    expect(Math.abs(res.created - Date.now() / 1000)).toBeLessThan(60);
    expect(res.system_fingerprint).toMatch(/^fp_/);
    expect(res.choices).toHaveLength(1);
    const choice = res.choices[0]!;
    expect(choice.index).toBe(0);
    expect(choice.finish_reason).toBe('stop');
    expect(choice.logprobs).toBeNull();
    expect(choice.message).toMatchObject({ role: 'assistant', content: 'Echo: Hello there, mock!', refusal: null });
    expect(choice.message.tool_calls).toBeUndefined();

    const expectedPrompt = countPromptTokens({ messages: messages as never, body: {} });
    const expectedCompletion = splitIntoTokens('Echo: Hello there, mock!').length;
    expect(res.usage).toEqual({
      prompt_tokens: expectedPrompt,
      completion_tokens: expectedCompletion,
      total_tokens: expectedPrompt + expectedCompletion,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    });
  });

  it('records the request with lowercased headers and the parsed body', async () => {
    await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'record me' }] });
    expect(mock.requests).toHaveLength(1);
    const r = mock.requests[0]!;
    expect(r.method).toBe('POST');
    expect(r.path).toBe('/v1/chat/completions');
    expect(r.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(r.headers['content-type']).toContain('application/json');
    expect(r.body).toEqual({ model: 'gpt-4o', messages: [{ role: 'user', content: 'record me' }] });
    expect(JSON.parse(r.rawBody)).toEqual(r.body);
  });

  it('truncates at max_tokens / max_completion_tokens with finish_reason length', async () => {
    const long = 'one two three four five six seven eight nine ten eleven twelve';
    const a = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: long }], max_tokens: 3 });
    expect(a.choices[0]!.finish_reason).toBe('length');
    expect(a.usage!.completion_tokens).toBe(3);
    expect(a.choices[0]!.message.content).toBe(splitIntoTokens(`Echo: ${long}`).slice(0, 3).join(''));
    const b = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: long }], max_completion_tokens: 4 });
    expect(b.choices[0]!.finish_reason).toBe('length');
    expect(b.usage!.completion_tokens).toBe(4);
  });

  it('honours stop sequences and n', async () => {
    const res = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'alpha beta gamma' }],
      stop: [' gamma'],
      n: 2,
    });
    expect(res.choices.map((c) => c.index)).toEqual([0, 1]);
    for (const c of res.choices) {
      expect(c.message.content).toBe('Echo: alpha beta');
      expect(c.finish_reason).toBe('stop');
    }
    expect(res.usage!.completion_tokens).toBe(2 * splitIntoTokens('Echo: alpha beta').length);
  });

  it('reports reasoning tokens for reasoning models and simulated prompt caching', async () => {
    const r = await client.chat.completions.create({ model: 'o4-mini', messages: [{ role: 'user', content: 'think' }], reasoning_effort: 'low' });
    expect(r.usage!.completion_tokens_details!.reasoning_tokens).toBe(16);
    expect(r.usage!.completion_tokens).toBe(16 + splitIntoTokens('Echo: think').length);

    const bigSystem = 'lorem ipsum dolor sit amet '.repeat(250); // ~1700 tokens
    const first = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'system', content: bigSystem }, { role: 'user', content: 'q1' }],
    });
    expect(first.usage!.prompt_tokens_details!.cached_tokens).toBe(0);
    const second = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'system', content: bigSystem }, { role: 'user', content: 'q2' }],
    });
    const cached = second.usage!.prompt_tokens_details!.cached_tokens!;
    expect(cached).toBeGreaterThanOrEqual(1024);
    expect(cached % 128).toBe(0);
    expect(cached).toBeLessThanOrEqual(second.usage!.prompt_tokens);

    mock.setUsageOverride({ cached_tokens: 7, prompt_tokens: 100, completion_tokens: 5 });
    const o = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] });
    expect(o.usage).toMatchObject({ prompt_tokens: 100, completion_tokens: 5, total_tokens: 105, prompt_tokens_details: { cached_tokens: 7 } });
  });
});

describe('streaming chat completions', () => {
  it('client.chat.completions.stream() assembles the same message as the non-streaming answer', async () => {
    const params = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'Stream this sentence please' }] };
    const stream = client.chat.completions.stream(params);
    const deltas: string[] = [];
    stream.on('content', (delta) => deltas.push(delta));
    const final = await stream.finalChatCompletion();
    const plain = await client.chat.completions.create(params);
    expect(final.choices[0]!.message.content).toBe(plain.choices[0]!.message.content);
    expect(final.choices[0]!.finish_reason).toBe('stop');
    expect(final.id).toMatch(/^chatcmpl-/);
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.join('')).toBe('Echo: Stream this sentence please');
  });

  it('stream: true with include_usage ends with a choices: [] usage chunk; earlier chunks carry usage: null', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'count my tokens' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: ChatCompletionChunk[] = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks.length).toBeGreaterThan(4);
    const ids = new Set(chunks.map((c) => c.id));
    expect(ids.size).toBe(1);
    for (const c of chunks) expect(c.object).toBe('chat.completion.chunk');
    expect(chunks[0]!.choices[0]!.delta).toMatchObject({ role: 'assistant', content: '' });
    const last = chunks[chunks.length - 1]!;
    expect(last.choices).toEqual([]);
    const text = 'Echo: count my tokens';
    expect(last.usage).toMatchObject({ completion_tokens: splitIntoTokens(text).length, prompt_tokens_details: { cached_tokens: 0 } });
    expect(last.usage!.total_tokens).toBe(last.usage!.prompt_tokens + last.usage!.completion_tokens);
    for (const c of chunks.slice(0, -1)) expect(c.usage).toBeNull();
    const finish = chunks[chunks.length - 2]!;
    expect(finish.choices[0]!.finish_reason).toBe('stop');
    expect(finish.choices[0]!.delta).toEqual({});
    expect(chunks.flatMap((c) => c.choices.map((ch) => ch.delta.content ?? '')).join('')).toBe(text);
  });

  it('without include_usage no chunk has a usage key and the raw stream ends with [DONE]', async () => {
    const res = await fetch(`${mock.url}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'raw' }], stream: true }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const raw = await res.text();
    const events = raw.split('\n\n').filter((e) => e.length > 0);
    for (const e of events) expect(e.startsWith('data: ')).toBe(true);
    expect(events[events.length - 1]).toBe('data: [DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.slice(6)) as Record<string, unknown>);
    for (const c of chunks) expect('usage' in c).toBe(false);
    expect(chunks.every((c) => Array.isArray(c.choices) && c.choices.length === 1)).toBe(true);
  });
});

describe('tool calls', () => {
  it('round trip: tool_calls answer, then a text answer to the tool result', async () => {
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: "What's the weather in Paris?" }];
    const first = await client.chat.completions.create({ model: 'gpt-4o', messages, tools: [weatherTool] });
    const choice = first.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    const calls = choice.message.tool_calls!;
    expect(calls).toHaveLength(1);
    const call = calls[0]!;
    expect(call.id).toMatch(/^call_[A-Za-z0-9]{24}$/);
    expect(call.type).toBe('function');
    if (call.type !== 'function') throw new Error('expected a function call');
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual({ location: 'Paris', unit: 'celsius' });

    messages.push(choice.message, { role: 'tool', tool_call_id: call.id, content: '{"temp_c":21}' });
    const second = await client.chat.completions.create({ model: 'gpt-4o', messages, tools: [weatherTool] });
    expect(second.choices[0]!.finish_reason).toBe('stop');
    expect(second.choices[0]!.message.content).toBe('Tool get_weather returned: {"temp_c":21}');
  });

  it('parallel calls, forced tool_choice, and tool_choice none', async () => {
    const parallel = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'weather in Paris and Tokyo' }],
      tools: [weatherTool],
    });
    const args = parallel.choices[0]!.message.tool_calls!.map((c) => (c.type === 'function' ? JSON.parse(c.function.arguments) : null));
    expect(args).toEqual([{ location: 'Paris', unit: 'celsius' }, { location: 'Tokyo', unit: 'celsius' }]);

    const single = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'weather in Paris and Tokyo' }],
      tools: [weatherTool],
      parallel_tool_calls: false,
    });
    expect(single.choices[0]!.message.tool_calls).toHaveLength(1);

    const forced = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'no keyword here' }],
      tools: [weatherTool],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
    });
    expect(forced.choices[0]!.finish_reason).toBe('tool_calls');

    const none = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'weather in Rome' }],
      tools: [weatherTool],
      tool_choice: 'none',
    });
    expect(none.choices[0]!.message.content).toBe('Echo: weather in Rome');
  });

  it('streams tool calls as indexed deltas that finalChatCompletion() assembles into JSON arguments', async () => {
    const stream = client.chat.completions.stream({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'weather in Berlin and Oslo' }],
      tools: [weatherTool],
      stream_options: { include_usage: true },
    });
    const raw: ChatCompletionChunk[] = [];
    stream.on('chunk', (c) => raw.push(c));
    const final = await stream.finalChatCompletion();
    const calls = final.choices[0]!.message.tool_calls!;
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
    expect(calls.map((c) => (c.type === 'function' ? JSON.parse(c.function.arguments) : null))).toEqual([
      { location: 'Berlin', unit: 'celsius' },
      { location: 'Oslo', unit: 'celsius' },
    ]);
    expect(final.usage?.completion_tokens).toBeGreaterThan(0);

    const toolDeltas = raw.flatMap((c) => c.choices.flatMap((ch) => ch.delta.tool_calls ?? []));
    const heads = toolDeltas.filter((d) => d.id !== undefined);
    expect(heads.map((d) => [d.index, d.function?.name, d.function?.arguments])).toEqual([
      [0, 'get_weather', ''],
      [1, 'get_weather', ''],
    ]);
    const fragments = toolDeltas.filter((d) => d.id === undefined);
    expect(fragments.length).toBeGreaterThan(4);
    for (const f of fragments) {
      expect(f.function?.name).toBeUndefined();
      expect(typeof f.function?.arguments).toBe('string');
    }
  });
});

describe('errors', () => {
  it('wrong or missing key: AuthenticationError 401 invalid_api_key', async () => {
    const bad = new OpenAI({ baseURL: mock.url, apiKey: 'sk-wrong-key-123456', maxRetries: 0 });
    const err = await bad.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    const apiErr = err as InstanceType<typeof OpenAI.AuthenticationError>;
    expect(apiErr.status).toBe(401);
    expect(apiErr.code).toBe('invalid_api_key');
    expect(apiErr.type).toBe('invalid_request_error');
    expect(apiErr.message).not.toContain('sk-wrong-key-123456');

    const res = await fetch(`${mock.url}/models`);
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: { type: 'invalid_request_error', code: 'invalid_api_key', param: null } });
  });

  it('validation errors are BadRequestError with OpenAI param and code', async () => {
    const cases: Array<[Record<string, unknown>, string | null, string | null]> = [
      [{ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }], temperature: 3 }, 'temperature', 'decimal_above_max_value'],
      [{ model: 'gpt-4o', messages: [] }, 'messages', 'empty_array'],
      [{ model: 'gpt-4o' }, 'messages', 'missing_required_parameter'],
      [{ messages: [{ role: 'user', content: 'x' }] }, null, null],
      [{ model: 'gpt-4o', messages: [{ role: 'robot', content: 'x' }] }, 'messages[0].role', 'invalid_value'],
      [{ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }], max_tokens: 0 }, 'max_tokens', 'integer_below_min_value'],
      [{ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }], stream_options: { include_usage: true } }, 'stream_options', null],
      [{ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }], frobnicate: true }, null, null],
      [{ model: 'gpt-4o', messages: [{ role: 'tool', tool_call_id: 'call_1', content: 'x' }] }, 'messages.[0].role', null],
      [{ model: 'o3-mini', messages: [{ role: 'user', content: 'x' }], max_tokens: 5 }, 'max_tokens', 'unsupported_parameter'],
    ];
    for (const [body, param, code] of cases) {
      const err = await client.chat.completions.create(body as never).catch((e: unknown) => e);
      expect(err, JSON.stringify(body)).toBeInstanceOf(OpenAI.BadRequestError);
      const e = err as InstanceType<typeof OpenAI.BadRequestError>;
      expect(e.status).toBe(400);
      expect(e.param ?? null, JSON.stringify(body)).toBe(param);
      expect(e.code ?? null, JSON.stringify(body)).toBe(code);
      expect(e.type).toBe('invalid_request_error');
    }
  });

  it('invalid JSON is 400, unknown paths and models are 404', async () => {
    const headers = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };
    const badJson = await fetch(`${mock.url}/chat/completions`, { method: 'POST', headers, body: '{"model":' });
    expect(badJson.status).toBe(400);
    expect(await badJson.json()).toMatchObject({ error: { type: 'invalid_request_error', param: null, code: null } });
    const unknown = await fetch(`${mock.url}/nope`, { headers });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: { message: 'Invalid URL (GET /v1/nope)', type: 'invalid_request_error', param: null, code: null } });
    const err = await client.chat.completions.create({ model: 'unknown-model', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect((err as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found');
  });

  it('a status-500 fault surfaces as InternalServerError and clears itself after `times`', async () => {
    mock.setFault({ kind: 'status', status: 500, times: 1 });
    const err = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect((err as InstanceType<typeof OpenAI.InternalServerError>).status).toBe(500);
    expect((err as InstanceType<typeof OpenAI.InternalServerError>).type).toBe('server_error');
    const ok = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] });
    expect(ok.choices[0]!.message.content).toBe('Echo: x');
  });

  it('a 429 fault with a custom body and headers reaches the SDK as RateLimitError', async () => {
    mock.setFault({
      kind: 'status',
      status: 429,
      body: { error: { message: 'slow down', type: 'requests', param: null, code: 'rate_limit_exceeded' } },
      headers: { 'retry-after': '7' },
    });
    const err = await client.models.list().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    const e = err as InstanceType<typeof OpenAI.RateLimitError>;
    expect(e.code).toBe('rate_limit_exceeded');
    expect(e.headers.get('retry-after')).toBe('7');
    // persistent until cleared
    await expect(client.models.list()).rejects.toBeInstanceOf(OpenAI.RateLimitError);
  });
});

describe('faults on the connection', () => {
  it('reset destroys the socket without an answer', async () => {
    mock.setFault({ kind: 'reset', times: 1 });
    const err = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIConnectionError);
    expect(mock.requests).toHaveLength(1);
  });

  it('delay holds the answer back', async () => {
    mock.setFault({ kind: 'delay', ms: 300, times: 1 });
    const t0 = Date.now();
    await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(280);
  });

  it('cut-stream ends the connection after N data events, without [DONE]', async () => {
    mock.setFault({ kind: 'cut-stream', afterChunks: 3 });
    const stream = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'a fairly long sentence to stream out' }],
      stream: true,
    });
    const seen: ChatCompletionChunk[] = [];
    const err = await (async () => {
      for await (const c of stream) seen.push(c);
    })().catch((e: unknown) => e);
    expect(seen).toHaveLength(3);
    expect(err).toBeInstanceOf(Error);
    await expect(
      client.chat.completions.stream({ model: 'gpt-4o', messages: [{ role: 'user', content: 'again' }] }).finalChatCompletion(),
    ).rejects.toBeInstanceOf(Error);
  });

  it('stream-error sends an error event mid-stream that the SDK raises as APIError', async () => {
    mock.setFault({ kind: 'stream-error', afterChunks: 2, times: 1 });
    const stream = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x y z' }], stream: true });
    const err = await (async () => {
      for await (const _ of stream) void _;
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).type).toBe('server_error');
  });

  it('close() ends open streams promptly', async () => {
    // Ten seconds between chunks: a close that waited for the next chunk could not come in under five, while a
    // loaded machine has seconds to spare for a prompt one.
    const slow = await startMockOpenAIUpstream({ chunkDelayMs: 10_000 });
    const c = new OpenAI({ baseURL: slow.url, apiKey: API_KEY, maxRetries: 0 });
    const stream = await c.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'slow one' }], stream: true });
    const consume = (async () => {
      for await (const _ of stream) void _;
    })().catch(() => 'ended');
    const t0 = Date.now();
    await slow.close();
    await consume;
    expect(Date.now() - t0).toBeLessThan(5000);
  });
});

describe('models', () => {
  it('lists and retrieves models in OpenAI shapes', async () => {
    const ids: string[] = [];
    for await (const m of client.models.list()) {
      expect(m.object).toBe('model');
      expect(typeof m.created).toBe('number');
      expect(typeof m.owned_by).toBe('string');
      ids.push(m.id);
    }
    expect(ids).toContain('gpt-4o-mini');
    expect(ids).toContain('bench-model');
    const one = await client.models.retrieve('gpt-4o');
    expect(one).toMatchObject({ id: 'gpt-4o', object: 'model' });
    await expect(client.models.retrieve('nope-model')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });
});

describe('embeddings', () => {
  it('answers the SDK in base64 (its default) and float, with the same deterministic unit vectors', async () => {
    const base64 = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['alpha', 'beta'], dimensions: 16 });
    const float = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['alpha', 'beta'], dimensions: 16, encoding_format: 'float' });
    expect(base64.data).toHaveLength(2);
    expect(base64.data[0]?.embedding).toHaveLength(16);
    for (const [index, item] of float.data.entries()) {
      expect(item.embedding.map((value) => Math.fround(value))).toEqual(base64.data[index]?.embedding.map((value) => Math.fround(value)));
    }
    expect(Math.hypot(...(float.data[0]?.embedding ?? []))).toBeCloseTo(1, 5);
    expect(float.data[0]?.embedding).not.toEqual(float.data[1]?.embedding);
    expect(base64.usage.prompt_tokens).toBeGreaterThan(0);
  });

  it('rejects what OpenAI rejects', async () => {
    await expect(client.embeddings.create({ model: 'text-embedding-3-small', input: '' })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    await expect(client.embeddings.create({ model: 'text-embedding-3-small', input: 'x', dimensions: 5000 })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
  });
});
