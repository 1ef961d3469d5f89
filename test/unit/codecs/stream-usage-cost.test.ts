/**
 * The cost in streamed answers: which event gets it (the one that completes the usage, as the codec's observer picks
 * it on the pass-through path, or the finish part's encoding by the codec's encoder on the translated path), that it
 * is the cost of that final usage, spliced once, and that the splice leaves every other byte and the framing as they
 * were.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { spliceUsageCost } from '../../../src/wire/usage-cost.js';
import { anthropicMessagesCodec } from '../../../src/codecs/anthropic-messages/index.js';
import type { ForwardingCodec } from '../../../src/codecs/client-codec.js';
import { geminiCodec, geminiCodecFor } from '../../../src/codecs/gemini/index.js';
import { openAIChatCodec, openAIChatCodecFor } from '../../../src/codecs/openai-chat/index.js';
import { SseEventSplitter } from '../../../src/wire/sse-event-splitter.js';
import type { StreamPart } from '../../../src/ir/stream-part.js';
import type { Usage } from '../../../src/ir/usage.js';
import type { AnswerCost } from '../../../src/wire/usage-cost.js';

const fixture = (folder: string, name: string): string => readFileSync(new URL(`../${folder}/__fixtures__/${name}`, import.meta.url), 'utf8');
const usage: Usage = { input: { total: 120, noCache: 20, cacheRead: 100, cacheWrite: 0 }, output: { total: 15, text: 15, reasoning: 0 } };

/** A cost of `usd` whatever the usage, recording the usages it was asked to price. */
function fixedCost(usd: string): AnswerCost & { priced: Usage[] } {
  const priced: Usage[] = [];
  return { priced, costUsd: (answered) => (priced.push(answered), usd) };
}

/**
 * The raw events of a stream as the pass-through relay sees them, the index of the one that completes the usage, and
 * the forwarded events as the codec's observer priced them at `cost`.
 */
function pricedEvent(codec: ForwardingCodec, stream: string, cost: AnswerCost = fixedCost('0')): { events: Buffer[]; index: number; forwarded: Buffer[] } {
  const splitter = new SseEventSplitter();
  const events = [...splitter.push(Buffer.from(stream, 'utf8'))];
  const rest = splitter.flush();
  if (rest !== null) events.push(rest);
  const observer = codec.passThrough.createObserver(cost);
  let index = -1;
  const forwarded: Buffer[] = [];
  events.forEach((event, at) => {
    if (!observer.observe(event)) return;
    if (index < 0 && observer.usageIsFinal()) index = at;
    forwarded.push(observer.priced(event));
  });
  return { events, index, forwarded };
}

function dataOf(event: string): Record<string, unknown> {
  const line = event.split(/\r?\n/).find((candidate) => candidate.startsWith('data:')) ?? '';
  return JSON.parse(line.slice(5)) as Record<string, unknown>;
}

