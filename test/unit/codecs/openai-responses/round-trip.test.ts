import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeResponsesInput } from '../../../../src/codecs/openai-responses/decode-input.js';
import { encodeResponsesResponse } from '../../../../src/codecs/openai-responses/encode-response.js';
import { ResponsesStreamEncoder } from '../../../../src/codecs/openai-responses/encode-stream.js';
import { echoOf } from '../../../../src/codecs/openai-responses/response-object.js';
import { encodeResponsesUsage, usageFromResponses } from '../../../../src/wire/responses/usage.js';
import { ResponsesPassThroughObserver } from '../../../../src/codecs/openai-responses/stream-usage-observer.js';
import { GatewayError } from '../../../../src/errors/gateway-error.js';
import type { ChatResponse, ContentPart, ReasoningPart, StreamPart, TextPart, ToolCallPart, Usage } from '../../../../src/ir/index.js';

type OutputPart = TextPart | ReasoningPart | ToolCallPart;

const text = fc.string({ maxLength: 40 });
const token = fc.stringMatching(/^[A-Za-z0-9+/=_-]{1,40}$/);
const part: fc.Arbitrary<OutputPart> = fc.oneof(
  text.map((value): TextPart => ({ type: 'text', text: value })),
  fc.record({ text, signature: token }).map(({ text: value, signature }): ReasoningPart => ({ type: 'reasoning', text: value, signature })),
  token.map((data): ReasoningPart => ({ type: 'reasoning', text: '', redactedData: data })),
  fc.record({ id: token, name: fc.stringMatching(/^[a-z_]{1,12}$/), args: fc.dictionary(fc.stringMatching(/^[a-z]{1,6}$/), fc.oneof(fc.integer(), text)) })
    .map(({ id, name, args }): ToolCallPart => ({ type: 'tool-call', id: `call_${id}`, name, argumentsJson: JSON.stringify(args) })),
);
const usage: fc.Arbitrary<Usage> = fc.record({ input: fc.nat(100_000), cacheRead: fc.nat(100_000), cacheWrite: fc.nat(100_000), output: fc.nat(100_000), reasoning: fc.nat(100_000) }).map((raw) => {
  const cacheRead = Math.min(raw.cacheRead, raw.input);
  const cacheWrite = Math.min(raw.cacheWrite, raw.input - cacheRead);
  const reasoning = Math.min(raw.reasoning, raw.output);
  return { input: { total: raw.input, noCache: raw.input - cacheRead - cacheWrite, cacheRead, cacheWrite }, output: { total: raw.output, text: raw.output - reasoning, reasoning } };
});

function chatResponse(content: ContentPart[], responseUsage: Usage): ChatResponse {
  return { id: 'abc', model: 'up', created: 1_700_000_000, content, finishReason: { unified: 'stop', raw: 'end_turn' }, usage: responseUsage, warnings: [] };
}

/** What an answer looks like once it has been through output items and back: text parts in one item stay separate parts, empty text messages vanish. */
function normalised(parts: OutputPart[]): ContentPart[] {
  return parts.filter((entry) => !(entry.type === 'text' && entry.text === ''));
}

function parseEvents(sse: string): Array<Record<string, unknown> & { type: string; sequence_number: number }> {
  return sse.split('\n\n').filter((block) => block.trim() !== '').map((block) => {
    const lines = block.split('\n');
    const type = lines[0]?.slice('event: '.length);
    const data = JSON.parse(lines[1]?.slice('data: '.length) ?? '') as Record<string, unknown> & { type: string; sequence_number: number };
    expect(data.type).toBe(type);
    return data;
  });
}

