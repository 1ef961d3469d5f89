import type { Usage } from '../../../../src/ir/usage.js';
import { countTextTokensLocally } from '../../../../src/tokenize/count-tokens-locally.js';
import { billedUsage } from '../../../support/billed-usage.js';
import { describe, expect, it } from 'vitest';
import { anthropicMessagesCodec } from '../../../../src/codecs/anthropic-messages/index.js';
import { SseEventSplitter } from '../../../../src/wire/sse-event-splitter.js';
import { fixtureText } from '../../anthropic/helpers.js';

async function observe(sse: string, cuts: number[] = []): Promise<{ forwarded: string; usage: Usage | null; delivered: string }> {
  const observer = anthropicMessagesCodec.passThrough.createObserver();
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
  const taken: string[] = [];
  const usage = await billedUsage(observer, 77, true, taken);
  return { forwarded: Buffer.concat(forwarded).toString(), usage, delivered: taken.join('') + [...observer.takeDeliveredText()].join('') };
}

describe('the pass-through observer', () => {
  it('forwards every event untouched and reads usage from message_start and message_delta', async () => {
    const sse = fixtureText('stream-text.chunks.txt');
    const { forwarded, usage } = await observe(sse, [17, 300, 301, 640]);
    expect(forwarded).toBe(sse);
    expect(usage).toEqual({ input: { total: 4108, noCache: 12, cacheRead: 4096, cacheWrite: 0 }, output: { total: 15, text: 15, reasoning: 0 } });
  });

  it('takes the input counters message_delta repeats, and thinking tokens', async () => {
    expect((await observe(fixtureText('stream-thinking-tool.chunks.txt'))).usage).toEqual({
      input: { total: 565, noCache: 565, cacheRead: 0, cacheWrite: 0 },
      output: { total: 89, text: 68, reasoning: 21 },
    });
  });

  it('counts the delivered text with the local tokenizer when the stream is cut before message_delta', async () => {
    const sse = fixtureText('stream-thinking-tool.chunks.txt');
    const cut = sse.slice(0, sse.indexOf('event: content_block_start\ndata: {"type":"content_block_start","index":3'));
    const { usage, delivered } = await observe(cut);
    expect(usage?.input.total).toBe(565);
    expect(delivered.length).toBeGreaterThan(20);
    expect(usage?.output.total).toBe(await countTextTokensLocally(delivered));
  });

  it('counts the prompt locally and the delivered text without any usage; accepted with nothing delivered, the input is billed', async () => {
    const sse = 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"heron "}}\n\n'.repeat(3);
    const counted = await countTextTokensLocally('heron heron heron ');
    expect((await observe(sse)).usage).toEqual({ input: { total: 77, noCache: 77, cacheRead: 0, cacheWrite: 0 }, output: { total: counted, text: counted, reasoning: 0 } });
    expect((await observe('event: ping\ndata: {"type":"ping"}\n\n')).usage).toEqual({ input: { total: 77, noCache: 77, cacheRead: 0, cacheWrite: 0 }, output: { total: 0, text: 0, reasoning: 0 } });
    // Refused before it accepted the request (no event but an error): free.
    const refused = anthropicMessagesCodec.passThrough.createObserver();
    refused.observe(Buffer.from('event: error\ndata: {"type":"error","error":{"type":"invalid_request_error","message":"no"}}\n\n'));
    expect(await billedUsage(refused, 77, false)).toBeNull();
  });

  it('holds message_start and ping as preamble and spots an in-band error at the start', () => {
    const observer = anthropicMessagesCodec.passThrough.createObserver();
    expect(observer.opening(Buffer.from('event: message_start\ndata: {"type":"message_start","message":{}}\n\n'))).toEqual({ kind: 'preamble' });
    expect(observer.opening(Buffer.from('event: ping\ndata: {"type":"ping"}\n\n'))).toEqual({ kind: 'preamble' });
    expect(observer.opening(Buffer.from('event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'))).toEqual({ kind: 'error', status: 503 });
    expect(observer.opening(Buffer.from('event: error\ndata: {"type":"error","error":{"type":"invalid_request_error","message":"x"}}\n\n'))).toEqual({ kind: 'error', status: 400 });
    expect(observer.opening(Buffer.from('event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'))).toEqual({ kind: 'content' });
  });

  it('reads usage from a non-streaming body', () => {
    expect(anthropicMessagesCodec.passThrough.usageFromResponseBody(Buffer.from(fixtureText('response-text.json')))).toEqual({
      input: { total: 3160, noCache: 12, cacheRead: 2048, cacheWrite: 1100 },
      output: { total: 11, text: 11, reasoning: 0 },
    });
    expect(anthropicMessagesCodec.passThrough.usageFromResponseBody(Buffer.from('not json'))).toBeNull();
  });

  it('names the headers a same-protocol upstream must see', () => {
    expect(anthropicMessagesCodec.passThrough.headers).toEqual(['anthropic-version', 'anthropic-beta']);
    expect(anthropicMessagesCodec.wire.name).toBe('anthropic-messages');
  });
});
