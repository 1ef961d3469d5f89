import { describe, expect, it } from 'vitest';
import type { StreamPart } from '../../../../src/ir/stream-part.js';
import { GeminiAdapter } from '../../../../src/upstreams/gemini/gemini-adapter.js';
import { chatRequest, chunked, collect, fixture, unusedTransport } from '../../gemini/gemini-test-support.js';

const adapter = new GeminiAdapter(unusedTransport);
const request = chatRequest({ model: 'public-model', stream: true });

const withoutTimes = (parts: StreamPart[]): StreamPart[] => parts.map((part) => (part.type === 'response-start' ? { ...part, created: 0 } : part));

describe('GeminiAdapter.parseChatResponse', () => {
  it('reads thoughts, signed text and usage (thinking counted apart, cache inside the prompt)', () => {
    const response = adapter.parseChatResponse(fixture('generate-content-response.json'), request);
    expect(response.id).toBe('DtDHas7TLN2tz7IP_bPjyAo');
    expect(response.model).toBe('public-model');
    expect(response.content).toEqual([
      { type: 'reasoning', text: '**Considering the question**\n\nThe user wants a short greeting.\n' },
      { type: 'text', text: 'Hello! How can I help you today?', signature: 'EtEOCs4OARFNMg9sZBVWU/26gaXTzmVEXfufwwiAoKSn' },
    ]);
    expect(response.finishReason).toEqual({ unified: 'stop', raw: 'STOP' });
    expect(response.usage).toEqual({
      input: { total: 29, noCache: 21, cacheRead: 8, cacheWrite: 0 },
      output: { total: 66, text: 9, reasoning: 57 },
    });
    // input.total + output.total is Google's totalTokenCount.
    expect(response.usage.input.total + response.usage.output.total).toBe(95);
  });

  it('reads function calls (generating ids) and reports tool-calls for STOP', () => {
    const response = adapter.parseChatResponse(fixture('function-call-response.json'), request);
    expect(response.content).toHaveLength(2);
    expect(response.content[0]).toMatchObject({ type: 'tool-call', name: 'getWeather', argumentsJson: '{"location":"Tokyo"}', signature: 'CikBcsjafFK168IbtVtoxVV0Tsn8O+eU45rzJahzwuKGmMbdMdfpmNpgBwpl' });
    expect(response.content[1]).not.toHaveProperty('signature');
    const ids = response.content.map((part) => (part.type === 'tool-call' ? part.id : ''));
    expect(new Set(ids).size).toBe(2);
    expect(response.finishReason).toEqual({ unified: 'tool-calls', raw: 'STOP' });
    expect(response.usage.output).toEqual({ total: 118, text: 14, reasoning: 104 });
  });

  it('gives a signature sent after the calls (an empty text part) to the first call', () => {
    const body = Buffer.from(JSON.stringify({ candidates: [{ content: { parts: [{ functionCall: { name: 'a', args: {} } }, { functionCall: { name: 'b', args: {} } }, { text: '', thoughtSignature: 'c3RlcA==' }], role: 'model' }, finishReason: 'STOP', index: 0 }] }));
    const response = adapter.parseChatResponse(body, request);
    expect(response.content.map((part) => part.type)).toEqual(['tool-call', 'tool-call']);
    expect(response.content[0]).toMatchObject({ name: 'a', signature: 'c3RlcA==' });
    expect(response.content[1]).not.toHaveProperty('signature');
  });

  it('reports a blocked prompt as content-filter with the block reason', () => {
    const response = adapter.parseChatResponse(fixture('prompt-blocked.json'), request);
    expect(response.content).toEqual([]);
    expect(response.finishReason).toEqual({ unified: 'content-filter', raw: 'PROHIBITED_CONTENT' });
    expect(response.usage.input.total).toBe(12);
  });

  it.each([
    ['MAX_TOKENS', 'length'],
    ['SAFETY', 'content-filter'],
    ['RECITATION', 'content-filter'],
    ['SPII', 'content-filter'],
    ['MALFORMED_FUNCTION_CALL', 'error'],
    ['LANGUAGE', 'other'],
    ['SOMETHING_NEW', 'other'],
  ])('maps finishReason %s to %s, keeping the raw value', (raw, unified) => {
    const body = Buffer.from(JSON.stringify({ candidates: [{ content: { parts: [{ text: 'x' }], role: 'model' }, finishReason: raw, index: 0 }] }));
    expect(adapter.parseChatResponse(body, request).finishReason).toEqual({ unified, raw });
  });

  it('rejects a body that is not JSON as an upstream error', () => {
    expect(() => adapter.parseChatResponse(Buffer.from('<html>'), request)).toThrow(/could not read/);
  });
});

