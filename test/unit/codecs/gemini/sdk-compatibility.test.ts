/**
 * What the gateway writes on its Gemini endpoints must be read by the clients that speak Gemini: the official
 * `@google/genai` SDK and the Vercel AI SDK's Google provider. A small server answers with the codec's own
 * output (responses, both stream framings, errors) and both SDKs are pointed at it.
 */
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { ApiError, GoogleGenAI } from '@google/genai';
import { APICallError, generateText, jsonSchema, streamText, tool } from 'ai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { geminiCodec, geminiCodecFor } from '../../../../src/codecs/gemini/index.js';
import { geminiFamily } from '../../../../src/codecs/gemini/family.js';
import { GatewayError } from '../../../../src/errors/gateway-error.js';
import type { ChatResponse } from '../../../../src/ir/chat-response.js';
import type { StreamPart } from '../../../../src/ir/stream-part.js';
import type { Usage } from '../../../../src/ir/usage.js';

const usage: Usage = { input: { total: 20, noCache: 15, cacheRead: 5, cacheWrite: 0 }, output: { total: 30, text: 12, reasoning: 18 } };
const textResponse: ChatResponse = {
  id: 'resp-text',
  model: 'text',
  created: 1,
  content: [
    { type: 'reasoning', text: 'Considering.', signature: 'c2lnLXI=' },
    { type: 'text', text: 'Hello from the gateway' },
  ],
  finishReason: { unified: 'stop', raw: 'end_turn' },
  usage,
  warnings: [],
};
const toolResponse: ChatResponse = {
  ...textResponse,
  id: 'resp-tool',
  content: [{ type: 'tool-call', id: 'call_1', name: 'get_weather', argumentsJson: '{"city":"Paris"}', signature: 'c2lnLWM=' }],
  finishReason: { unified: 'tool-calls', raw: 'tool_use' },
};
const streamParts: StreamPart[] = [
  { type: 'response-start', id: 'resp-stream', model: 'x', created: 1 },
  { type: 'reasoning-start', id: 'r' },
  { type: 'reasoning-delta', id: 'r', delta: 'Considering.' },
  { type: 'reasoning-end', id: 'r' },
  { type: 'text-start', id: 't' },
  { type: 'text-delta', id: 't', delta: 'Hello ' },
  { type: 'usage', usage: { ...usage, output: { total: 19, text: 1, reasoning: 18 } } },
  { type: 'text-delta', id: 't', delta: 'from the gateway' },
  { type: 'text-end', id: 't', signature: 'c2lnLXQ=' },
  { type: 'finish', reason: { unified: 'stop', raw: null }, usage },
];

let server: Server;
let baseUrl: string;