function streamOf(parts: OutputPart[], finalUsage: Usage): StreamPart[] {
  const stream: StreamPart[] = [{ type: 'response-start', id: 'up-1', model: 'up', created: 1_700_000_000 }];
  parts.forEach((entry, index) => {
    const id = `b${index}`;
    if (entry.type === 'text') {
      stream.push({ type: 'text-start', id });
      for (const piece of entry.text.match(/.{1,3}/gsu) ?? []) stream.push({ type: 'text-delta', id, delta: piece });
      stream.push({ type: 'text-end', id });
    } else if (entry.type === 'reasoning') {
      stream.push({ type: 'reasoning-start', id });
      if (entry.text !== '') stream.push({ type: 'reasoning-delta', id, delta: entry.text });
      stream.push({ type: 'reasoning-end', id, ...(entry.signature === undefined ? {} : { signature: entry.signature }), ...(entry.redactedData === undefined ? {} : { redactedData: entry.redactedData }) });
    } else {
      stream.push({ type: 'tool-input-start', id, toolCallId: entry.id, toolName: entry.name, index });
      stream.push({ type: 'tool-input-delta', id, delta: entry.argumentsJson });
      stream.push({ type: 'tool-input-end', id });
    }
  });
  stream.push({ type: 'finish', reason: { unified: 'stop', raw: 'stop' }, usage: finalUsage });
  return stream;
}

describe('openai-responses codec round trips', () => {
  it('usage survives encode → read', () => {
    fc.assert(fc.property(usage, (value) => {
      expect(usageFromResponses(JSON.parse(JSON.stringify(encodeResponsesUsage(value))))).toEqual(value);
    }));
  });

  it('an answer encoded as output items decodes back to the same assistant turn (reasoning state included)', () => {
    fc.assert(fc.property(fc.array(part, { minLength: 1, maxLength: 6 }), usage, (parts, answerUsage) => {
      const body = JSON.parse(encodeResponsesResponse(chatResponse(parts, answerUsage), 'public', { model: 'public', input: 'x' })) as { output: unknown[]; usage: unknown; status: string; model: string };
      expect(body.status).toBe('completed');
      expect(body.model).toBe('public');
      expect(usageFromResponses(body.usage)).toEqual(answerUsage);
      const decoded = decodeResponsesInput([{ role: 'user', content: 'q' }, ...body.output], undefined, []);
      const expected = normalised(parts);
      expect(decoded.messages.slice(1)).toEqual(expected.length === 0 ? [] : [{ role: 'assistant', content: expected }]);
    }));
  });

  it('the event stream is well formed and ends with the same response the non-streaming encoder gives', () => {
    fc.assert(fc.property(fc.array(part, { maxLength: 6 }), usage, (parts, finalUsage) => {
      const encoder = new ResponsesStreamEncoder('public', echoOf({ model: 'public', input: 'x' }));
      const sse = streamOf(parts, finalUsage).map((entry) => encoder.encode(entry)).join('') + encoder.end();
      const events = parseEvents(sse);
      expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
      expect(events.slice(0, 2).map((event) => event.type)).toEqual(['response.created', 'response.in_progress']);
      const last = events.at(-1) as unknown as { type: string; response: { output: Array<Record<string, unknown>>; usage: unknown; id: string } };
      expect(last.type).toBe('response.completed');
      expect(last.response.id).toBe('resp_up-1');
      expect(usageFromResponses(last.response.usage)).toEqual(finalUsage);
      const added = events.filter((event) => event.type === 'response.output_item.added');
      const done = events.filter((event) => event.type === 'response.output_item.done');
      // Text blocks without text add no message item.
      expect(added.map((event) => event.output_index)).toEqual(normalised(parts).map((_, index) => index));
      expect(done.map((event) => event.item)).toEqual(last.response.output);
      // Each item's deltas add up to its final content.
      for (const item of last.response.output) {
        const deltas = events.filter((event) => event.item_id === item.id && event.type.endsWith('.delta')).map((event) => event.delta).join('');
        if (item.type === 'message') expect(deltas).toBe((item.content as Array<{ text: string }>)[0]?.text);
        if (item.type === 'function_call') expect(deltas).toBe(item.arguments);
      }
      const nonStreaming = JSON.parse(encodeResponsesResponse(chatResponse(parts, finalUsage), 'public', { model: 'public', input: 'x' })) as { output: Array<Record<string, unknown>> };
      const withoutIds = (items: Array<Record<string, unknown>>): unknown[] => items.map(({ id: _id, ...rest }) => rest);
      // The stream opens one message item per text block; the non-streaming encoder joins adjacent text blocks.
      const blockwise = nonStreaming.output.flatMap((item) => (item.type === 'message' ? (item.content as unknown[]).map((content) => ({ ...item, content: [content] })) : [item]));
      expect(withoutIds(last.response.output)).toEqual(withoutIds(blockwise));
    }));
  });

  it('an upstream failure ends the stream with response.failed and an error event, continuing the sequence', () => {
    const encoder = new ResponsesStreamEncoder('public', echoOf({ model: 'public', input: 'x' }));
    let sse = encoder.encode({ type: 'text-delta', id: 't', delta: 'Hel' });
    sse += encoder.fail(new GatewayError('upstream_error', 'The upstream broke off.'));
    sse += encoder.encode({ type: 'text-delta', id: 't', delta: 'lo' }) + encoder.end();
    const events = parseEvents(sse);
    expect(events.map((event) => event.type)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added', 'response.output_text.delta', 'response.failed', 'error']);
    expect(events.at(-1)).toMatchObject({ sequence_number: 6, code: 'upstream_error', error: { code: 'upstream_error', type: 'upstream_error' } });
    expect(events.at(-2)).toMatchObject({ response: { status: 'failed', error: { code: 'upstream_error' } } });
  });

  it('a length cut ends with response.incomplete', () => {
    const encoder = new ResponsesStreamEncoder('public', echoOf({ model: 'public', input: 'x' }));
    const sse = encoder.encode({ type: 'text-delta', id: 't', delta: 'cut' }) + encoder.encode({ type: 'finish', reason: { unified: 'length', raw: 'max_tokens' }, usage: null });
    const last = parseEvents(sse).at(-1);
    expect(last).toMatchObject({ type: 'response.incomplete', response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } } });
  });
});