describe('where streamed answers carry the cost', () => {
  it('each family names the key of its final usage; OpenAI only when the caller asked for usage', () => {
    expect(anthropicMessagesCodec.streamUsageKey()).toBe('usage');
    expect(geminiCodec.streamUsageKey()).toBe('usageMetadata');
    expect(openAIChatCodec.streamUsageKey()).toBeNull();
    expect(openAIChatCodecFor({ includeUsage: true }).streamUsageKey()).toBe('usage');
  });

  it('Anthropic pass-through: message_delta (final output_tokens) is the priced event, spliced byte for byte', () => {
    const cost = fixedCost('0.000411');
    const { events, index, forwarded } = pricedEvent(anthropicMessagesCodec, fixture('anthropic', 'stream-text.chunks.txt'), cost);
    const event = events[index]?.toString('utf8') ?? '';
    expect(event.startsWith('event: message_delta\n')).toBe(true);
    const spliced = forwarded[index]?.toString('utf8') ?? '';
    // Priced once, at the final usage; every other event forwarded as it came.
    expect(cost.priced.map((priced) => priced.output.total)).toEqual([15]);
    expect(forwarded.filter((sent, at) => !sent.equals(events[at] as Buffer))).toHaveLength(1);
    expect(dataOf(spliced)).toEqual({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { cost: 0.000411, output_tokens: 15 } });
    expect(spliced.replace('"cost":0.000411,', '')).toBe(event);
    // message_start's usage (input only) comes earlier and is never the priced event.
    expect(events.slice(0, index).some((earlier) => earlier.includes('message_start'))).toBe(true);
  });

  it('Gemini pass-through: the closing chunk (finishReason and final totals) is the priced event', () => {
    const { events, index, forwarded } = pricedEvent(geminiCodec, fixture('gemini', 'stream-text.sse.txt'), fixedCost('0.25'));
    expect(index).toBe(events.length - 1);
    const event = events[index]?.toString('utf8') ?? '';
    const spliced = forwarded[index]?.toString('utf8') ?? '';
    const chunk = dataOf(spliced) as { usageMetadata: Record<string, unknown>; candidates: Array<{ finishReason: string }> };
    expect(chunk.candidates[0]?.finishReason).toBe('STOP');
    expect(chunk.usageMetadata).toEqual({ ...(dataOf(event).usageMetadata as Record<string, unknown>), cost: 0.25 });
    expect(spliced.replace('"cost":0.25,', '')).toBe(event);
  });

  it('Gemini pass-through: totals sent after the finish chunk make that later chunk the priced one', () => {
    const stream = 'data: {"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"},"finishReason":"STOP","index":0}]}\r\n\r\n'
      + 'data: {"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":1,"totalTokenCount":4}}\r\n\r\n';
    const { index, forwarded } = pricedEvent(geminiCodec, stream, fixedCost('1'));
    expect(index).toBe(1);
    expect(forwarded[0]?.toString('utf8')).not.toContain('cost');
    expect(dataOf(forwarded[index]?.toString('utf8') ?? '')).toEqual({ usageMetadata: { cost: 1, promptTokenCount: 3, candidatesTokenCount: 1, totalTokenCount: 4 } });
  });

  it('Anthropic translated: the finish encoding gets the cost in message_delta only, and the SDK events stay valid', () => {
    const encoder = anthropicMessagesCodec.createStreamEncoder({ model: 'm', cost: fixedCost('0.5') });
    const parts: StreamPart[] = [
      { type: 'response-start', id: 'msg_1', model: 'up', created: 1 },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'Hello' },
    ];
    const head = parts.map((part) => encoder.encode(part)).join('');
    const spliced = encoder.encode({ type: 'finish', reason: { unified: 'stop', raw: 'end_turn' }, usage });
    const events = spliced.split('\n\n').filter((block) => block !== '');
    expect(events.map((block) => block.split('\n')[0])).toEqual(['event: content_block_stop', 'event: message_delta', 'event: message_stop']);
    expect((dataOf(events[1] ?? '').usage as Record<string, unknown>).cost).toBe(0.5);
    expect((dataOf(events[1] ?? '').usage as Record<string, unknown>).output_tokens).toBe(15);
    expect(head.includes('"cost"')).toBe(false);
  });

  it.each([true, false])('Gemini translated (sse %s): the closing chunk gets the cost, the framing stays whole', (sse) => {
    const encoder = geminiCodecFor({ sse }).createStreamEncoder({ model: 'm', cost: fixedCost('0.000002') });
    const head = [
      encoder.encode({ type: 'response-start', id: 'r1', model: 'up', created: 1 }),
      encoder.encode({ type: 'text-start', id: 't' }),
      encoder.encode({ type: 'text-delta', id: 't', delta: 'Hello' }),
    ].join('');
    const spliced = encoder.encode({ type: 'finish', reason: { unified: 'stop', raw: 'STOP' }, usage });
    const whole = head + spliced + encoder.end();
    const chunks = sse
      ? whole.split('\r\n\r\n').filter((block) => block !== '').map((block) => dataOf(block))
      : (JSON.parse(whole) as Array<Record<string, unknown>>);
    expect(chunks).toHaveLength(2);
    const last = chunks[1] as { usageMetadata: Record<string, unknown>; candidates: Array<{ finishReason: string }> };
    expect(last.candidates[0]?.finishReason).toBe('STOP');
    expect(last.usageMetadata).toMatchObject({ cost: 0.000002, promptTokenCount: 120, candidatesTokenCount: 15 });
    expect(JSON.stringify(chunks[0])).not.toContain('cost');
  });
  it('translated: the encoder prices the first finish at the usage reported up to it, and nothing else', () => {
    const cost = fixedCost('0.75');
    const encoder = openAIChatCodecFor({ includeUsage: true }).createStreamEncoder({ model: 'm', cost });
    const plain = openAIChatCodecFor({ includeUsage: true }).createStreamEncoder({ model: 'm' });
    const parts: StreamPart[] = [
      { type: 'response-start', id: 'c1', model: 'up', created: 1 },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'Hi' },
      { type: 'usage', usage },
      { type: 'finish', reason: { unified: 'stop', raw: 'stop' }, usage: null },
    ];
    const priced = parts.map((part) => encoder.encode(part));
    const unpriced = parts.map((part) => plain.encode(part));
    expect(priced.slice(0, -1)).toEqual(unpriced.slice(0, -1));
    expect(priced.at(-1)).toBe(spliceUsageCost(unpriced.at(-1) as string, '0.75', 'usage')?.toString('utf8'));
    expect(cost.priced).toEqual([usage]);
    expect(encoder.end()).toBe(plain.end());
  });

  it('OpenAI without the usage chunk: neither the encoder nor the observer prices anything', () => {
    const cost = fixedCost('1');
    const encoder = openAIChatCodec.createStreamEncoder({ model: 'm', cost });
    expect(encoder.encode({ type: 'finish', reason: { unified: 'stop', raw: 'stop' }, usage })).not.toContain('cost');
    const { events, forwarded } = pricedEvent(openAIChatCodec, 'data: {"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":"stop"}]}\n\n', cost);
    expect(forwarded).toEqual(events);
    expect(cost.priced).toEqual([]);
  });
});