describe('GeminiAdapter.parseChatStream', () => {
  const expectedText: StreamPart[] = [
    { type: 'response-start', id: 'EdDHavuSDILGjMcPvefFoQg', model: 'public-model', created: 0 },
    { type: 'reasoning-start', id: 'reasoning-0' },
    { type: 'reasoning-delta', id: 'reasoning-0', delta: "**Initiating the Descent**\n\nI'm diving into the problem.\n" },
    { type: 'usage', usage: { input: { total: 29, noCache: 29, cacheRead: 0, cacheWrite: 0 }, output: { total: 59, text: 0, reasoning: 59 } } },
    { type: 'reasoning-end', id: 'reasoning-0' },
    { type: 'text-start', id: 'text-1' },
    { type: 'text-delta', id: 'text-1', delta: 'Hello' },
    { type: 'usage', usage: { input: { total: 29, noCache: 29, cacheRead: 0, cacheWrite: 0 }, output: { total: 60, text: 1, reasoning: 59 } } },
    { type: 'text-delta', id: 'text-1', delta: ', wörld — ünïcode ✓' },
    { type: 'usage', usage: { input: { total: 29, noCache: 29, cacheRead: 0, cacheWrite: 0 }, output: { total: 66, text: 7, reasoning: 59 } } },
    { type: 'text-end', id: 'text-1', signature: 'EqMDCqADARFNMg9Z' },
    {
      type: 'finish',
      reason: { unified: 'stop', raw: 'STOP' },
      usage: { input: { total: 29, noCache: 29, cacheRead: 0, cacheWrite: 0 }, output: { total: 66, text: 7, reasoning: 59 } },
    },
  ];

  it.each(['stream-text.sse.txt', 'stream-text.array.txt'])('parses %s into canonical parts, whatever the network chunking', async (name) => {
    const body = fixture(name);
    expect(withoutTimes(await collect(adapter.parseChatStream(chunked(body), request)))).toEqual(expectedText);
    // Every byte boundary, including inside multi-byte characters.
    for (let cut = 1; cut < body.length; cut += 7) {
      expect(withoutTimes(await collect(adapter.parseChatStream(chunked(body, [cut, cut + 1, cut + 3]), request)))).toEqual(expectedText);
    }
  });

  it('emits a function call whole once the step is complete: start with its signature, one delta, end', async () => {
    const parts = await collect(adapter.parseChatStream(chunked(fixture('stream-function-call.sse.txt')), request));
    expect(parts.map((part) => part.type)).toEqual(['response-start', 'usage', 'tool-input-start', 'tool-input-delta', 'tool-input-end', 'finish']);
    expect(parts[2]).toMatchObject({
      type: 'tool-input-start',
      toolName: 'getWeather',
      index: 0,
      toolCallId: expect.stringMatching(/^call_/) as string,
      signature: 'CikBcsjafFK168IbtVtoxVV0Tsn8O+eU45rzJahzwuKGmMbdMdfpmNpgBwpl',
    });
    expect(parts[3]).toMatchObject({ delta: '{"location":"Tokyo"}' });
    expect(parts[4]).toEqual({ type: 'tool-input-end', id: (parts[2] as { id: string }).id });
    expect(parts[5]).toMatchObject({ type: 'finish', reason: { unified: 'tool-calls', raw: 'STOP' } });
  });

  it('gives a signature sent after the calls (an empty text part) to the first call, and opens no text block', async () => {
    const chunk = (parts: unknown[], finish?: string): string => `data: ${JSON.stringify({ candidates: [{ content: { parts, role: 'model' }, index: 0, ...(finish === undefined ? {} : { finishReason: finish }) }], responseId: 'r1' })}\r\n\r\n`;
    const body = Buffer.from(
      chunk([{ functionCall: { name: 'a', args: {} } }, { functionCall: { name: 'b', args: {} } }]) +
      chunk([{ text: '', thoughtSignature: 'c3RlcA==' }], 'STOP'),
    );
    const parts = await collect(adapter.parseChatStream(chunked(body), request));
    expect(parts.map((part) => part.type)).toEqual(['response-start', 'tool-input-start', 'tool-input-delta', 'tool-input-end', 'tool-input-start', 'tool-input-delta', 'tool-input-end', 'finish']);
    expect(parts[1]).toMatchObject({ toolName: 'a', signature: 'c3RlcA==' });
    expect(parts[4]).not.toHaveProperty('signature');
  });

  it('turns an error object in the stream into an error part without the upstream message', async () => {
    const parts = await collect(adapter.parseChatStream(chunked(fixture('stream-error.sse.txt')), request));
    expect(parts.at(-1)).toEqual({ type: 'error', status: 503, code: 'upstream_unavailable', message: 'The upstream provider failed during the stream (503 UNAVAILABLE).' });
    expect(parts.some((part) => part.type === 'finish')).toBe(false);
  });

  it('reports a stream that ends before its last chunk, and an empty one, as an error', async () => {
    const text = fixture('stream-text.sse.txt').toString('utf8');
    const truncated = Buffer.from(text.slice(0, text.lastIndexOf('data: ')));
    expect((await collect(adapter.parseChatStream(chunked(truncated), request))).at(-1)).toMatchObject({ type: 'error', status: 502, code: 'upstream_error' });
    expect(await collect(adapter.parseChatStream(chunked(Buffer.alloc(0)), request))).toEqual([
      { type: 'error', status: 502, code: 'upstream_error', message: 'The upstream provider ended the stream before it finished.' },
    ]);
    const garbage = await collect(adapter.parseChatStream(chunked(Buffer.from('data: {not json}\r\n\r\n')), request));
    expect(garbage).toEqual([{ type: 'error', status: 502, code: 'upstream_error', message: 'The upstream provider sent a stream chunk the gateway could not read.' }]);
  });

  it('reports a prompt blocked in a stream as content-filter', async () => {
    const body = Buffer.from(`data: ${JSON.stringify({ promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 5, totalTokenCount: 5 } })}\r\n\r\n`);
    const parts = await collect(adapter.parseChatStream(chunked(body), request));
    expect(parts.at(-1)).toMatchObject({ type: 'finish', reason: { unified: 'content-filter', raw: 'SAFETY' } });
  });
});
