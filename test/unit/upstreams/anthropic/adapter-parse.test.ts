import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { GatewayError } from '../../../../src/errors/gateway-error.js';
import type { StreamPart } from '../../../../src/ir/stream-part.js';
import { AnthropicAdapter } from '../../../../src/upstreams/anthropic/anthropic-adapter.js';
import type { UpstreamTransport } from '../../../../src/upstreams/upstream-adapter.js';
import { chatRequest, chunked, collect, fixtureText, joinDeltas } from '../../anthropic/helpers.js';

const transport: UpstreamTransport = { send: () => Promise.reject(new Error('not used')) };
const adapter = new AnthropicAdapter(transport);
const parseStream = (text: string, cuts: number[] = []) => collect(adapter.parseChatStream(chunked(text, cuts), chatRequest()));

describe('parseChatResponse', () => {
  it('reads text and usage with cache counters', () => {
    const response = adapter.parseChatResponse(Buffer.from(fixtureText('response-text.json')), chatRequest());
    expect(response).toMatchObject({
      id: 'msg_01QC4g3HwBThD4BaNtBckFDJ',
      model: 'claude-sonnet-4-5-20250929',
      content: [{ type: 'text', text: 'Hello! How can I help you today?' }],
      finishReason: { unified: 'stop', raw: 'end_turn' },
      usage: { input: { total: 3160, noCache: 12, cacheRead: 2048, cacheWrite: 1100 }, output: { total: 11, text: 11, reasoning: 0 } },
      warnings: [],
    });
    expect(Number.isInteger(response.created)).toBe(true);
  });

  it('reads thinking, redacted thinking and tool use; reports server-tool blocks', () => {
    const response = adapter.parseChatResponse(Buffer.from(fixtureText('response-thinking-tool-use.json')), chatRequest());
    expect(response.content).toEqual([
      { type: 'reasoning', text: 'I should look up the weather first.', signature: 'Eq4CCpIBCBIYAipAM+SGYGx7V1aPBT2LXi5M54elabwLjKMzxMZ7dQ==' },
      { type: 'reasoning', text: '', redactedData: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIw' },
      { type: 'text', text: "I'll check the weather in Paris." },
      { type: 'tool-call', id: 'toolu_017R7ACrx7NF7sLDDtvdQ1u9', name: 'get_weather', argumentsJson: '{"location":"Paris"}' },
    ]);
    expect(response.finishReason).toEqual({ unified: 'tool-calls', raw: 'tool_use' });
    expect(response.usage.output).toEqual({ total: 159, text: 101, reasoning: 58 });
    expect(response.warnings).toEqual(["Anthropic 'server_tool_use' blocks are not carried on the translated path."]);
  });

  it.each([
    ['max_tokens', 'length'],
    ['stop_sequence', 'stop'],
    ['refusal', 'content-filter'],
    ['pause_turn', 'other'],
    ['model_context_window_exceeded', 'length'],
  ] as const)('maps stop_reason %s to %s', (raw, unified) => {
    const body = JSON.stringify({ id: 'msg_1', model: 'c', content: [], stop_reason: raw, usage: { input_tokens: 1, output_tokens: 0 } });
    expect(adapter.parseChatResponse(Buffer.from(body), chatRequest()).finishReason).toEqual({ unified, raw });
  });

  it('refuses a malformed body with a retryable upstream error', () => {
    for (const body of ['<html>', '{"type":"message"}']) {
      const failure = (() => {
        try {
          adapter.parseChatResponse(Buffer.from(body), chatRequest());
        } catch (error) {
          return error;
        }
        return null;
      })();
      expect(failure).toBeInstanceOf(GatewayError);
      expect((failure as GatewayError).retryable).toBe(true);
    }
  });
});

describe('parseChatStream', () => {
  it('reads a text stream: start, usage, one block, finish with cumulative usage', async () => {
    const parts = await parseStream(fixtureText('stream-text.chunks.txt'));
    expect(parts.map((part) => part.type)).toEqual(['response-start', 'usage', 'text-start', 'text-delta', 'text-delta', 'text-end', 'usage', 'finish']);
    expect(parts[0]).toMatchObject({ type: 'response-start', id: 'msg_01QC4g3HwBThD4BaNtBckFDJ', model: 'claude-sonnet-4-5-20250929' });
    expect(parts.at(-1)).toEqual({
      type: 'finish',
      reason: { unified: 'stop', raw: 'end_turn' },
      usage: { input: { total: 4108, noCache: 12, cacheRead: 4096, cacheWrite: 0 }, output: { total: 15, text: 15, reasoning: 0 } },
    });
  });

  it('reads thinking with its signature, text, and tool inputs (empty input becomes {})', async () => {
    const parts = joinDeltas(await parseStream(fixtureText('stream-thinking-tool.chunks.txt')));
    expect(parts.filter((part) => part.type !== 'usage' && part.type !== 'response-start')).toEqual([
      { type: 'reasoning-start', id: '0' },
      { type: 'reasoning-delta', id: '0', delta: 'The user wants the weather.' },
      { type: 'reasoning-end', id: '0', signature: 'EsECCokBCBAYAipA9i3HF1aHpQITkdN8OvLd33gdPZEy==' },
      { type: 'text-start', id: '1' },
      { type: 'text-delta', id: '1', delta: 'Checking.' },
      { type: 'text-end', id: '1' },
      { type: 'tool-input-start', id: '2', toolCallId: 'toolu_01QE1WLsSVp5hy5Q3GmGTmjP', toolName: 'get_weather', index: 0 },
      { type: 'tool-input-delta', id: '2', delta: '{"location": "Paris"}' },
      { type: 'tool-input-end', id: '2' },
      { type: 'tool-input-start', id: '3', toolCallId: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', toolName: 'get_time', index: 1 },
      { type: 'tool-input-delta', id: '3', delta: '{}' },
      { type: 'tool-input-end', id: '3' },
      {
        type: 'finish',
        reason: { unified: 'tool-calls', raw: 'tool_use' },
        usage: { input: { total: 565, noCache: 565, cacheRead: 0, cacheWrite: 0 }, output: { total: 89, text: 68, reasoning: 21 } },
      },
    ]);
  });

  it('reads redacted thinking', async () => {
    const parts = await parseStream(fixtureText('stream-redacted-thinking.chunks.txt'));
    expect(parts.slice(2, 4)).toEqual([{ type: 'reasoning-start', id: '0' }, { type: 'reasoning-end', id: '0', redactedData: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIw' }]);
    expect(parts.at(-1)).toMatchObject({ type: 'finish', reason: { unified: 'length', raw: 'max_tokens' } });
  });

  it('turns an error event into an error part instead of the finish', async () => {
    const parts = await parseStream(fixtureText('stream-overloaded.chunks.txt'));
    expect(parts.at(-1)).toEqual({ type: 'error', status: 503, code: 'upstream_unavailable', message: 'Upstream overloaded: Overloaded' });
    expect(parts.some((part) => part.type === 'finish')).toBe(false);
  });

  it('reports a stream that ends before message_stop as an error', async () => {
    const text = fixtureText('stream-text.chunks.txt');
    const parts = await parseStream(text.slice(0, text.indexOf('event: message_delta')));
    expect(parts.at(-1)).toMatchObject({ type: 'error', status: 502, code: 'upstream_error' });
  });

  it('reads CRLF framing and data-only events', async () => {
    const text = fixtureText('stream-text.chunks.txt').replace(/\n/g, '\r\n');
    expect(joinDeltas(await parseStream(text))).toEqual(joinDeltas(await parseStream(fixtureText('stream-text.chunks.txt'))).map((part) => (part.type === 'response-start' ? { ...part, created: expect.any(Number) as number } : part)));
    const dataOnly = fixtureText('stream-text.chunks.txt').replace(/^event: .*\n/gm, '');
    expect((await parseStream(dataOnly)).map((part) => part.type)).toContain('finish');
  });

  it('gives the same parts wherever the bytes are split (inside lines and UTF-8 characters)', async () => {
    const text = fixtureText('stream-text.chunks.txt');
    const settled = (parts: StreamPart[]) => joinDeltas(parts).map((part) => (part.type === 'response-start' ? { ...part, created: 0 } : part));
    const reference = settled(await parseStream(text));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 1, max: Buffer.byteLength(text) - 1 }), { maxLength: 40 }), async (cuts) => {
        expect(settled(await parseStream(text, cuts))).toEqual(reference);
      }),
      { numRuns: 100 },
    );
  });
});
