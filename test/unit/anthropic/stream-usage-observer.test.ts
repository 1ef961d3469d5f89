import { describe, expect, it } from 'vitest';
import { anthropicMessagesCodec } from '../../../src/codecs/anthropic-messages/index.js';
import { SseEventSplitter } from '../../../src/codecs/openai-chat/sse-event-splitter.js';
import { fixtureText } from './helpers.js';

function observe(sse: string, cuts: number[] = []): { forwarded: string; usage: ReturnType<ReturnType<typeof anthropicMessagesCodec.createPassThroughObserver>['usage']> } {
  const observer = anthropicMessagesCodec.createPassThroughObserver({ includeUsage: false });
  const splitter = new SseEventSplitter();
  const bytes = Buffer.from(sse);
  const forwarded: Buffer[] = [];
  let start = 0;
  for (const cut of [...cuts, bytes.length]) {
    for (const event of splitter.push(bytes.subarray(start, cut))) if (observer.observe(event)) forwarded.push(event);
    start = cut;
  }
  const rest = splitter.flush();
  if (rest !== null && observer.observe(rest)) forwarded.push(rest);
  return { forwarded: Buffer.concat(forwarded).toString(), usage: observer.usage(77) };
}

describe('the pass-through observer', () => {
  it('forwards every event untouched and reads usage from message_start and message_delta', () => {
    const sse = fixtureText('stream-text.chunks.txt');
    const { forwarded, usage } = observe(sse, [17, 300, 301, 640]);
    expect(forwarded).toBe(sse);
    expect(usage).toEqual({ input: { total: 4108, noCache: 12, cacheRead: 4096, cacheWrite: 0 }, output: { total: 15, text: 15, reasoning: 0 } });
  });

  it('takes the input counters message_delta repeats, and thinking tokens', () => {
    expect(observe(fixtureText('stream-thinking-tool.chunks.txt')).usage).toEqual({
      input: { total: 565, noCache: 565, cacheRead: 0, cacheWrite: 0 },
      output: { total: 89, text: 68, reasoning: 21 },
    });
  });

  it('counts delivered deltas when the stream is cut before message_delta', () => {
    const sse = fixtureText('stream-thinking-tool.chunks.txt');
    const cut = sse.slice(0, sse.indexOf('event: content_block_start\ndata: {"type":"content_block_start","index":3'));
    const usage = observe(cut).usage;
    expect(usage?.input.total).toBe(565);
    // message_start said 7 output tokens; 7 deltas were delivered before the cut
    expect(usage?.output.total).toBe(7);
  });

  it('estimates from the prompt and the deltas without any usage', () => {
    const sse = 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}}\n\n'.repeat(3);
    expect(observe(sse).usage).toEqual({ input: { total: 77, noCache: 77, cacheRead: 0, cacheWrite: 0 }, output: { total: 3, text: 3, reasoning: 0 } });
    expect(observe('event: ping\ndata: {"type":"ping"}\n\n').usage).toBeNull();
  });

  it('reads usage from a non-streaming body', () => {
    expect(anthropicMessagesCodec.usageFromResponseBody(Buffer.from(fixtureText('response-text.json')))).toEqual({
      input: { total: 3160, noCache: 12, cacheRead: 2048, cacheWrite: 1100 },
      output: { total: 11, text: 11, reasoning: 0 },
    });
    expect(anthropicMessagesCodec.usageFromResponseBody(Buffer.from('not json'))).toBeNull();
  });

  it('names the headers a same-protocol upstream must see', () => {
    expect(anthropicMessagesCodec.passThroughHeaders).toEqual(['anthropic-version', 'anthropic-beta']);
    expect(anthropicMessagesCodec.protocol).toBe('anthropic-messages');
  });
});
