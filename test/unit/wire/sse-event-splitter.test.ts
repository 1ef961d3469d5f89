import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { eventData, eventJsonObject, SseEventSplitter, sseMessage } from '../../../src/wire/sse-event-splitter.js';

/** Any Unicode scalar value (no lone surrogates), weighted toward ASCII and multi-byte ranges. */
const anyChar = fc.oneof(
  fc.integer({ min: 0, max: 0x7f }),
  fc.integer({ min: 0x80, max: 0xd7ff }),
  fc.integer({ min: 0xe000, max: 0xffff }),
  fc.integer({ min: 0x10000, max: 0x10ffff }),
).map((code) => String.fromCodePoint(code));

/** Any text without line breaks (CR and LF cannot appear inside an SSE line), including astral and multi-byte characters. */
const lineText = fc.oneof(
  fc.string({ unit: anyChar, maxLength: 40 }),
  fc.string({ unit: fc.constantFrom('é', '€', '😀', '中', 'a', ' ', ':', '{', '"', '\\', 'data:'), maxLength: 20 }),
).map((text) => text.replace(/[\r\n]/g, ''));

const fieldLine = fc.oneof(
  { weight: 4, arbitrary: lineText.map((text) => `data: ${text}`) },
  { weight: 1, arbitrary: lineText.map((text) => `data:${text}`) },
  { weight: 1, arbitrary: lineText.map((text) => `event: ${text}`) },
  { weight: 1, arbitrary: lineText.map((text) => `: ${text}`) },
  { weight: 1, arbitrary: fc.nat().map((id) => `id: ${id}`) },
);

const eventArb = fc.record({ lines: fc.array(fieldLine, { minLength: 1, maxLength: 4 }), crlf: fc.boolean() })
  .map(({ lines, crlf }) => {
    const eol = crlf ? '\r\n' : '\n';
    return Buffer.from(lines.map((line) => line + eol).join('') + eol, 'utf8');
  });

function cutAt(buffer: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((cut) => cut % (buffer.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const point of points) {
    chunks.push(buffer.subarray(from, point));
    from = point;
  }
  chunks.push(buffer.subarray(from));
  return chunks;
}

function pushAll(chunks: Buffer[]): { events: Buffer[]; rest: Buffer | null } {
  const splitter = new SseEventSplitter();
  const events: Buffer[] = [];
  // Copy each chunk so the test does not depend on the splitter keeping references into one big buffer.
  for (const chunk of chunks) events.push(...splitter.push(Buffer.from(chunk)));
  return { events, rest: splitter.flush() };
}

describe('SseEventSplitter', () => {
  it('splits LF-framed events and keeps each terminator', () => {
    const splitter = new SseEventSplitter();
    const events = splitter.push(Buffer.from('data: one\n\ndata: two\n\n'));
    expect(events.map(String)).toEqual(['data: one\n\n', 'data: two\n\n']);
    expect(splitter.flush()).toBeNull();
  });

  it('splits CRLF-framed events', () => {
    const splitter = new SseEventSplitter();
    const events = splitter.push(Buffer.from('data: one\r\nid: 1\r\n\r\ndata: two\r\n\r\n'));
    expect(events.map(String)).toEqual(['data: one\r\nid: 1\r\n\r\n', 'data: two\r\n\r\n']);
  });

  it('waits for the terminator across chunks, including a split between CR and LF', () => {
    const splitter = new SseEventSplitter();
    expect(splitter.push(Buffer.from('data: a\r\n'))).toEqual([]);
    expect(splitter.push(Buffer.from('\r'))).toEqual([]);
    expect(splitter.push(Buffer.from('\ndata: b\n')).map(String)).toEqual(['data: a\r\n\r\n']);
    expect(splitter.push(Buffer.from('\n')).map(String)).toEqual(['data: b\n\n']);
    expect(splitter.flush()).toBeNull();
  });

  it('does not end an event on a single line break', () => {
    const splitter = new SseEventSplitter();
    expect(splitter.push(Buffer.from('data: a\ndata: b\n'))).toEqual([]);
    expect(splitter.push(Buffer.from('\n')).map(String)).toEqual(['data: a\ndata: b\n\n']);
  });

  it('returns an unterminated tail on flush, once', () => {
    const splitter = new SseEventSplitter();
    expect(splitter.push(Buffer.from('data: done\n\ndata: cut'))).toHaveLength(1);
    expect(String(splitter.flush())).toBe('data: cut');
    expect(splitter.flush()).toBeNull();
  });

  it('survives one byte at a time through multi-byte characters', () => {
    const text = 'data: é€😀中 {"content":"naïve"}\n\ndata: [DONE]\n\n';
    const bytes = Buffer.from(text, 'utf8');
    const { events, rest } = pushAll([...bytes].map((byte) => Buffer.from([byte])));
    expect(Buffer.concat(events).toString('utf8')).toBe(text);
    expect(events.map((event) => event.toString('utf8'))).toEqual(['data: é€😀中 {"content":"naïve"}\n\n', 'data: [DONE]\n\n']);
    expect(rest).toBeNull();
  });

  it('yields exactly the original events, byte for byte, for any chunking', () => {
    fc.assert(
      fc.property(fc.array(eventArb, { minLength: 0, maxLength: 8 }), fc.array(fc.nat(), { maxLength: 30 }), (events, cuts) => {
        const stream = Buffer.concat(events);
        const { events: out, rest } = pushAll(cutAt(stream, cuts));
        expect(rest).toBeNull();
        expect(out.length).toBe(events.length);
        out.forEach((event, index) => expect(event.equals(events[index] as Buffer)).toBe(true));
      }),
      { numRuns: 400 },
    );
  });

  it('keeps an unterminated last event for flush, for any chunking', () => {
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 5 }), fc.array(fieldLine, { minLength: 1, maxLength: 3 }), fc.array(fc.nat(), { maxLength: 20 }),
        (events, tailLines, cuts) => {
          const tail = Buffer.from(tailLines.join('\n'), 'utf8');
          const { events: out, rest } = pushAll(cutAt(Buffer.concat([...events, tail]), cuts));
          expect(Buffer.concat(out).equals(Buffer.concat(events))).toBe(true);
          expect(out.length).toBe(events.length);
          expect(rest === null ? tail.length === 0 : rest.equals(tail)).toBe(true);
        }),
      { numRuns: 200 },
    );
  });
});

