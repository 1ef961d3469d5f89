/**
 * Fidelity of the mock OpenAI upstream's Responses API: the official `openai` SDK, pointed straight at it, accepts
 * its response objects and event sequences (text, tool calls, usage, previous_response_id, errors) as OpenAI's.
 */
import OpenAI from 'openai';
import type { FunctionTool, ResponseStreamEvent } from 'openai/resources/responses/responses';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../support/mock-openai-upstream.js';

const API_KEY = 'sk-upstream-test';
const weather: FunctionTool = {
  type: 'function',
  name: 'get_weather',
  description: 'Current weather of a city',
  parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'], additionalProperties: false },
  strict: true,
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
  mock.requests.length = 0;
});

describe('mock OpenAI upstream: POST /v1/responses', () => {
  it('answers a string input with a response object the SDK reads (output_text, usage)', async () => {
    const response = await client.responses.create({ model: 'gpt-4o-mini', input: 'Say hello', instructions: 'Be brief.' });
    expect(response.object).toBe('response');
    expect(response.id).toMatch(/^resp_/);
    expect(response.status).toBe('completed');
    expect(response.output_text).toBe('Echo: Say hello');
    expect(response.usage?.input_tokens).toBeGreaterThan(0);
    expect(response.usage?.total_tokens).toBe((response.usage?.input_tokens ?? 0) + (response.usage?.output_tokens ?? 0));
    expect(mock.requests[0]?.path).toBe('/v1/responses');
  });

  it('streams the Responses event sequence with increasing sequence numbers', async () => {
    const stream = await client.responses.create({ model: 'gpt-4o-mini', input: 'Stream a few words please', stream: true });
    const events: ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    expect(events[0]?.type).toBe('response.created');
    expect(events[1]?.type).toBe('response.in_progress');
    expect(events.at(-1)?.type).toBe('response.completed');
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    const text = events.filter((event) => event.type === 'response.output_text.delta').map((event) => (event as { delta: string }).delta).join('');
    expect(text).toBe('Echo: Stream a few words please');
  });

  it('calls a function, streams its arguments, and continues with previous_response_id', async () => {
    const runner = client.responses.stream({ model: 'gpt-4o-mini', input: 'What is the weather in Paris?', tools: [weather] });
    const argumentDeltas: string[] = [];
    runner.on('response.function_call_arguments.delta', (event) => argumentDeltas.push(event.delta));
    const first = await runner.finalResponse();
    const call = first.output.find((item) => item.type === 'function_call');
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: '{"location":"Paris"}' });
    expect(argumentDeltas.join('')).toBe('{"location":"Paris"}');
    const second = await client.responses.create({
      model: 'gpt-4o-mini',
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: (call as { call_id: string }).call_id, output: '{"temperature_c":18}' }],
      tools: [weather],
    });
    expect(second.output_text).toBe('Tool get_weather returned: {"temperature_c":18}');
    const stored = await client.responses.retrieve(second.id);
    expect(stored.id).toBe(second.id);
  });

  it('refuses what OpenAI refuses: unknown parameters, unknown previous responses, stray function outputs', async () => {
    await expect(client.responses.create({ model: 'gpt-4o-mini', input: 'x', bogus: 1 } as never)).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    await expect(client.responses.create({ model: 'gpt-4o-mini', input: 'x', previous_response_id: 'resp_missing' })).rejects.toMatchObject({ status: 400, param: 'previous_response_id' });
    await expect(client.responses.create({ model: 'gpt-4o-mini', input: [{ type: 'function_call_output', call_id: 'call_x', output: 'y' }] })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
  });

  it('takes back the encrypted reasoning it issued and refuses any other, as OpenAI does', async () => {
    const params = { model: 'gpt-5', tools: [weather], store: false, include: ['reasoning.encrypted_content' as const] };
    const first = await client.responses.create({ ...params, input: 'What is the weather in Paris?' });
    const reasoning = first.output.find((item) => item.type === 'reasoning');
    expect(reasoning?.encrypted_content).toMatch(/^gAAAAA/);
    const call = first.output.find((item) => item.type === 'function_call') as { call_id: string };
    const input = [{ role: 'user' as const, content: 'What is the weather in Paris?' }, ...(first.output as OpenAI.Responses.ResponseInputItem[]), { type: 'function_call_output' as const, call_id: call.call_id, output: 'Sunny' }];
    expect((await client.responses.create({ ...params, input })).status).toBe('completed');
    const foreign = input.map((item) => (item.type === 'reasoning' ? { ...item, encrypted_content: 'ugw1.n.R2VtaW5p' } : item));
    await expect(client.responses.create({ ...params, input: foreign })).rejects.toMatchObject({
      status: 400,
      code: 'invalid_encrypted_content',
      message: `400 The encrypted content for item ${reasoning?.id} could not be verified. Reason: Encrypted content could not be decrypted or parsed.`,
    });
  });

  it('ends a stream with an error event on a stream-error fault', async () => {
    mock.setFault({ kind: 'stream-error', afterChunks: 3, times: 1 });
    const stream = await client.responses.create({ model: 'gpt-4o-mini', input: 'Stream a few words please', stream: true });
    const types: string[] = [];
    // The SDK raises OpenAI's flat `error` event as an APIError, after the events sent before the fault.
    const error = await (async () => {
      for await (const event of stream) types.push(event.type);
    })().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(types).toHaveLength(3);
  });
});

describe('mock OpenAI upstream: POST /v1/responses/input_tokens', () => {
  it('counts the input a response would be billed for, as the SDK reads it', async () => {
    const counted = await client.responses.inputTokens.count({ model: 'gpt-4o-mini', input: 'Say hello', instructions: 'Be brief.' });
    expect(counted.object).toBe('response.input_tokens');
    const created = await client.responses.create({ model: 'gpt-4o-mini', input: 'Say hello', instructions: 'Be brief.', store: false });
    expect(counted.input_tokens).toBe(created.usage?.input_tokens);
  });

  it('counts a continued conversation with its stored turns, and refuses unknown parameters', async () => {
    const first = await client.responses.create({ model: 'gpt-4o-mini', input: 'Remember the word teapot' });
    const alone = await client.responses.inputTokens.count({ model: 'gpt-4o-mini', input: 'What was the word?' });
    const continued = await client.responses.inputTokens.count({ model: 'gpt-4o-mini', input: 'What was the word?', previous_response_id: first.id });
    expect(continued.input_tokens).toBeGreaterThan(alone.input_tokens);
    await expect(client.responses.inputTokens.count({ model: 'gpt-4o-mini', input: 'x', stream: true } as never)).rejects.toMatchObject({ status: 400, code: 'unknown_parameter' });
  });
});