function streamBody(parts: StreamPart[], sse: boolean): string {
  const encoder = geminiCodecFor({ sse }).createStreamEncoder({ model: 'public-model' });
  return parts.map((part) => encoder.encode(part)).join('') + encoder.end();
}

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const [, model = '', method = ''] = /\/models\/([^:]+):(\w+)/.exec(req.url ?? '') ?? [];
      const sse = (req.url ?? '').includes('alt=sse');
      if (model === 'limited') {
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
        res.end(geminiFamily.encodeError(new GatewayError('rate_limit_exceeded', 'Slow down.')));
        return;
      }
      if (method === 'generateContent') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(geminiCodec.encodeResponse(model === 'tool' ? toolResponse : textResponse, 'public-model'));
        return;
      }
      res.writeHead(200, { 'content-type': sse ? 'text/event-stream' : 'application/json' });
      const parts: StreamPart[] =
        model === 'broken'
          ? [...streamParts.slice(0, 6), { type: 'error', status: 503, code: 'upstream_unavailable', message: 'The upstream provider failed.' }]
          : streamParts;
      res.end(streamBody(parts, sse));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('@google/genai reads the codec output', () => {
  const ai = (): GoogleGenAI => new GoogleGenAI({ apiKey: 'gateway-key', httpOptions: { baseUrl } });

  it('reads a response: text, thoughts, function calls with signatures, usage', async () => {
    const res = await ai().models.generateContent({ model: 'text', contents: 'hi' });
    expect(res.text).toBe('Hello from the gateway');
    expect(res.candidates?.[0]?.content?.parts?.[0]).toEqual({ text: 'Considering.', thought: true, thoughtSignature: 'c2lnLXI=' });
    expect(res.usageMetadata).toEqual({ promptTokenCount: 20, candidatesTokenCount: 12, totalTokenCount: 50, cachedContentTokenCount: 5, thoughtsTokenCount: 18 });
    expect(res.responseId).toBe('resp-text');
    const call = await ai().models.generateContent({ model: 'tool', contents: 'weather?' });
    expect(call.functionCalls).toEqual([{ id: 'call_1', name: 'get_weather', args: { city: 'Paris' } }]);
    expect(call.candidates?.[0]?.content?.parts?.[0]?.thoughtSignature).toBe('c2lnLWM=');
  });

  it('reads the SSE stream: text in order, usage running, finish reason last', async () => {
    const chunks = [];
    for await (const chunk of await ai().models.generateContentStream({ model: 'text', contents: 'hi' })) chunks.push(chunk);
    expect(chunks.map((chunk) => chunk.text ?? '').join('')).toBe('Hello from the gateway');
    expect(chunks.at(-1)?.candidates?.[0]?.finishReason).toBe('STOP');
    expect(chunks.at(-1)?.usageMetadata?.totalTokenCount).toBe(50);
  });

  it('throws ApiError with the HTTP status for an error body, and for an error inside a stream', async () => {
    const error = await ai().models.generateContent({ model: 'limited', contents: 'hi' }).catch((reason: unknown) => reason);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(429);
    expect(JSON.parse((error as ApiError).message)).toEqual({ error: { code: 'rate_limit_exceeded', message: 'Slow down.', status: 'RESOURCE_EXHAUSTED', type: 'rate_limit_error' } });
    const seen: string[] = [];
    const streamError = await (async () => {
      for await (const chunk of await ai().models.generateContentStream({ model: 'broken', contents: 'hi' })) seen.push(chunk.text ?? '');
    })().catch((reason: unknown) => reason);
    expect(streamError).toBeInstanceOf(ApiError);
    expect((streamError as ApiError).status).toBe(503);
    expect(seen.join('')).toBe('Hello ');
  });

  it('yields valid JSON in the array framing', async () => {
    const res = await fetch(`${baseUrl}/v1beta/models/text:streamGenerateContent`, { method: 'POST', body: '{}' });
    const chunks = JSON.parse(await res.text()) as Array<{ candidates: Array<{ finishReason?: string }> }>;
    expect(chunks.at(-1)?.candidates[0]?.finishReason).toBe('STOP');
  });
});

describe('the Vercel AI SDK Google provider reads the codec output', () => {
  const google = (): ReturnType<typeof createGoogleGenerativeAI> => createGoogleGenerativeAI({ apiKey: 'gateway-key', baseURL: `${baseUrl}/v1beta` });

  it('generates text with reasoning and usage split like the canonical form', async () => {
    const result = await generateText({ model: google()('text'), prompt: 'hi' });
    expect(result.text).toBe('Hello from the gateway');
    expect(result.reasoningText).toBe('Considering.');
    expect(result.finishReason).toBe('stop');
    expect(result.usage).toMatchObject({
      inputTokens: 20,
      inputTokenDetails: { noCacheTokens: 15, cacheReadTokens: 5 },
      outputTokens: 30,
      outputTokenDetails: { textTokens: 12, reasoningTokens: 18 },
    });
  });

  it('reads a function call and streams text', async () => {
    const result = await generateText({
      model: google()('tool'),
      prompt: 'weather?',
      tools: { get_weather: tool({ inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } } }) }) },
    });
    expect(result.toolCalls.map((call) => ({ name: call.toolName, input: call.input }))).toEqual([{ name: 'get_weather', input: { city: 'Paris' } }]);
    const stream = streamText({ model: google()('text'), prompt: 'hi' });
    expect(await stream.text).toBe('Hello from the gateway');
    expect((await stream.usage).outputTokens).toBe(30);
  });

  it('reports an error body as APICallError with the status (message falls back: it wants a numeric code)', async () => {
    const error = await generateText({ model: google()('limited'), prompt: 'hi', maxRetries: 0 }).catch((reason: unknown) => reason);
    expect(APICallError.isInstance(error)).toBe(true);
    expect((error as APICallError).statusCode).toBe(429);
    expect((error as APICallError).responseBody).toContain('rate_limit_exceeded');
  });
});
