/**
 * Fidelity of the mock Gemini upstream: the official `@google/genai` SDK, pointed straight at it, must accept
 * every answer (responses, both stream framings, function calls with thought signatures, embeddings, token
 * counts, the model list, errors) as if it were Google, and the mock must reject what the real API rejects.
 */
import { ApiError, GoogleGenAI, type Content, type FunctionDeclaration, type GenerateContentResponse } from '@google/genai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { countTokens, DEFAULT_MODELS, embeddingVector, startMockGeminiUpstream, type MockGeminiUpstream } from '../support/mock-gemini-upstream.js';

const API_KEY = 'gemini-upstream-test';
const weather: FunctionDeclaration = {
  name: 'get_weather',
  description: 'Current weather of a city',
  parameters: {
    type: 'OBJECT' as FunctionDeclaration['parameters'] extends { type?: infer T } ? T : never,
    properties: { location: { type: 'STRING' as never }, unit: { type: 'STRING' as never, enum: ['celsius', 'fahrenheit'] } },
    required: ['location'],
  },
};

let mock: MockGeminiUpstream;
let ai: GoogleGenAI;

beforeAll(async () => {
  mock = await startMockGeminiUpstream({ apiKey: API_KEY });
  // The Gemini API version the gateway's adapter calls (the SDK's default is v1 since its version 3).
  ai = new GoogleGenAI({ apiKey: API_KEY, httpOptions: { baseUrl: mock.url, apiVersion: 'v1beta' } });
});
afterAll(async () => {
  await mock.close();
});
afterEach(() => {
  mock.setFault(null);
  mock.setUsageOverride(null);
  mock.requests.length = 0;
});

