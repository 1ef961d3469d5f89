import { billedUsage } from '../../../support/billed-usage.js';
import { countTextTokensLocally } from '../../../../src/tokenize/count-tokens-locally.js';
import { describe, expect, it } from 'vitest';
import type { ChatResponse } from '../../../../src/ir/chat-response.js';
import type { StreamPart } from '../../../../src/ir/stream-part.js';
import type { Usage } from '../../../../src/ir/usage.js';
import {
  encodeGeminiBatchEmbedContentsResponse,
  encodeGeminiCountTokensResponse,
  encodeGeminiEmbedContentResponse,
  encodeGeminiModelList,
  geminiCodec,
  geminiCodecFor,
  GeminiJsonArrayReframer,
  wantsSse,
} from '../../../../src/codecs/gemini/index.js';
import { GatewayError } from '../../../../src/errors/gateway-error.js';
import { geminiFamily } from '../../../../src/codecs/gemini/family.js';

const usage: Usage = { input: { total: 20, noCache: 15, cacheRead: 5, cacheWrite: 0 }, output: { total: 30, text: 12, reasoning: 18 } };

const response: ChatResponse = {
  id: 'resp-1',
  model: 'ignored',
  created: 1,
  content: [
    { type: 'reasoning', text: 'Thinking.', signature: 'sig-r' },
    { type: 'reasoning', text: '', redactedData: 'opaque' },
    { type: 'text', text: 'Hello' },
    { type: 'text', text: '' },
    { type: 'tool-call', id: 'call_1', name: 'get_weather', argumentsJson: '{"city":"Paris"}', signature: 'sig-c' },
    { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'AAAA' } },
  ],
  finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
  usage,
  warnings: [],
};

