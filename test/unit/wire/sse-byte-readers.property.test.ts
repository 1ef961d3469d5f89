import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AnthropicStreamUsageObserver } from '../../../src/codecs/anthropic-messages/stream-usage-observer.js';
import { withHostedTools, type HostedToolCalls } from '../../../src/ir/usage.js';
import { mergeUsageCounters, usageFromAnthropic } from '../../../src/wire/anthropic/usage.js';
import { isJsonObject } from '../../../src/wire/json-object.js';
import { eventData, eventJsonObject, SseEventSplitter } from '../../../src/wire/sse-event-splitter.js';

/** The data of an event as the whole event decoded and split into lines gives it (the reading the byte scan replaces). */
function decodedThenSplitData(event: Buffer): string | null {
  let data: string | null = null;
  for (const line of event.toString('utf8').split(/\r\n|\r|\n/)) {
    if (!line.startsWith('data')) continue;
    const colon = line.indexOf(':');
    const name = colon < 0 ? line : line.slice(0, colon);
    const raw = colon < 0 ? '' : line.slice(colon + 1);
    if (name === 'data') data = data === null ? (raw.startsWith(' ') ? raw.slice(1) : raw) : `${data}\n${raw.startsWith(' ') ? raw.slice(1) : raw}`;
  }
  return data;
}

function parsedObject(data: string | null): Record<string, unknown> | null {
  if (data === null) return null;
  try {
    const parsed = JSON.parse(data) as unknown;
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Text with multi-byte characters, escaped quotes and backslashes, and the names the observer looks for. */
const tricky = fc.array(fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 8 }),
  fc.constantFrom('é', '😀', '中文', '\\"', '"', '\\\\', 'message_delta', 'message_stop', 'content_block_start', 'error', 'ping', 'data:', ' ', ':'),
), { maxLength: 12 }).map((parts) => parts.join(''));

/** Bytes that are not always valid UTF-8: stray continuation bytes, cut sequences, next to line ends. */
const rawBytes = fc.array(fc.oneof(
  fc.constantFrom(0x0a, 0x20, 0x3a, 0x80, 0xbf, 0xc3, 0xe2, 0xf0, 0x9f, 0xff),
  fc.constantFrom(...Buffer.from('data')),
  fc.integer({ min: 0, max: 255 }),
), { maxLength: 40 }).map((bytes) => Buffer.from(bytes));

const lineFeedEvent = fc.oneof(
  fc.array(fc.oneof(tricky, fc.constantFrom('data', 'data:', 'data: ', 'datax: ', ' data:', 'event: x', ':', '')), { maxLength: 6 }).map((lines) => Buffer.from(`${lines.join('\n')}\n\n`, 'utf8')),
  fc.array(rawBytes, { maxLength: 4 }).map((lines) => Buffer.concat(lines.flatMap((line) => [Buffer.from('data: '), line, Buffer.from('\n')]))),
  rawBytes,
);

describe('eventData read off the bytes of LF-only events', () => {
  it('property: the data and the parsed object equal those of the decoded, split event (any bytes, multi-byte and broken UTF-8)', () => {
    fc.assert(fc.property(lineFeedEvent, (event) => {
      const expected = decodedThenSplitData(event);
      expect(eventData(event)).toBe(expected);
      expect(eventJsonObject(event)).toEqual(parsedObject(expected));
    }), { numRuns: 5000 });
  });
});

const HEAD_BYTES = 64;

/** The observer's reading as it was written before its byte scans: a view of each event's head, usage copied on merge. */
class ReferenceObserver {
  raw: Record<string, unknown> | null = null;
  content: Buffer[] = [];
  serverToolStarts: Buffer[] = [];
  sawMessageDelta = false;
  completed = false;
  model: string | null = null;
  stopReason: string | null = null;

  observe(event: Buffer): void {
    const head = event.subarray(0, HEAD_BYTES);
    if (head.includes('message_stop')) this.completed = true;
    if (head.includes('content_block_delta') || head.includes('content_block_start')) {
      this.content.push(event);
      if (head.includes('content_block_start') && event.includes('"server_tool_use"')) this.serverToolStarts.push(event);
    } else if (head.includes('message_start')) {
      const message = parsedObject(decodedThenSplitData(event))?.message;
      if (isJsonObject(message) && typeof message.model === 'string') this.model = message.model;
      if (isJsonObject(message) && isJsonObject(message.usage)) this.raw = { ...message.usage };
    } else if (head.includes('message_delta')) {
      const body = parsedObject(decodedThenSplitData(event));
      if (isJsonObject(body?.delta) && typeof body.delta.stop_reason === 'string') this.stopReason = body.delta.stop_reason;
      const usage = body?.usage;
      if (isJsonObject(usage)) {
        this.sawMessageDelta = true;
        const merged: Record<string, unknown> = { ...(this.raw ?? {}) };
        for (const [key, value] of Object.entries(usage)) if (value !== null && value !== undefined) merged[key] = value;
        this.raw = merged;
      }
    }
  }