describe('SseEventSplitter in any one line-end style', () => {
  const styledEvents = fc.record({
    eol: fc.constantFrom('\n', '\r\n', '\r'),
    events: fc.array(fc.array(fieldLine, { minLength: 1, maxLength: 4 }), { maxLength: 8 }),
  });

  it('yields the same events, byte for byte, for any chunking, with LF, CRLF or lone-CR line ends', () => {
    fc.assert(
      fc.property(styledEvents, fc.array(fc.nat(), { maxLength: 30 }), ({ eol, events }, cuts) => {
        const originals = events.map((lines) => Buffer.from(lines.map((line) => line + eol).join('') + eol, 'utf8'));
        const { events: out, rest } = pushAll(cutAt(Buffer.concat(originals), cuts));
        expect(rest).toBeNull();
        expect(out.map(String)).toEqual(originals.map(String));
      }),
      { numRuns: 400 },
    );
  });

  it('reads the same names and data from every event whatever the line ends', () => {
    fc.assert(
      fc.property(fc.array(fieldLine, { minLength: 1, maxLength: 6 }), (lines) => {
        const read = (eol: string) => sseMessage(Buffer.from(lines.map((line) => line + eol).join('') + eol, 'utf8'));
        expect(read('\r\n')).toEqual(read('\n'));
        expect(read('\r')).toEqual(read('\n'));
      }),
      { numRuns: 200 },
    );
  });

  it('ends a lone-CR event at once and waits on a CR that may be half of a CRLF blank line', () => {
    const splitter = new SseEventSplitter();
    expect(splitter.push(Buffer.from('data: x\rdata: y\r\r')).map(String)).toEqual(['data: x\rdata: y\r\r']);
    expect(splitter.push(Buffer.from('data: z\r\n\r'))).toEqual([]);
    expect(splitter.push(Buffer.from('\n')).map(String)).toEqual(['data: z\r\n\r\n']);
  });
});

describe('sseMessage and eventJsonObject', () => {
  it('read the event name, joined data lines, and skip comments', () => {
    expect(sseMessage(Buffer.from(': hi\nevent: delta\ndata: a\ndata\ndata: b\n\n'))).toEqual({ event: 'delta', data: 'a\n\nb' });
    expect(sseMessage(Buffer.from(': keep-alive\n\n'))).toBeNull();
    expect(sseMessage(Buffer.from('event: ping\n\n'))).toEqual({ event: 'ping', data: '' });
  });

  it('parse the data of an event as a JSON object, and nothing else', () => {
    expect(eventJsonObject(Buffer.from('data: {"a":1}\n\n'))).toEqual({ a: 1 });
    expect(eventJsonObject(Buffer.from('data: [1]\n\n'))).toBeNull();
    expect(eventJsonObject(Buffer.from('data: [DONE]\n\n'))).toBeNull();
    expect(eventJsonObject(Buffer.from(': comment\n\n'))).toBeNull();
  });
});

describe('eventData', () => {
  it('reads one data line, removing one optional space', () => {
    expect(eventData(Buffer.from('data: {"a":1}\n\n'))).toBe('{"a":1}');
    expect(eventData(Buffer.from('data:{"a":1}\n\n'))).toBe('{"a":1}');
    expect(eventData(Buffer.from('data:  two\n\n'))).toBe(' two');
    expect(eventData(Buffer.from('data:\n\n'))).toBe('');
  });

  it('joins several data lines with LF, for both framings', () => {
    expect(eventData(Buffer.from('data: a\ndata: b\ndata:c\n\n'))).toBe('a\nb\nc');
    expect(eventData(Buffer.from('data: a\r\nevent: x\r\ndata: b\r\n\r\n'))).toBe('a\nb');
  });

  it('ignores other fields and comments; null without data', () => {
    expect(eventData(Buffer.from('event: ping\nid: 3\n\n'))).toBeNull();
    expect(eventData(Buffer.from(': keep-alive\n\n'))).toBeNull();
    expect(eventData(Buffer.from('event: message\ndata: x\n\n'))).toBe('x');
  });

  it('decodes UTF-8', () => {
    expect(eventData(Buffer.from('data: é€😀\n\n', 'utf8'))).toBe('é€😀');
  });

  it('matches the data lines of any generated event', () => {
    const dataEvent = fc.record({ values: fc.array(lineText, { minLength: 1, maxLength: 4 }), crlf: fc.boolean() });
    fc.assert(
      fc.property(dataEvent, ({ values, crlf }) => {
        const eol = crlf ? '\r\n' : '\n';
        const event = Buffer.from(values.map((value) => `data: ${value}${eol}`).join('') + eol, 'utf8');
        const expected = values.map((value) => Buffer.from(value, 'utf8').toString('utf8')).join('\n');
        expect(eventData(event)).toBe(expected);
      }),
      { numRuns: 200 },
    );
  });
});
