/**
 * The official openai SDK must read what the codec writes: a tiny node:http server answers with encoder output
 * (canonical parts and responses scripted per test) and `new OpenAI({ baseURL })` consumes it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI, { APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeOpenAIEmbeddingRequest } from '../../../../src/codecs/openai-chat/decode-embedding-request.js';
import { encodeOpenAIEmbeddingResponse } from '../../../../src/codecs/openai-chat/encode-embedding-response.js';
import { openAIChatCodec, openAIChatCodecFor } from '../../../../src/codecs/openai-chat/index.js';
import type { ChatResponse } from '../../../../src/ir/chat-response.js';
import type { StreamPart } from '../../../../src/ir/stream-part.js';
import type { Usage } from '../../../../src/ir/usage.js';

const usage: Usage = { input: { total: 30, noCache: 20, cacheRead: 10, cacheWrite: 0 }, output: { total: 12, text: 8, reasoning: 4 } };

interface Script {
  response: ChatResponse;
  parts: StreamPart[];
  vectors: number[][];
}

let script: Script;
let server: Server;
let client: OpenAI;
const requests: Array<Record<string, unknown>> = [];

async function readJson(request: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
}

async function answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const body = await readJson(request);
  requests.push(body);
  if (request.url === '/v1/embeddings') {
    const decoded = decodeOpenAIEmbeddingRequest(body);
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(encodeOpenAIEmbeddingResponse({ model: 'upstream', vectors: script.vectors, inputTokens: 9 }, { model: decoded.request.model, encodingFormat: decoded.encodingFormat }));
    return;
  }
  const request_ = openAIChatCodec.decodeRequest(body, {});
  if (!request_.stream) {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(openAIChatCodec.encodeResponse(script.response, request_.model));
    return;
  }
  const streamOptions = body.stream_options as { include_usage?: boolean } | undefined;
  const encoder = openAIChatCodecFor({ includeUsage: streamOptions?.include_usage === true }).createStreamEncoder({ model: request_.model });
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const part of script.parts) {
    const text = encoder.encode(part);
    if (text !== '') response.write(text);
  }
  response.end(encoder.end());
}

beforeAll(async () => {
  server = createServer((request, response) => {
    answer(request, response).catch((error: unknown) => {
      response.writeHead(500);
      response.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'sk-test', maxRetries: 0, timeout: 10_000 });
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const start: StreamPart = { type: 'response-start', id: 'msg_abc', model: 'claude-sonnet', created: 1_750_000_000 };
const finish = (unified: 'stop' | 'tool-calls'): StreamPart => ({ type: 'finish', reason: { unified, raw: null }, usage });

function textScript(): Script {
  return {
    response: { id: 'msg_abc', model: 'claude-sonnet', created: 1_750_000_000, content: [{ type: 'text', text: 'Hi there' }], finishReason: { unified: 'stop', raw: 'end_turn' }, usage, warnings: [] },
    parts: [
      start,
      { type: 'reasoning-start', id: 'r' }, { type: 'reasoning-delta', id: 'r', delta: 'thinking' }, { type: 'reasoning-end', id: 'r' },
      { type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'Hi' }, { type: 'text-delta', id: 't', delta: ' there' }, { type: 'text-end', id: 't' },
      { type: 'usage', usage }, finish('stop'),
    ],
    vectors: [],
  };
}

describe('the openai SDK reads the codec output', () => {
  it('create (non-streaming)', async () => {
    script = textScript();
    const completion = await client.chat.completions.create({ model: 'public-model', messages: [{ role: 'user', content: 'Hello' }] });
    expect(completion.id).toBe('chatcmpl-msg_abc');
    expect(completion.model).toBe('public-model');
    expect(completion.choices[0]?.message).toMatchObject({ role: 'assistant', content: 'Hi there', refusal: null });
    expect(completion.usage).toMatchObject({ prompt_tokens: 30, completion_tokens: 12, total_tokens: 42, prompt_tokens_details: { cached_tokens: 10 }, completion_tokens_details: { reasoning_tokens: 4 } });
  });

  it('stream(...).finalChatCompletion() with the usage chunk', async () => {
    script = textScript();
    const stream = client.chat.completions.stream({ model: 'public-model', messages: [{ role: 'user', content: 'Hello' }], stream_options: { include_usage: true } });
    const deltas: string[] = [];
    stream.on('content', (delta) => deltas.push(delta));
    const completion = await stream.finalChatCompletion();
    expect(deltas.join('')).toBe('Hi there');
    expect(completion.choices[0]?.message.content).toBe('Hi there');
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    expect(completion.usage).toMatchObject({ prompt_tokens: 30, completion_tokens: 12 });
  });

  it('stream(...).finalChatCompletion() with interleaved tool calls and no usage chunk', async () => {
    script = {
      ...textScript(),
      parts: [
        start,
        { type: 'tool-input-start', id: 'a', toolCallId: 'toolu_a', toolName: 'get_weather', index: 0 },
        { type: 'tool-input-start', id: 'b', toolCallId: 'toolu_b', toolName: 'get_time', index: 1 },
        { type: 'tool-input-delta', id: 'b', delta: '{"tz":"UTC"}' },
        { type: 'tool-input-delta', id: 'a', delta: '{"city":' },
        { type: 'tool-input-delta', id: 'a', delta: '"Oslo"}' },
        { type: 'tool-input-end', id: 'a' },
        { type: 'tool-input-end', id: 'b' },
        finish('tool-calls'),
      ],
    };
    const tools = ['get_weather', 'get_time'].map((name) => ({ type: 'function' as const, function: { name, parameters: { type: 'object', properties: {} } } }));
    const completion = await client.chat.completions.stream({ model: 'public-model', messages: [{ role: 'user', content: 'Weather?' }], tools }).finalChatCompletion();
    expect(completion.usage).toBeUndefined();
    expect(completion.choices[0]?.finish_reason).toBe('tool_calls');
    expect(completion.choices[0]?.message.tool_calls).toEqual([
      { id: 'toolu_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
      { id: 'toolu_b', type: 'function', function: { name: 'get_time', arguments: '{"tz":"UTC"}' } },
    ]);
  });

  it('raises an in-stream error part as an APIError', async () => {
    script = { ...textScript(), parts: [start, { type: 'text-delta', id: 't', delta: 'Hi' }, { type: 'error', status: 502, code: 'upstream_error', message: 'The upstream provider failed mid-stream.' }] };
    const stream = await client.chat.completions.create({ model: 'public-model', messages: [{ role: 'user', content: 'Hello' }], stream: true });
    const received: string[] = [];
    let caught: unknown;
    try {
      for await (const chunk of stream) received.push(chunk.choices[0]?.delta.content ?? '');
    } catch (error) {
      caught = error;
    }
    expect(received.join('')).toBe('Hi');
    expect(caught).toBeInstanceOf(APIError);
    expect((caught as APIError).message).toContain('The upstream provider failed mid-stream.');
  });

  it('embeddings in both encodings (the SDK asks for base64 by default and decodes it)', async () => {
    const vectors = [[0.25, -1.5, 3.000000238418579], [Math.fround(0.1), Math.fround(-0.2), 0]];
    script = { ...textScript(), vectors };
    requests.length = 0;
    const base64 = await client.embeddings.create({ model: 'embed-model', input: ['a', 'b'] });
    expect(requests[0]?.encoding_format).toBe('base64');
    expect(base64.data.map((entry) => entry.embedding)).toEqual(vectors);
    expect(base64.usage).toEqual({ prompt_tokens: 9, total_tokens: 9 });
    expect(base64.model).toBe('embed-model');
    const floats = await client.embeddings.create({ model: 'embed-model', input: 'a', encoding_format: 'float' });
    expect(floats.data[0]).toEqual({ object: 'embedding', index: 0, embedding: vectors[0] });
  });
});
