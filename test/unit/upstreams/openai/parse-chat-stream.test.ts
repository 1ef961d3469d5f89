import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../../../src/errors/gateway-error.js';
import type { StreamPart } from '../../../../src/ir/stream-part.js';
import { OpenAIAdapter } from '../../../../src/upstreams/openai/openai-adapter.js';
import { bodyOf, chatRequest, collect, splitAt, sseFixture, unusedTransport } from '../../openai/openai-test-helpers.js';

const adapter = new OpenAIAdapter(unusedTransport);
const parse = (bytes: Buffer | Buffer[]): Promise<StreamPart[]> => collect(adapter.parseChatStream(bodyOf(Array.isArray(bytes) ? bytes : [bytes]), chatRequest()));

function textOf(parts: StreamPart[]): string {
  return parts.map((part) => (part.type === 'text-delta' ? part.delta : '')).join('');
}

describe('OpenAIAdapter.parseChatStream', () => {
  it('reads a text stream with its usage chunk, finishing after the usage', async () => {
    const parts = await parse(sseFixture('openai-text.chunks.txt'));
    expect(parts[0]).toEqual({ type: 'response-start', id: 'chatcmpl-BQ3tqCt1hR4YkqJ9yCS0y5Ea3U2fN', model: 'gpt-4o-mini-2024-07-18', created: 1_745_587_822 });
    expect(parts[1]).toEqual({ type: 'text-start', id: 'text-0' });
    expect(textOf(parts)).toBe('Hello! How can I help you today?');
    expect(parts.slice(-3)).toEqual([
      { type: 'text-end', id: 'text-0' },
      { type: 'usage', usage: { input: { total: 19, noCache: 19, cacheRead: 0, cacheWrite: 0 }, output: { total: 10, text: 10, reasoning: 0 } } },
      { type: 'finish', reason: { unified: 'stop', raw: 'stop' }, usage: { input: { total: 19, noCache: 19, cacheRead: 0, cacheWrite: 0 }, output: { total: 10, text: 10, reasoning: 0 } } },
    ]);
  });

  it('reads OpenAI tool-call deltas by index', async () => {
    const parts = await parse(sseFixture('openai-tool-calls.chunks.txt'));
    const tools = parts.filter((part) => part.type.startsWith('tool-input'));
    expect(tools).toEqual([
      { type: 'tool-input-start', id: 'tool-0', toolCallId: 'call_8Rcl9ecWPHrCxj0i5fYUQ4yF', toolName: 'get_weather', index: 0 },
      { type: 'tool-input-delta', id: 'tool-0', delta: '{"lo' },
      { type: 'tool-input-delta', id: 'tool-0', delta: 'cation":"Paris, France"' },
      { type: 'tool-input-delta', id: 'tool-0', delta: ',"unit":"celsius"}' },
      { type: 'tool-input-start', id: 'tool-1', toolCallId: 'call_Jq3Vbh7qRsOcsM0YDJjXnVGb', toolName: 'get_weather', index: 1 },
      { type: 'tool-input-delta', id: 'tool-1', delta: '{"location":"Tokyo, Japan"' },
      { type: 'tool-input-delta', id: 'tool-1', delta: ',"unit":"celsius"}' },
      { type: 'tool-input-end', id: 'tool-0' },
      { type: 'tool-input-end', id: 'tool-1' },
    ]);
    expect(parts.at(-1)).toMatchObject({ type: 'finish', reason: { unified: 'tool-calls', raw: 'tool_calls' } });
  });

  it('reads interleaved tool calls after text, usage on the finish chunk and a stream without [DONE]', async () => {
    const parts = await parse(sseFixture('compatible-interleaved-tool-calls.chunks.txt'));
    expect(parts.map((part) => part.type)).toEqual([
      'response-start', 'text-start', 'text-delta', 'text-end',
      'tool-input-start', 'tool-input-start', 'tool-input-delta', 'tool-input-delta', 'tool-input-delta', 'tool-input-delta',
      'tool-input-end', 'tool-input-end', 'usage', 'finish',
    ]);
    const argumentsOf = (id: string): string => parts.map((part) => (part.type === 'tool-input-delta' && part.id === id ? part.delta : '')).join('');
    expect(argumentsOf('tool-1')).toBe('{"city":"Paris"}');
    expect(argumentsOf('tool-2')).toBe('{"tz":"Asia/Tokyo"}');
    expect(parts.at(-1)).toMatchObject({ type: 'finish', usage: { input: { total: 120 }, output: { total: 40 } } });
  });

  it('skips Azure content-filter chunks and takes the id of the first real chunk', async () => {
    const parts = await parse(sseFixture('azure-text.chunks.txt', '\r\n'));
    expect(parts[0]).toEqual({ type: 'response-start', id: 'chatcmpl-AnhIt2rw8vL8czymkCwEOKKTg7HPc', model: 'gpt-4o-mini-2024-07-18', created: 1_736_407_895 });
    expect(textOf(parts)).toBe('Paris is the capital.');
    expect(parts.at(-1)).toMatchObject({ type: 'finish', reason: { unified: 'stop' }, usage: { input: { total: 15 } } });
  });

  it('reads reasoning_content as a reasoning block before the text', async () => {
    const parts = await parse(sseFixture('deepseek-reasoning.chunks.txt'));
    expect(parts.map((part) => part.type)).toEqual([
      'response-start', 'reasoning-start', 'reasoning-delta', 'reasoning-delta', 'reasoning-end', 'text-start', 'text-delta', 'text-delta', 'text-end', 'usage', 'finish',
    ]);
    expect(parts.at(-1)).toMatchObject({ usage: { output: { total: 120, reasoning: 98 } } });
  });

  it('turns an in-stream error into an error part with a caller-safe message', async () => {
    const parts = await parse(sseFixture('openai-error-mid-stream.chunks.txt'));
    expect(parts.at(-1)).toEqual({ type: 'error', status: 502, code: 'upstream_error', message: 'The upstream provider reported an error (server_error).' });
    expect(parts.some((part) => part.type === 'finish')).toBe(false);
  });

  it('reports a stream cut short as an error part, or throws when nothing came yet so the relay can retry', async () => {
    const full = sseFixture('openai-text.chunks.txt');
    const cut = full.subarray(0, full.indexOf('"content":"!"'));
    const parts = await parse(cut);
    expect(parts.at(-1)).toEqual({ type: 'error', status: 502, code: 'upstream_error', message: 'The upstream stream ended before the response was complete.' });
    await expect(parse(Buffer.from(''))).rejects.toBeInstanceOf(GatewayError);
    await expect(parse(Buffer.from('data: {"error":{"message":"overloaded","type":"server_error"}}\n\n'))).rejects.toThrow('The upstream provider reported an error (server_error).');
  });

  it('gives the same parts however the bytes are cut', async () => {
    for (const name of ['openai-text.chunks.txt', 'openai-tool-calls.chunks.txt', 'azure-text.chunks.txt', 'deepseek-reasoning.chunks.txt']) {
      const bytes = sseFixture(name);
      const whole = await parse(bytes);
      await fc.assert(fc.asyncProperty(fc.array(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 40 }), async (cuts) => {
        expect(await parse(splitAt(bytes, cuts))).toEqual(whole);
      }), { numRuns: 25 });
    }
  });
});
