/**
 * POST /v1/responses end to end: the official openai SDK (create, stream) against the gateway, passed through to an
 * OpenAI channel and bridged to OpenAI-compatible (chat completions), Anthropic and Gemini upstreams; a function-call
 * conversation over several turns; reasoning state handed back; the honest refusals (stored state on bridged
 * models); usage rows and charges like chat.
 */
import OpenAI from 'openai';
import type { FunctionTool, ResponseInputItem, ResponseStreamEvent } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, flushWrites, seedAccount, startTestGateway, suiteDatabase, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from '../../support/mock-anthropic-upstream.js';
import { startMockGeminiUpstream, type MockGeminiUpstream } from '../../support/mock-gemini-upstream.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';

interface UsageRow {
  request_id: string;
  model: string;
  endpoint: string;
  status: number;
  stream: boolean;
  prompt_tokens: number;
  completion_tokens: number;
  cost_usd: number;
  error_code: string | null;
}

const weather: FunctionTool = {
  type: 'function',
  name: 'get_weather',
  description: 'Current weather of a city',
  parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'], additionalProperties: false },
  strict: true,
};

const MODELS = ['r-openai', 'r-compatible', 'r-anthropic', 'r-gemini'] as const;
const BRIDGED = ['r-compatible', 'r-anthropic', 'r-gemini'] as const;

let gateway: TestGateway;
let openaiUpstream: MockOpenAIUpstream;
let anthropicUpstream: MockAnthropicUpstream;
let geminiUpstream: MockGeminiUpstream;
let account: SeededAccount;
let client: OpenAI;

beforeAll(async () => {
  [openaiUpstream, anthropicUpstream, geminiUpstream] = await Promise.all([startMockOpenAIUpstream(), startMockAnthropicUpstream(), startMockGeminiUpstream()]);
  gateway = await startTestGateway();
  await addRoutedModel(gateway, { model: 'r-openai', channel: { name: 'o', type: 'openai', base_url: openaiUpstream.url, api_key: 'sk-upstream-test', models: { 'r-openai': 'gpt-4o-mini' } } });
  await addRoutedModel(gateway, { model: 'r-compatible', channel: { name: 'c', type: 'openai-compatible', base_url: openaiUpstream.url, api_key: 'sk-upstream-test', models: { 'r-compatible': 'gpt-4o-mini' } } });
  await addRoutedModel(gateway, { model: 'r-anthropic', channel: { name: 'a', type: 'anthropic', base_url: anthropicUpstream.url, api_key: 'sk-ant-upstream-test', models: { 'r-anthropic': 'claude-sonnet-4-5' } } });
  await addRoutedModel(gateway, { model: 'r-gemini', channel: { name: 'g', type: 'gemini', base_url: geminiUpstream.url, api_key: 'gemini-upstream-test', models: { 'r-gemini': 'gemini-2.5-flash' } } });
  await gateway.gateway.services.catalog.reload();
  account = await seedAccount(gateway, { balanceUsd: 20 });
  client = new OpenAI({ baseURL: gateway.baseURL, apiKey: account.key, maxRetries: 0, timeout: 15_000 });
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([openaiUpstream?.close(), anthropicUpstream?.close(), geminiUpstream?.close()]);
});

async function usageRow(requestId: string): Promise<UsageRow> {
  await flushWrites(gateway);
  const { body } = await gateway.admin<{ data: UsageRow[] }>('GET', `/admin/usage?key_id=${account.keyId}&limit=200`);
  const row = body.data.find((candidate) => candidate.request_id === requestId);
  if (row === undefined) throw new Error(`no usage row for ${requestId}`);
  return row;
}

function upstreamPathOf(model: string): string {
  switch (model) {
    case 'r-openai':
      return '/v1/responses';
    case 'r-compatible':
      return '/v1/chat/completions';
    case 'r-anthropic':
      return '/v1/messages';
    default:
      return 'generateContent';
  }
}