describe('ResponsesPassThroughObserver', () => {
  const event = (payload: Record<string, unknown>): Buffer => Buffer.from(`event: ${String(payload.type)}\ndata: ${JSON.stringify(payload)}\n\n`);

  it('reads usage from response.completed, keeps delivered text for a cut stream, and forwards every event', () => {
    const observer = new ResponsesPassThroughObserver();
    const created = event({ type: 'response.created', sequence_number: 0, response: { usage: null } });
    expect(observer.observe(created)).toBe(true);
    expect(observer.opening(created)).toEqual({ kind: 'preamble' });
    const delta = event({ type: 'response.output_text.delta', sequence_number: 1, delta: 'hi "usage":{' });
    expect(observer.observe(delta)).toBe(true);
    expect(observer.opening(delta)).toEqual({ kind: 'content' });
    observer.observe(event({ type: 'response.output_item.added', sequence_number: 2, output_index: 1, item: { type: 'function_call', name: 'get_weather', arguments: '' } }));
    observer.observe(event({ type: 'response.function_call_arguments.delta', sequence_number: 3, delta: '{"a":1}' }));
    expect(observer.completed()).toBe(false);
    expect(observer.reportedUsage()).toBeNull();
    expect([...observer.takeDeliveredText()].join('')).toBe('hi "usage":{get_weather{"a":1}');
    observer.observe(event({ type: 'response.completed', sequence_number: 4, response: { usage: { input_tokens: 12, input_tokens_details: { cached_tokens: 4 }, output_tokens: 7, output_tokens_details: { reasoning_tokens: 2 }, total_tokens: 19 } } }));
    expect(observer.completed()).toBe(true);
    expect(observer.usageIsFinal()).toBe(true);
    expect(observer.reportedUsage()).toEqual({ input: { total: 12, noCache: 8, cacheRead: 4, cacheWrite: 0 }, output: { total: 7, text: 5, reasoning: 2 } });
    expect(observer.nextSequenceNumber()).toBe(5);
    expect(observer.failure()).toBeNull();
  });

  it('notices response.failed and error events', () => {
    const failed = new ResponsesPassThroughObserver();
    failed.observe(event({ type: 'response.failed', sequence_number: 0, response: { error: { code: 'server_error', message: 'boom' }, usage: null } }));
    expect(failed.failure()).toEqual({ code: 'server_error', message: 'boom' });
    expect(failed.completed()).toBe(true);
    const errored = new ResponsesPassThroughObserver();
    const rateLimited = Buffer.from('event: error\ndata: {"type":"error","code":"rate_limit_exceeded","message":"slow down","sequence_number":3}\n\n');
    expect(errored.opening(rateLimited)).toEqual({ kind: 'error', status: 429 });
    errored.observe(rateLimited);
    expect(errored.failure()).toEqual({ code: 'rate_limit_exceeded', message: 'slow down' });
    expect(errored.completed()).toBe(false);
  });
});