describe('encodeResponse', () => {
  it('writes a GenerateContentResponse with parts, signatures, finish reason and usage', () => {
    expect(JSON.parse(geminiCodec.encodeResponse(response, 'public-model'))).toEqual({
      candidates: [
        {
          content: {
            parts: [
              { text: 'Thinking.', thought: true, thoughtSignature: 'sig-r' },
              { text: 'Hello' },
              { functionCall: { id: 'call_1', name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'sig-c' },
              { inlineData: { mimeType: 'image/png', data: 'AAAA' } },
            ],
            role: 'model',
          },
          finishReason: 'STOP',
          index: 0,
        },
      ],
      usageMetadata: { promptTokenCount: 20, candidatesTokenCount: 12, totalTokenCount: 50, cachedContentTokenCount: 5, thoughtsTokenCount: 18 },
      modelVersion: 'public-model',
      responseId: 'resp-1',
    });
  });

  it('keeps a raw Gemini finish reason and maps the others', () => {
    const finish = (reason: ChatResponse['finishReason']): unknown =>
      (JSON.parse(geminiCodec.encodeResponse({ ...response, content: [], finishReason: reason }, 'm')) as { candidates: Array<{ finishReason: string; content: unknown }> }).candidates[0];
    expect(finish({ unified: 'content-filter', raw: 'RECITATION' })).toEqual({ content: { role: 'model' }, finishReason: 'RECITATION', index: 0 });
    expect(finish({ unified: 'length', raw: 'max_tokens' })).toMatchObject({ finishReason: 'MAX_TOKENS' });
    expect(finish({ unified: 'content-filter', raw: 'content_filter' })).toMatchObject({ finishReason: 'SAFETY' });
    expect(finish({ unified: 'error', raw: null })).toMatchObject({ finishReason: 'OTHER' });
  });
});

describe('stream encoder', () => {
  const parts: StreamPart[] = [
    { type: 'response-start', id: 'resp-1', model: 'x', created: 1 },
    { type: 'reasoning-start', id: 'r' },
    { type: 'reasoning-delta', id: 'r', delta: 'Hmm.' },
    { type: 'reasoning-end', id: 'r' },
    { type: 'usage', usage },
    { type: 'text-start', id: 't' },
    { type: 'text-delta', id: 't', delta: 'Hi' },
    { type: 'text-delta', id: 't', delta: '' },
    { type: 'text-end', id: 't', signature: 'sig-t' },
    { type: 'tool-input-start', id: 'c', toolCallId: 'call_9', toolName: 'f', index: 0 },
    { type: 'tool-input-delta', id: 'c', delta: '{"a":' },
    { type: 'tool-input-delta', id: 'c', delta: '1}' },
    { type: 'tool-input-end', id: 'c' },
    { type: 'finish', reason: { unified: 'tool-calls', raw: null }, usage: null },
  ];
  const chunkOf = (parts: unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    candidates: [{ content: { parts, role: 'model' }, index: 0, ...extra }],
    modelVersion: 'public-model',
    responseId: 'resp-1',
  });
  const metadata = { promptTokenCount: 20, candidatesTokenCount: 12, totalTokenCount: 50, cachedContentTokenCount: 5, thoughtsTokenCount: 18 };
  const expected = [
    chunkOf([{ text: 'Hmm.', thought: true }]),
    { ...chunkOf([{ text: 'Hi' }]), usageMetadata: metadata },
    { ...chunkOf([{ text: '', thoughtSignature: 'sig-t' }]), usageMetadata: metadata },
    { ...chunkOf([{ functionCall: { id: 'call_9', name: 'f', args: { a: 1 } } }]), usageMetadata: metadata },
    { candidates: [{ finishReason: 'STOP', index: 0 }], modelVersion: 'public-model', responseId: 'resp-1', usageMetadata: metadata },
  ];

  it('writes SSE events with CRLF framing, one chunk per delta and function calls whole', () => {
    const encoder = geminiCodecFor({ sse: true }).createStreamEncoder({ model: 'public-model' });
    const text = parts.map((part) => encoder.encode(part)).join('') + encoder.end();
    const events = text.split('\r\n\r\n');
    expect(events.pop()).toBe('');
    expect(events.map((event) => JSON.parse(event.replace(/^data: /, '')) as unknown)).toEqual(expected);
  });

  it('writes the streamed JSON array with Google framing', () => {
    const encoder = geminiCodecFor({ sse: false }).createStreamEncoder({ model: 'public-model' });
    const text = parts.map((part) => encoder.encode(part)).join('') + encoder.end();
    expect(text.startsWith('[{')).toBe(true);
    expect(text.split('\n,\r\n')).toHaveLength(expected.length);
    expect(text.endsWith('}\n]')).toBe(true);
    expect(JSON.parse(text)).toEqual(expected);
    const empty = geminiCodecFor({ sse: false }).createStreamEncoder({ model: 'm' });
    expect(empty.end()).toBe('[]');
  });

  it('ends with an error object carrying a numeric code, closing the array', () => {
    const error: StreamPart = { type: 'error', status: 503, code: 'upstream_unavailable', message: 'Upstream failed.' };
    const errorObject = {
      error: { code: 503, message: 'Upstream failed.', status: 'UNAVAILABLE', details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'upstream_unavailable', domain: 'unigate' }] },
    };
    const array = geminiCodecFor({ sse: false }).createStreamEncoder({ model: 'm' });
    const text = [parts[0], parts[5], parts[6], error].map((part) => array.encode(part as StreamPart)).join('') + array.end();
    expect((JSON.parse(text) as unknown[]).at(-1)).toEqual(errorObject);
    const sse = geminiCodecFor({ sse: true }).createStreamEncoder({ model: 'm' });
    expect(sse.encode(error)).toBe(`data: ${JSON.stringify(errorObject)}\r\n\r\n`);
    expect(sse.encode(parts[6] as StreamPart)).toBe('');
  });
});

describe('errors', () => {
  it('renders Google’s envelope with the gateway’s string code and type', () => {
    const error = new GatewayError('rate_limit_exceeded', 'Slow down.');
    expect(JSON.parse(geminiFamily.encodeError(error))).toEqual({ error: { code: 'rate_limit_exceeded', message: 'Slow down.', status: 'RESOURCE_EXHAUSTED', type: 'rate_limit_error' } });
    const bad = new GatewayError('bad_request', 'No.', { param: 'contents' });
    expect(JSON.parse(geminiFamily.encodeError(bad))).toMatchObject({ error: { status: 'INVALID_ARGUMENT', param: 'contents' } });
    expect(JSON.parse(geminiFamily.encodeError(new GatewayError('insufficient_balance', 'Top up.')))).toMatchObject({ error: { status: 'FAILED_PRECONDITION' } });
    expect(geminiCodecFor({ sse: false }).encodeStreamError(error)).toMatch(/^\n,\r\n\{"error":\{"code":429,.*\}\n\]$/);
  });
});