async function post(path: string, body: unknown, key: string | null = API_KEY): Promise<{ status: number; text: string; contentType: string | null }> {
  const response = await fetch(`${mock.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key === null ? {} : { 'x-goog-api-key': key }) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, text: await response.text(), contentType: response.headers.get('content-type') };
}

async function rejected(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => null,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe('generateContent', () => {
  it('answers a GenerateContentResponse the SDK reads, with usage and the model version', async () => {
    const res = await ai.models.generateContent({ model: 'gemini-2.0-flash', contents: 'Hello there, mock!', config: { systemInstruction: 'Be terse.' } });
    expect(res.text).toBe('Echo: Hello there, mock!');
    expect(res.candidates?.[0]?.finishReason).toBe('STOP');
    expect(res.modelVersion).toBe('gemini-2.0-flash');
    expect(res.responseId).toMatch(/^[A-Za-z0-9_-]{20}$/);
    const prompt = countTokens('Hello there, mock!') + countTokens('Be terse.');
    const answer = countTokens('Echo: Hello there, mock!');
    expect(res.usageMetadata).toMatchObject({ promptTokenCount: prompt, candidatesTokenCount: answer, totalTokenCount: prompt + answer });
    const recorded = mock.requests[0];
    expect(recorded?.path).toBe('/v1beta/models/gemini-2.0-flash:generateContent');
    expect(recorded?.headers['x-goog-api-key']).toBe(API_KEY);
    expect(recorded?.body).toMatchObject({ contents: [{ role: 'user', parts: [{ text: 'Hello there, mock!' }] }], systemInstruction: { parts: [{ text: 'Be terse.' }] } });
  });

  it('thinks on 2.5 models: thoughtsTokenCount always, thought parts with includeThoughts', async () => {
    const res = await ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'Why?', config: { thinkingConfig: { includeThoughts: true } } });
    const parts = res.candidates?.[0]?.content?.parts ?? [];
    expect(parts[0]).toMatchObject({ thought: true });
    expect(parts[1]).toEqual({ text: 'Echo: Why?', thoughtSignature: expect.any(String) as string });
    expect(res.text).toBe('Echo: Why?');
    const usage = res.usageMetadata;
    expect(usage?.thoughtsTokenCount).toBeGreaterThan(0);
    expect(usage?.totalTokenCount).toBe((usage?.promptTokenCount ?? 0) + (usage?.candidatesTokenCount ?? 0) + (usage?.thoughtsTokenCount ?? 0));
    const off = await ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'Why?', config: { thinkingConfig: { thinkingBudget: 0 } } });
    expect(off.usageMetadata?.thoughtsTokenCount).toBeUndefined();
  });

  it('honours maxOutputTokens (MAX_TOKENS), stop sequences and JSON output', async () => {
    const long = await ai.models.generateContent({ model: 'gemini-2.0-flash', contents: 'one two three four five six', config: { maxOutputTokens: 3 } });
    expect(long.text).toBe('Echo: one');
    expect(long.candidates?.[0]?.finishReason).toBe('MAX_TOKENS');
    const stopped = await ai.models.generateContent({ model: 'gemini-2.0-flash', contents: 'alpha beta gamma', config: { stopSequences: [' gamma'] } });
    expect(stopped.text).toBe('Echo: alpha beta');
    const json = await ai.models.generateContent({ model: 'gemini-2.0-flash', contents: 'hi', config: { responseMimeType: 'application/json' } });
    expect(JSON.parse(json.text ?? '')).toEqual({ echo: 'hi' });
  });
});

describe('streamGenerateContent', () => {
  it('streams SSE chunks with running usage totals and the finish reason last', async () => {
    const stream = await ai.models.generateContentStream({ model: 'gemini-2.0-flash', contents: 'Stream these seven words to me please' });
    const chunks: GenerateContentResponse[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks.map((chunk) => chunk.text ?? '').join('')).toBe('Echo: Stream these seven words to me please');
    const totals = chunks.map((chunk) => chunk.usageMetadata?.candidatesTokenCount ?? 0);
    expect(totals).toEqual([...totals].sort((a, b) => a - b));
    expect(totals.at(-1)).toBe(countTokens('Echo: Stream these seven words to me please'));
    expect(chunks.slice(0, -1).every((chunk) => chunk.candidates?.[0]?.finishReason === undefined)).toBe(true);
    expect(chunks.at(-1)?.candidates?.[0]?.finishReason).toBe('STOP');
    expect(mock.requests[0]?.url).toBe('/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse');
  });

  it('frames SSE events with CRLF and, without alt=sse, streams a JSON array', async () => {
    const body = { contents: [{ role: 'user', parts: [{ text: 'a b c d e f g' }] }] };
    const sse = await post('/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse', body);
    expect(sse.contentType).toBe('text/event-stream');
    expect(sse.text.startsWith('data: {')).toBe(true);
    expect(sse.text.endsWith('}\r\n\r\n')).toBe(true);
    const array = await post('/v1beta/models/gemini-2.0-flash:streamGenerateContent', body);
    expect(array.contentType).toContain('application/json');
    expect(array.text.startsWith('[{\n')).toBe(true);
    expect(array.text).toContain('}\n,\r\n{');
    expect(array.text.endsWith('}\n]')).toBe(true);
    const elements = JSON.parse(array.text) as Array<{ candidates: Array<{ content?: { parts: Array<{ text: string }> } }> }>;
    const sseChunks = sse.text.split('\r\n\r\n').filter(Boolean).map((event) => JSON.parse(event.slice('data: '.length)) as (typeof elements)[number]);
    const text = (list: typeof elements): string => list.map((chunk) => chunk.candidates[0]?.content?.parts.map((part) => part.text).join('') ?? '').join('');
    expect(text(elements)).toBe(text(sseChunks));
  });

  it('ends a Gemini 3 text stream with an empty text part that carries the signature', async () => {
    const stream = await ai.models.generateContentStream({ model: 'gemini-3-flash-preview', contents: 'sign this' });
    const parts = [];
    for await (const chunk of stream) parts.push(...(chunk.candidates?.[0]?.content?.parts ?? []));
    expect(parts.at(-1)).toEqual({ text: '', thoughtSignature: expect.any(String) as string });
  });
});

describe('function calling', () => {
  it('calls a function with a thought signature and accepts the round trip only with the signature kept', async () => {
    const model = 'gemini-3-flash-preview';
    const tools = [{ functionDeclarations: [weather] }];
    const question: Content = { role: 'user', parts: [{ text: 'What is the weather in Tokyo?' }] };
    const first = await ai.models.generateContent({ model, contents: [question], config: { tools } });
    expect(first.functionCalls).toEqual([{ name: 'get_weather', args: { location: 'Tokyo', unit: 'celsius' } }]);
    const modelTurn = first.candidates?.[0]?.content as Content;
    expect(modelTurn.parts?.[0]?.thoughtSignature).toMatch(/^[A-Za-z0-9+/]+=*$/);
    const answer: Content = { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { output: '18°C, clear' } } }] };
    const second = await ai.models.generateContent({ model, contents: [question, modelTurn, answer], config: { tools } });
    expect(second.text).toBe('Tool results: get_weather={"output":"18°C, clear"}');

    const unsigned: Content = { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { location: 'Tokyo' } } }] };
    const error = await rejected(ai.models.generateContent({ model, contents: [question, unsigned, answer], config: { tools } }));
    expect(error.status).toBe(400);
    expect(error.message).toContain('Function call is missing a thought_signature in functionCall parts');
    // Google's placeholder signature passes the check.
    const placeholder: Content = { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: {} }, thoughtSignature: 'skip_thought_signature_validator' }] };
    await expect(ai.models.generateContent({ model, contents: [question, placeholder, answer], config: { tools } })).resolves.toBeDefined();
  });

  it('streams the call whole in one chunk and obeys mode NONE and ANY', async () => {
    const stream = await ai.models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'weather in Oslo?', config: { tools: [{ functionDeclarations: [weather] }] } });
    const calls = [];
    for await (const chunk of stream) calls.push(...(chunk.functionCalls ?? []));
    expect(calls).toEqual([{ name: 'get_weather', args: { location: 'Oslo', unit: 'celsius' } }]);
    const none = await ai.models.generateContent({
      model: 'gemini-2.5-flash',
      contents: 'weather in Oslo?',
      config: { tools: [{ functionDeclarations: [weather] }], toolConfig: { functionCallingConfig: { mode: 'NONE' as never } } },
    });
    expect(none.functionCalls).toBeUndefined();
    const any = await ai.models.generateContent({
      model: 'gemini-2.5-flash',
      contents: 'hello',
      config: { tools: [{ functionDeclarations: [weather] }], toolConfig: { functionCallingConfig: { mode: 'ANY' as never, allowedFunctionNames: ['get_weather'] } } },
    });
    expect(any.functionCalls?.[0]?.name).toBe('get_weather');
  });
});

describe('embeddings, token counting and models', () => {
  it('embeds through batchEmbedContents, as the SDK calls it, with deterministic vectors', async () => {
    const res = await ai.models.embedContent({ model: 'gemini-embedding-001', contents: ['first text', 'second text'], config: { outputDimensionality: 64, taskType: 'RETRIEVAL_QUERY' } });
    expect(res.embeddings).toHaveLength(2);
    expect(res.embeddings?.[0]?.values).toEqual(embeddingVector('RETRIEVAL_QUERY\nfirst text', 64));
    const recorded = mock.requests[0];
    expect(recorded?.path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents');
    const sent = recorded?.body as { requests: unknown[] };
    expect(sent.requests).toHaveLength(2);
    expect(sent.requests[0]).toMatchObject({ model: 'models/gemini-embedding-001', content: { parts: [{ text: 'first text' }] }, outputDimensionality: 64, taskType: 'RETRIEVAL_QUERY' });
    const single = await post('/v1beta/models/gemini-embedding-001:embedContent', { content: { parts: [{ text: 'first text' }] } });
    expect((JSON.parse(single.text) as { embedding: { values: number[] } }).embedding.values).toHaveLength(3072);
    const wrongKind = await rejected(ai.models.embedContent({ model: 'gemini-2.5-flash', contents: 'x' }));
    expect(wrongKind.status).toBe(404);
  });

  it('counts tokens', async () => {
    const res = await ai.models.countTokens({ model: 'gemini-2.5-flash', contents: 'How many tokens is this?' });
    expect(res.totalTokens).toBe(countTokens('How many tokens is this?'));
    const nested = await post('/v1beta/models/gemini-2.5-flash:countTokens', {
      generateContentRequest: { model: 'models/gemini-2.5-flash', contents: [{ parts: [{ text: 'hi' }] }], systemInstruction: { parts: [{ text: 'Be brief.' }] } },
    });
    expect(JSON.parse(nested.text)).toMatchObject({ totalTokens: countTokens('hi') + countTokens('Be brief.') });
  });

  it('lists models page by page', async () => {
    const pager = await ai.models.list({ config: { pageSize: 3 } });
    const names: string[] = [];
    for await (const model of pager) names.push(model.name ?? '');
    expect(names).toEqual(DEFAULT_MODELS.map((name) => `models/${name}`));
    expect(mock.requests.length).toBe(Math.ceil(DEFAULT_MODELS.length / 3));
  });
});

describe('errors', () => {
  it('answers a wrong key with 400 API_KEY_INVALID, a missing key with 403, and accepts ?key=', async () => {
    const wrong = new GoogleGenAI({ apiKey: 'nope', httpOptions: { baseUrl: mock.url } });
    const error = await rejected(wrong.models.generateContent({ model: 'gemini-2.0-flash', contents: 'hi' }));
    expect(error.status).toBe(400);
    expect(error.message).toContain('API_KEY_INVALID');
    expect((await post('/v1beta/models/gemini-2.0-flash:generateContent', { contents: [{ parts: [{ text: 'hi' }] }] }, null)).status).toBe(403);
    const byQuery = await fetch(`${mock.url}/v1beta/models/gemini-2.0-flash:generateContent?key=${API_KEY}`, { method: 'POST', body: JSON.stringify({ contents: [{ parts: [{ text: 'hi' }] }] }) });
    expect(byQuery.status).toBe(200);
  });

  it('answers unknown models with 404 NOT_FOUND and faults with their status', async () => {
    const missing = await rejected(ai.models.generateContent({ model: 'unknown-model', contents: 'hi' }));
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.message)).toMatchObject({ error: { code: 404, status: 'NOT_FOUND' } });
    mock.setFault({ kind: 'status', status: 503, times: 1 });
    expect((await rejected(ai.models.generateContent({ model: 'gemini-2.0-flash', contents: 'hi' }))).status).toBe(503);
    mock.setFault({ kind: 'status', status: 429, times: 1 });
    const limited = await rejected(ai.models.generateContent({ model: 'gemini-2.0-flash', contents: 'hi' }));
    expect(limited.status).toBe(429);
    expect(limited.message).toContain('RESOURCE_EXHAUSTED');
  });

  it('reports an error inside a stream, which the SDK throws as ApiError', async () => {
    mock.setFault({ kind: 'stream-error', afterChunks: 1, times: 1 });
    const stream = await ai.models.generateContentStream({ model: 'gemini-2.0-flash', contents: 'one two three four five six seven' });
    const seen: string[] = [];
    const error = await rejected(
      (async () => {
        for await (const chunk of stream) seen.push(chunk.text ?? '');
      })(),
    );
    expect(error.status).toBe(500);
    expect(seen).toHaveLength(1);
  });
});

describe('what the real API rejects', () => {
  const path = '/v1beta/models/gemini-2.5-flash:generateContent';
  const user = (text: string): unknown => ({ role: 'user', parts: [{ text }] });
  const cases: Array<[string, unknown, string]> = [
    ['no contents', { contents: [] }, 'contents is not specified'],
    ['an empty text part', { contents: [{ role: 'user', parts: [{ text: '' }] }] }, "required oneof field 'data'"],
    ['an empty parts list', { contents: [{ role: 'user', parts: [] }] }, 'must not be empty'],
    ['a bad role', { contents: [{ role: 'assistant', parts: [{ text: 'x' }] }] }, 'Please use a valid role: user, model.'],
    ['an unknown top-level field', { contents: [user('x')], temperature: 1 }, 'Unknown name "temperature"'],
    ['an unknown generationConfig field', { contents: [user('x')], generationConfig: { max_tokens: 5 } }, `Unknown name "max_tokens" at 'generation_config'`],
    ['temperature above 2', { contents: [user('x')], generationConfig: { temperature: 2.5 } }, 'temperature must be in the range'],
    ['six stop sequences', { contents: [user('x')], generationConfig: { stopSequences: ['a', 'b', 'c', 'd', 'e', 'f'] } }, 'must not exceed 5'],
    [
      'additionalProperties in parameters',
      { contents: [user('x')], tools: [{ functionDeclarations: [{ name: 'f', parameters: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false } }] }] },
      'Unknown name "additionalProperties"',
    ],
    ['an OBJECT without properties', { contents: [user('x')], tools: [{ functionDeclarations: [{ name: 'f', parameters: { type: 'object', properties: {} } }] }] }, 'should be non-empty for OBJECT type'],
    ['a type list', { contents: [user('x')], tools: [{ functionDeclarations: [{ name: 'f', parameters: { type: ['string', 'null'] } }] }] }, 'Proto field is not repeating'],
    ['a function response without a call', { contents: [user('x'), { role: 'user', parts: [{ functionResponse: { name: 'f', response: {} } }] }] }, 'function response turn comes immediately after a function call turn'],
    [
      'a function call after a model turn',
      { contents: [user('x'), { role: 'model', parts: [{ text: 'y' }] }, { role: 'model', parts: [{ functionCall: { name: 'f', args: {} } }] }] },
      'function call turn comes immediately after a user turn',
    ],
    [
      'fewer responses than calls',
      {
        contents: [
          user('x'),
          { role: 'model', parts: [{ functionCall: { name: 'f', args: {} } }, { functionCall: { name: 'g', args: {} } }] },
          { role: 'user', parts: [{ functionResponse: { name: 'f', response: {} } }] },
        ],
      },
      'number of function response parts is equal to the number of function call parts',
    ],
    ['a non-base64 signature', { contents: [{ role: 'user', parts: [{ text: 'x', thoughtSignature: 'not base64!' }] }] }, 'Base64 decoding failed'],
    ['invalid JSON', '{"contents": [', 'Invalid JSON payload received'],
  ];
  it.each(cases)('rejects %s with 400 INVALID_ARGUMENT', async (_name, body, message) => {
    const res = await post(path, body);
    expect(res.status).toBe(400);
    const error = (JSON.parse(res.text) as { error: { code: number; status: string; message: string } }).error;
    expect(error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
    expect(error.message).toContain(message);
  });

  it('accepts snake_case field names and an empty text part that carries a signature', async () => {
    const res = await post(path, {
      system_instruction: { parts: [{ text: 'Be brief.' }] },
      contents: [user('x'), { role: 'model', parts: [{ text: 'y' }, { text: '', thought_signature: 'c2lnbmF0dXJl' }] }, user('z')],
      generation_config: { max_output_tokens: 20, thinking_config: { include_thoughts: false } },
    });
    expect(res.status).toBe(200);
  });
});