  opening(event: Buffer): string {
    const head = event.subarray(0, HEAD_BYTES);
    if (head.includes('message_start') || head.includes('ping')) return 'preamble';
    if (head.includes('error')) {
      const body = parsedObject(decodedThenSplitData(event));
      if (body?.type === 'error') return `error ${JSON.stringify(isJsonObject(body.error) ? body.error.type : '')}`;
    }
    return 'content';
  }

  reportedUsage(): unknown {
    const usage = usageFromAnthropic(this.raw);
    if (usage === null || this.sawMessageDelta) return usage;
    const calls: HostedToolCalls = { webSearch: 0, webFetch: 0, fileSearch: 0 };
    for (const event of this.serverToolStarts) {
      const block = parsedObject(decodedThenSplitData(event))?.content_block;
      if (isJsonObject(block) && block.type === 'server_tool_use' && block.name === 'web_search') calls.webSearch += 1;
      else if (isJsonObject(block) && block.type === 'server_tool_use' && block.name === 'web_fetch') calls.webFetch += 1;
    }
    return withHostedTools(usage, calls);
  }
}

const counter = fc.oneof(fc.nat({ max: 5000 }), fc.constant(null), fc.constant('7'));
const usageObject = fc.record({
  input_tokens: counter,
  output_tokens: counter,
  cache_read_input_tokens: counter,
  cache_creation_input_tokens: counter,
  server_tool_use: fc.option(fc.record({ web_search_requests: counter, web_fetch_requests: counter })),
  output_tokens_details: fc.option(fc.record({ thinking_tokens: counter })),
}, { requiredKeys: [] });

/** Anthropic stream events, some with their name pushed near or past the first 64 bytes, some long. */
const anthropicEvent = fc.tuple(
  fc.constantFrom('message_start', 'message_delta', 'message_stop', 'content_block_start', 'content_block_delta', 'ping', 'error', 'other'),
  fc.boolean(),
  tricky,
  fc.option(fc.nat({ max: 1500 })),
  usageObject,
  fc.option(usageObject),
  tricky,
  fc.constantFrom('web_search', 'web_fetch', 'other'),
).map(([type, named, pad, long, usage, deltaUsage, text, tool]) => {
  const padding = long === null ? pad : `${pad}${'x'.repeat(long)}`;
  const bodies: Record<string, unknown> = {
    message_start: { pad: padding, type, message: { model: text, usage } },
    message_delta: { pad: padding, type, delta: { stop_reason: text }, ...(deltaUsage === null ? {} : { usage: deltaUsage }) },
    content_block_start: { type, index: 0, content_block: { type: 'server_tool_use', name: tool, text }, pad: padding },
    content_block_delta: { type, index: 0, delta: { text, thinking: padding } },
    error: { type, error: { type: text }, pad: padding },
  };
  const data = JSON.stringify(bodies[type] ?? { type, pad: padding });
  return Buffer.from(`${named ? `event: ${type}\n` : ''}data: ${data}\n\n`, 'utf8');
});

describe('the Anthropic pass-through observer', () => {
  it('property: reads what the reading with head views and copied usage read, over streams cut anywhere', () => {
    fc.assert(fc.property(fc.array(anthropicEvent, { maxLength: 8 }), fc.array(fc.nat(), { maxLength: 6 }), (events, cutsAt) => {
      const bytes = Buffer.concat(events);
      const cuts = cutsAt.map((at) => at % (bytes.length + 1)).sort((left, right) => left - right);
      const splitter = new SseEventSplitter();
      const observer = new AnthropicStreamUsageObserver();
      const reference = new ReferenceObserver();
      const seen: Buffer[] = [];
      let start = 0;
      for (const cut of [...cuts, bytes.length]) {
        for (const event of splitter.push(bytes.subarray(start, cut))) {
          seen.push(event);
          const opening = observer.opening(event);
          expect(opening.kind === 'error' ? `error ${JSON.stringify(ERROR_NAME.get(opening.status) ?? '')}` : opening.kind).toBe(normalised(reference.opening(event)));
          expect(observer.observe(event)).toBe(true);
          reference.observe(event);
          expect(observer.completed()).toBe(reference.completed);
          expect(observer.usageIsFinal()).toBe(reference.sawMessageDelta);
          expect(observer.reportedUsage()).toEqual(reference.reportedUsage());
        }
        start = cut;
      }
      expect(splitter.flush()).toBeNull();
      expect(Buffer.concat(seen).equals(bytes)).toBe(true);
      expect(observer.answerFacts()).toEqual({ model: reference.model, finishReasons: reference.stopReason === null ? [] : [reference.stopReason] });
      const texts = reference.content.map((event) => parsedObject(decodedThenSplitData(event))).filter((body) => body !== null).map((body) => {
        const text = (value: unknown): string => (typeof value === 'string' ? value : '');
        if (isJsonObject(body.delta)) return text(body.delta.text) + text(body.delta.thinking) + text(body.delta.partial_json);
        return isJsonObject(body.content_block) ? text(body.content_block.text) + text(body.content_block.name) : null;
      }).filter((text) => text !== null);
      expect([...observer.takeDeliveredText()]).toEqual(texts);
    }), { numRuns: 2000 });
  });

  it('merges message_delta counters into those message_start gave, a counter sent as null keeping the earlier one', () => {
    const observer = new AnthropicStreamUsageObserver();
    observer.observe(Buffer.from('event: message_start\ndata: {"type":"message_start","message":{"model":"m","usage":{"input_tokens":5,"output_tokens":1}}}\n\n'));
    observer.observe(Buffer.from('event: message_delta\ndata: {"type":"message_delta","delta":{},"usage":{"input_tokens":null,"output_tokens":9}}\n\n'));
    const merged: Record<string, unknown> = { input_tokens: 5, output_tokens: 1 };
    mergeUsageCounters(merged, { input_tokens: null, output_tokens: 9 });
    expect(observer.reportedUsage()).toEqual(usageFromAnthropic(merged));
    expect(observer.reportedUsage()?.output.total).toBe(9);
    expect(observer.reportedUsage()?.input.total).toBe(5);
  });
});