describe('pass-through helpers', () => {
  it('reads usage of a body or a whole JSON array, and watches streams cheaply', async () => {
    const chunk = (candidates: number): string => JSON.stringify({ candidates: [{ content: { parts: [{ text: 'x' }] } }], usageMetadata: { promptTokenCount: 10, candidatesTokenCount: candidates, totalTokenCount: 10 + candidates } });
    expect(geminiCodec.passThrough.usageFromResponseBody(Buffer.from(chunk(4)))?.output.total).toBe(4);
    expect(geminiCodec.passThrough.usageFromResponseBody(Buffer.from(`[${chunk(1)},${chunk(6)}]`))?.output.total).toBe(6);
    expect(geminiCodec.passThrough.usageFromResponseBody(Buffer.from('nope'))).toBeNull();
    const observer = geminiCodec.passThrough.createObserver();
    // Nothing arrived yet: the upstream has not accepted the request, which is free.
    expect(await billedUsage(observer, 100, false)).toBeNull();
    expect(observer.observe(Buffer.from(`data: ${chunk(2)}\r\n\r\n`))).toBe(true);
    expect(observer.observe(Buffer.from(`data: ${chunk(9)}\r\n\r\n`))).toBe(true);
    // Cut before the closing chunk: the running total (9) is more than the delivered text ("xx") counts.
    expect(observer.usageIsFinal()).toBe(false);
    expect(await billedUsage(observer, 100)).toEqual({ input: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, output: { total: 9, text: 9, reasoning: 0 } });
    const counting = geminiCodec.passThrough.createObserver();
    counting.observe(Buffer.from(`data: {"candidates":[{"content":{"parts":[{"text":"${'word '.repeat(100)}"}]}}]}\r\n\r\n`));
    expect(await billedUsage(counting, 7)).toEqual({ input: { total: 7, noCache: 7, cacheRead: 0, cacheWrite: 0 }, output: { total: await countTextTokensLocally('word '.repeat(100)), text: expect.any(Number) as number, reasoning: 0 } });
    const closing = geminiCodec.passThrough.createObserver();
    closing.observe(Buffer.from(`data: ${JSON.stringify({ candidates: [{ content: { parts: [{ text: 'x'.repeat(400) }] }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 3, totalTokenCount: 13 } })}\r\n\r\n`));
    expect(closing.usageIsFinal()).toBe(true);
    expect((await billedUsage(closing, 7))?.output.total).toBe(3);
  });

  it('reframes SSE events into the JSON array and tells the framing from the query', () => {
    const reframer = new GeminiJsonArrayReframer();
    const out = [reframer.frame(Buffer.from('data: {"a":1}\r\n\r\n')), reframer.frame(Buffer.from(': keep-alive\n\n')), reframer.frame(Buffer.from('data: {"b":2}\n\n')), reframer.end()].join('');
    expect(out).toBe('[{"a":1}\n,\r\n{"b":2}\n]');
    expect(new GeminiJsonArrayReframer().end()).toBe('[]');
    const failing = new GeminiJsonArrayReframer();
    const failed = failing.frame(Buffer.from('data: {"a":1}\r\n\r\n')) + failing.fail({ status: 504, code: 'upstream_timeout', message: 'Too slow.' }) + failing.end();
    expect((JSON.parse(failed) as Array<{ error?: { code: number } }>).map((element) => element.error?.code)).toEqual([undefined, 504]);
    expect(JSON.parse(new GeminiJsonArrayReframer().fail({ status: 502, code: 'upstream_error', message: 'x' }))).toHaveLength(1);
    expect(wantsSse('alt=sse')).toBe(true);
    expect(wantsSse('?alt=SSE&key=x')).toBe(true);
    expect(wantsSse(new URLSearchParams('alt=json'))).toBe(false);
    expect(wantsSse(undefined)).toBe(false);
  });
});

describe('embeddings, token counts, models', () => {
  it('writes the embedding, count and model list answers', () => {
    const vectors = { model: 'e', vectors: [[0.5, 0.25], [1]], inputTokens: 3 };
    expect(JSON.parse(encodeGeminiEmbedContentResponse(vectors))).toEqual({ embedding: { values: [0.5, 0.25] } });
    expect(JSON.parse(encodeGeminiBatchEmbedContentsResponse(vectors))).toEqual({ embeddings: [{ values: [0.5, 0.25] }, { values: [1] }] });
    expect(JSON.parse(encodeGeminiCountTokensResponse({ inputTokens: 12, source: 'local' }))).toEqual({ totalTokens: 12 });
    const models = ['a', 'b', 'c'].map((id) => ({ id, kind: 'chat' as const }));
    const first = JSON.parse(encodeGeminiModelList(models, { pageSize: 2 })) as { models: Array<{ name: string }>; nextPageToken: string };
    expect(first.models.map((model) => model.name)).toEqual(['models/a', 'models/b']);
    const second = JSON.parse(encodeGeminiModelList(models, { pageSize: '2', pageToken: first.nextPageToken })) as { models: unknown[]; nextPageToken?: string };
    expect(second.models).toHaveLength(1);
    expect(second.nextPageToken).toBeUndefined();
    expect(() => encodeGeminiModelList(models, { pageToken: '!!' })).toThrow(GatewayError);
  });
});