function lastUpstreamPath(model: string): string {
  const mock = model === 'r-anthropic' ? anthropicUpstream : model === 'r-gemini' ? geminiUpstream : openaiUpstream;
  return mock.requests.at(-1)?.path ?? '';
}

describe(`POST /v1/responses with the openai SDK (${suiteDatabase()})`, () => {
  it.each(MODELS)('answers a plain request through %s, billed and logged like chat', async (model) => {
    const { data, response } = await client.responses.create({ model, input: 'Say hello', instructions: 'Be brief.', store: false }).withResponse();
    expect(data.object).toBe('response');
    expect(data.id).toMatch(/^resp_/);
    expect(data.status).toBe('completed');
    expect(data.output_text).toContain('hello');
    expect(data.usage?.input_tokens).toBeGreaterThan(0);
    expect(data.usage?.output_tokens).toBeGreaterThan(0);
    expect(data.usage?.total_tokens).toBe((data.usage?.input_tokens ?? 0) + (data.usage?.output_tokens ?? 0));
    expect(lastUpstreamPath(model)).toContain(upstreamPathOf(model));
    const row = await usageRow(response.headers.get('x-request-id') ?? '');
    expect(row).toMatchObject({ model, status: 200, stream: false, prompt_tokens: data.usage?.input_tokens, completion_tokens: data.usage?.output_tokens });
    expect(row.endpoint).toBe('/v1/responses');
    expect(row.cost_usd).toBeGreaterThan(0);
  });

  it('passes the body through to the OpenAI channel untouched but for the model name', async () => {
    await client.responses.create({ model: 'r-openai', input: 'Pass me through', metadata: { ticket: 't-1' }, store: false, truncation: 'disabled' });
    const sent = openaiUpstream.requests.at(-1);
    expect(sent?.path).toBe('/v1/responses');
    expect(sent?.body).toEqual({ model: 'gpt-4o-mini', input: 'Pass me through', metadata: { ticket: 't-1' }, store: false, truncation: 'disabled' });
  });

  it.each(MODELS)('streams the Responses event sequence through %s', async (model) => {
    const stream = await client.responses.create({ model, input: 'Stream a few words please', stream: true, store: false });
    const events: ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const types = events.map((event) => event.type);
    expect(types.slice(0, 2)).toEqual(['response.created', 'response.in_progress']);
    expect(types.at(-1)).toBe('response.completed');
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    const order = ['response.output_item.added', 'response.content_part.added', 'response.output_text.delta', 'response.output_text.done', 'response.content_part.done', 'response.output_item.done'];
    const positions = order.map((type) => types.indexOf(type as ResponseStreamEvent['type']));
    expect(positions.every((position) => position > 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    const text = events.flatMap((event) => (event.type === 'response.output_text.delta' ? [event.delta] : [])).join('');
    expect(text).toContain('Stream a few words please');
    const completed = events.at(-1) as Extract<ResponseStreamEvent, { type: 'response.completed' }>;
    expect(completed.response.usage?.output_tokens).toBeGreaterThan(0);
    const done = events.find((event) => event.type === 'response.output_text.done') as { text: string };
    expect(done.text).toBe(text);
  });

  it('the SDK stream helper assembles the final response from a bridged stream', async () => {
    const runner = client.responses.stream({ model: 'r-anthropic', input: 'Assemble this', store: false });
    const deltas: string[] = [];
    runner.on('response.output_text.delta', (event) => deltas.push(event.delta));
    const final = await runner.finalResponse();
    expect(final.output_text).toBe(deltas.join(''));
    expect(final.output_text).toContain('Assemble this');
  });
});

describe('a function-call conversation, bridged', () => {
  it.each(BRIDGED)('calls the function and reads its output on the next turn through %s (non-streaming)', async (model) => {
    const input: ResponseInputItem[] = [{ role: 'user', content: 'What is the weather in Paris?' }];
    const first = await client.responses.create({ model, input, tools: [weather], store: false });
    const call = first.output.find((item) => item.type === 'function_call');
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', status: 'completed' });
    const args = JSON.parse((call as { arguments: string }).arguments) as { location: string };
    expect(args.location).toContain('Paris');
    input.push(...(first.output as ResponseInputItem[]));
    input.push({ type: 'function_call_output', call_id: (call as { call_id: string }).call_id, output: '{"temperature_c":18,"sky":"clear"}' });
    const second = await client.responses.create({ model, input, tools: [weather], store: false });
    expect(second.status).toBe('completed');
    expect(second.output_text).toMatch(/18/);
    expect(second.output_text.toLowerCase()).toContain('get_weather');
  });

  it.each(['r-anthropic', 'r-gemini'] as const)('streams function_call_arguments events and continues the conversation through %s', async (model) => {
    const input: ResponseInputItem[] = [{ role: 'user', content: 'What is the weather in Tokyo?' }];
    const stream = await client.responses.create({ model, input, tools: [weather], stream: true, store: false });
    const events: ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const added = events.find((event) => event.type === 'response.output_item.added' && event.item.type === 'function_call') as Extract<ResponseStreamEvent, { type: 'response.output_item.added' }>;
    expect(added).toBeDefined();
    const argumentText = events.flatMap((event) => (event.type === 'response.function_call_arguments.delta' && event.item_id === added.item.id ? [event.delta] : [])).join('');
    const argumentsDone = events.find((event) => event.type === 'response.function_call_arguments.done') as Extract<ResponseStreamEvent, { type: 'response.function_call_arguments.done' }> & { name: string };
    expect(argumentsDone.name).toBe('get_weather');
    expect(JSON.parse(argumentsDone.arguments)).toEqual(JSON.parse(argumentText));
    const completed = events.at(-1) as Extract<ResponseStreamEvent, { type: 'response.completed' }>;
    expect(completed.type).toBe('response.completed');
    const call = completed.response.output.find((item) => item.type === 'function_call') as { call_id: string; arguments: string };
    expect(call.arguments).toBe(argumentsDone.arguments);
    input.push(...(completed.response.output as ResponseInputItem[]));
    input.push({ type: 'function_call_output', call_id: call.call_id, output: 'sunny, 24 degrees' });
    const runner = client.responses.stream({ model, input, tools: [weather], store: false });
    const final = await runner.finalResponse();
    expect(final.output_text).toContain('24');
  });

  it('hands Anthropic reasoning state back through encrypted_content across turns', async () => {
    const input: ResponseInputItem[] = [{ role: 'user', content: 'What is the weather in Oslo?' }];
    const first = await client.responses.create({ model: 'r-anthropic', input, tools: [weather], reasoning: { effort: 'low', summary: 'auto' }, include: ['reasoning.encrypted_content'], store: false });
    const reasoning = first.output.find((item) => item.type === 'reasoning');
    expect(reasoning?.encrypted_content).toMatch(/^ugw1\.s\./);
    expect(reasoning?.summary[0]?.text).toContain('Thinking about');
    const call = first.output.find((item) => item.type === 'function_call') as { call_id: string };
    input.push(...(first.output as ResponseInputItem[]));
    input.push({ type: 'function_call_output', call_id: call.call_id, output: 'snow' });
    const second = await client.responses.create({ model: 'r-anthropic', input, tools: [weather], reasoning: { effort: 'low' }, store: false });
    expect(second.output_text).toContain('snow');
    const sent = anthropicUpstream.requests.at(-1)?.body as { messages: Array<{ role: string; content: Array<{ type: string; signature?: string }> }> };
    const thinking = sent.messages[1]?.content.find((block) => block.type === 'thinking');
    expect(thinking?.signature).toBe(reasoning?.encrypted_content?.slice('ugw1.s.'.length));
  });
});

describe('stored state: honest about where it lives', () => {
  it('continues a conversation with previous_response_id on the OpenAI channel (state held upstream)', async () => {
    const first = await client.responses.create({ model: 'r-openai', input: 'What is the weather in Rome?', tools: [weather] });
    const call = first.output.find((item) => item.type === 'function_call') as { call_id: string };
    const second = await client.responses.create({ model: 'r-openai', previous_response_id: first.id, input: [{ type: 'function_call_output', call_id: call.call_id, output: 'warm' }], tools: [weather] });
    expect(second.output_text).toContain('warm');
  });

  it.each(BRIDGED)('refuses previous_response_id, store: true and built-in tools on %s with unsupported_parameter', async (model) => {
    for (const [body, param] of [
      [{ previous_response_id: 'resp_123', input: 'x' }, 'previous_response_id'],
      [{ store: true, input: 'x' }, 'store'],
      [{ input: 'x', tools: [{ type: 'local_shell' }] }, 'tools[0].type'],
      [{ input: [{ type: 'item_reference', id: 'msg_1' }] }, 'input[0]'],
    ] as const) {
      const error = await client.responses.create({ model, ...body } as never).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error).toMatchObject({ status: 400, code: 'unsupported_parameter', param });
    }
  });

  it('answers 404 for stored-response operations, after authentication', async () => {
    await expect(client.responses.retrieve('resp_abc')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(client.responses.delete('resp_abc')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const anonymous = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'sk-NOTAKEYNOTAKEYNOTAKEYNOTAKEY', maxRetries: 0 });
    await expect(anonymous.responses.retrieve('resp_abc')).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });
});

describe('POST /v1/responses/input_tokens', () => {
  const counterPathOf: Record<(typeof MODELS)[number], string | null> = {
    'r-openai': '/v1/responses/input_tokens',
    'r-compatible': null,
    'r-anthropic': '/v1/messages/count_tokens',
    'r-gemini': ':countTokens',
  };

  it.each(MODELS)('counts through %s: the upstream counter where there is one, else the local tokenizer', async (model) => {
    const before = { openai: openaiUpstream.requests.length, anthropic: anthropicUpstream.requests.length, gemini: geminiUpstream.requests.length };
    const { data, response } = await client.responses.inputTokens
      .count({ model, input: [{ role: 'user', content: 'What is the weather in Rome?' }], instructions: 'Answer briefly.', tools: [weather] })
      .withResponse();
    expect(data.object).toBe('response.input_tokens');
    expect(data.input_tokens).toBeGreaterThan(10);
    const sent = [...openaiUpstream.requests.slice(before.openai), ...anthropicUpstream.requests.slice(before.anthropic), ...geminiUpstream.requests.slice(before.gemini)];
    const counter = counterPathOf[model];
    if (counter === null) {
      expect(response.headers.get('x-token-count-source')).toBe('local');
      expect(sent).toHaveLength(0);
    } else {
      expect(response.headers.get('x-token-count-source')).toBe('upstream');
      expect(sent.map((request) => request.path.endsWith(counter))).toEqual([true]);
    }
  });

  it('passes the body through to the OpenAI channel, which alone can count a continued conversation', async () => {
    const first = await client.responses.create({ model: 'r-openai', input: 'Remember the word teapot' });
    const alone = await client.responses.inputTokens.count({ model: 'r-openai', input: 'What was the word?' });
    const continued = await client.responses.inputTokens.count({ model: 'r-openai', input: 'What was the word?', previous_response_id: first.id });
    expect(continued.input_tokens).toBeGreaterThan(alone.input_tokens);
    const sent = openaiUpstream.requests.at(-1);
    expect(sent?.path).toBe('/v1/responses/input_tokens');
    expect(sent?.body).toEqual({ model: 'gpt-4o-mini', input: 'What was the word?', previous_response_id: first.id });
    const refused = await client.responses.inputTokens.count({ model: 'r-anthropic', input: 'x', previous_response_id: first.id }).catch((caught: unknown) => caught);
    expect(refused).toMatchObject({ status: 400, code: 'unsupported_parameter', param: 'previous_response_id' });
  });

  it('counts locally when the OpenAI upstream fails, but never a conversation only the upstream holds', async () => {
    // A channel of its own (same mock), so the failures below leave the breaker of the other tests' channel alone.
    await addRoutedModel(gateway, { model: 'r-openai-count', channel: { name: 'o-count', type: 'openai', base_url: openaiUpstream.url, api_key: 'sk-upstream-test', models: { 'r-openai-count': 'gpt-4o-mini' } } });
    const first = await client.responses.create({ model: 'r-openai', input: 'Remember the word kettle' });
    openaiUpstream.setFault({ kind: 'status', status: 500, times: 10 });
    try {
      const { data, response } = await client.responses.inputTokens.count({ model: 'r-openai-count', input: 'What was the word?' }).withResponse();
      expect(response.headers.get('x-token-count-source')).toBe('local');
      expect(data.input_tokens).toBeGreaterThan(0);
      const failed = await client.responses.inputTokens.count({ model: 'r-openai-count', input: 'What was the word?', previous_response_id: first.id }).catch((caught: unknown) => caught);
      expect(failed).toBeInstanceOf(OpenAI.APIError);
      expect((failed as InstanceType<typeof OpenAI.APIError>).status).toBeGreaterThanOrEqual(500);
      expect(JSON.stringify((failed as InstanceType<typeof OpenAI.APIError>).error)).not.toContain(openaiUpstream.url);
    } finally {
      openaiUpstream.setFault(null);
    }
  });

  it('validates like POST /v1/responses and is never billed', async () => {
    await expect(client.responses.inputTokens.count({ input: 'x' })).rejects.toMatchObject({ status: 400, param: 'model' });
    await expect(client.responses.inputTokens.count({ model: 'no-such-model', input: 'x' })).rejects.toMatchObject({ status: 400, code: 'model_not_found' });
    const { body: before } = await gateway.admin<{ balance_usd: number }>('GET', `/admin/accounts/${account.accountId}`);
    await client.responses.inputTokens.count({ model: 'r-anthropic', input: 'How much is this?' });
    await flushWrites(gateway);
    const { body: after } = await gateway.admin<{ balance_usd: number }>('GET', `/admin/accounts/${account.accountId}`);
    expect(after.balance_usd).toBe(before.balance_usd);
  });
});

describe('errors and limits like chat', () => {
  it('validates input and names the field', async () => {
    await expect(client.responses.create({ model: 'r-anthropic' } as never)).rejects.toMatchObject({ status: 400, param: 'input' });
    await expect(client.responses.create({ model: 'r-anthropic', input: 'x', temperature: 3 })).rejects.toMatchObject({ status: 400, param: 'temperature' });
    await expect(client.responses.create({ model: 'r-gemini', input: [{ type: 'function_call_output', call_id: 'nope', output: 'x' }] })).rejects.toMatchObject({ status: 400, param: 'input[0].call_id' });
    await expect(client.responses.create({ model: 'no-such-model', input: 'x' })).rejects.toMatchObject({ status: 400, code: 'model_not_found' });
  });

  it('refuses a model outside the key allowlist with 403', async () => {
    const limited = await seedAccount(gateway, { balanceUsd: 5, key: { allowed_models: ['r-openai'] } });
    const other = new OpenAI({ baseURL: gateway.baseURL, apiKey: limited.key, maxRetries: 0 });
    await expect(other.responses.create({ model: 'r-anthropic', input: 'x' })).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError);
  });

  it('ends a bridged stream that breaks mid-way with response.failed and an error the SDK raises', async () => {
    anthropicUpstream.setFault({ kind: 'cut-stream', afterEvents: 4, times: 1 });
    const stream = await client.responses.create({ model: 'r-anthropic', stream: true, store: false, input: 'a long answer please, with many words in it' });
    const types: string[] = [];
    const error = await (async () => {
      for await (const event of stream) types.push(event.type);
    })().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(types).toContain('response.failed');
  });

  it('relays a passed-through stream that fails in-band after its answer began, and records the failure on the usage row', async () => {
    openaiUpstream.setFault({ kind: 'stream-error', afterChunks: 6, error: { message: 'overloaded', type: 'server_error', param: null, code: 'server_error' }, times: 1 });
    const { data: stream, response } = await client.responses.create({ model: 'r-openai', stream: true, store: false, input: 'a long answer please, with many words in it' }).withResponse();
    const types: string[] = [];
    // OpenAI's own flat `error` event, forwarded untouched: the SDK raises it, with its fields, after the answer's
    // events before it.
    const error = await (async () => {
      for await (const event of stream) types.push(event.type);
    })().catch((caught: unknown) => caught);
    expect(types).toContain('response.output_text.delta');
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error).toMatchObject({ message: 'overloaded', code: 'server_error' });
    const row = await usageRow(response.headers.get('x-request-id') ?? '');
    expect(row).toMatchObject({ status: 502, error_code: 'upstream_error' });
    expect(row.completion_tokens).toBeGreaterThan(0);
  });

  it('retries a passed-through stream that fails in-band before any answer on the next OpenAI channel', async () => {
    const [first, second] = await Promise.all([startMockOpenAIUpstream(), startMockOpenAIUpstream()]);
    try {
      await addRoutedModel(gateway, { model: 'r-pool', channel: { name: 'p1', type: 'openai', base_url: first.url, api_key: 'sk-upstream-test', priority: 10, models: { 'r-pool': 'gpt-4o-mini' } } });
      await addRoutedModel(gateway, { model: 'r-pool', channel: { name: 'p2', type: 'openai', base_url: second.url, api_key: 'sk-upstream-test', priority: 1, models: { 'r-pool': 'gpt-4o-mini' } } });
      await gateway.gateway.services.catalog.reload();
      first.setFault({ kind: 'stream-error', afterChunks: 2, error: { message: 'overloaded', type: 'server_error', param: null, code: 'server_error' }, times: 1 });
      const stream = await client.responses.create({ model: 'r-pool', stream: true, store: false, input: 'Retry me' });
      const events: ResponseStreamEvent[] = [];
      for await (const event of stream) events.push(event);
      expect(first.requests).toHaveLength(1);
      expect(second.requests).toHaveLength(1);
      expect(events.filter((event) => event.type === 'response.created')).toHaveLength(1);
      expect(events.at(-1)?.type).toBe('response.completed');
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  it('bills what was delivered when the caller aborts mid-stream', async () => {
    const controller = new AbortController();
    const slow = await startMockOpenAIUpstream({ chunkDelayMs: 40 });
    try {
      await addRoutedModel(gateway, { model: 'r-slow', channel: { name: 's', type: 'openai', base_url: slow.url, api_key: 'sk-upstream-test', models: { 'r-slow': 'gpt-4o-mini' } } });
      await gateway.gateway.services.catalog.reload();
      const { data: stream, response } = await client.responses.create({ model: 'r-slow', stream: true, store: false, input: 'one two three four five six seven eight nine ten eleven twelve' }, { signal: controller.signal }).withResponse();
      let deltas = 0;
      await (async () => {
        for await (const event of stream) {
          if (event.type === 'response.output_text.delta' && ++deltas === 3) controller.abort();
        }
      })().catch(() => undefined);
      const requestId = response.headers.get('x-request-id') ?? '';
      let row: UsageRow | undefined;
      for (let attempt = 0; attempt < 50 && row === undefined; attempt++) {
        row = await usageRow(requestId).catch(() => undefined);
        if (row === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(row).toMatchObject({ status: 499, error_code: 'client_closed_request' });
      expect(row?.completion_tokens).toBeGreaterThan(0);
      expect(row?.cost_usd).toBeGreaterThan(0);
    } finally {
      await slow.close();
    }
  });
});