/** The statuses the observer gives Anthropic's error types, back to a type name the reference can be compared with. */
const ERROR_NAME = new Map<number, string>([[503, 'overloaded_error'], [502, 'api_error'], [429, 'rate_limit_error'], [504, 'timeout_error'], [400, 'invalid_request_error'], [401, 'authentication_error'], [403, 'permission_error'], [404, 'not_found_error'], [413, 'request_too_large']]);

function normalised(reading: string): string {
  if (!reading.startsWith('error ')) return reading;
  const type = JSON.parse(reading.slice('error '.length)) as unknown;
  return typeof type === 'string' && [...ERROR_NAME.values()].includes(type) && type !== 'api_error' ? reading : `error ${JSON.stringify('api_error')}`;
}

const TOOLS = '[{"name":"Read","description":"lit \\"tout\\" — ünïcødé 😀","input_schema":{"type":"object"}}]';

/** A member value with multi-byte characters, escaped quotes and, as raw bytes, broken UTF-8 inside its string. */
const messyValue = fc.tuple(tricky, fc.array(fc.constantFrom(0x80, 0xc3, 0xe2, 0xf0, 0xff), { maxLength: 3 }), fc.boolean()).map(([text, broken, inArray]) => {
  const string = Buffer.concat([Buffer.from(JSON.stringify(text).slice(0, -1)), Buffer.from(broken), Buffer.from('"')]);
  return inArray ? Buffer.concat([Buffer.from('[{"content":'), string, Buffer.from('}]')]) : string;
});

describe('parseKeepingMembers around kept values', () => {
  it('property: gives what JSON.parse of the decoded body gives, with multi-byte and broken UTF-8 beside the kept bytes', async () => {
    const { KeptMembers } = await import('../../../src/wire/kept-members.js');
    const { parseKeepingMembers } = await import('../../../src/wire/parse-keeping-members.js');
    const { indexTopLevel } = await import('../../../src/wire/top-level-index.js');
    let reused = 0;
    fc.assert(fc.property(fc.array(fc.tuple(fc.constantFrom('model', 'messages', 'system', 'x'), messyValue), { maxLength: 4 }), fc.nat({ max: 4 }), (members, toolsAt) => {
      const kept = new KeptMembers(['tools'], { budgetBytes: 1 << 20, minBytes: 1, maxValues: 8 }).of('a');
      const parts = members.map(([name, value]) => Buffer.concat([Buffer.from(`${JSON.stringify(name)}:`), value]));
      parts.splice(Math.min(toolsAt, parts.length), 0, Buffer.from(`"tools": ${TOOLS}`));
      const joined = parts.flatMap((part, at) => (at === 0 ? [part] : [Buffer.from(','), part]));
      const body = Buffer.concat([Buffer.from('{'), ...joined, Buffer.from('}')]);
      const expected = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
      // The first body is parsed whole and keeps the tools; the second, the same bytes, reuses them.
      for (let turn = 0; turn < 2; turn += 1) {
        const again = Buffer.from(body);
        if (turn === 1 && indexTopLevel(again, undefined, kept).reused !== null) reused += 1;
        const actual = parseKeepingMembers(again, kept) as Record<string, unknown>;
        expect(actual).toEqual(expected);
        expect(Object.keys(actual)).toEqual(Object.keys(expected));
      }
    }), { numRuns: 2000 });
    expect(reused).toBeGreaterThan(1000);
  });
});
