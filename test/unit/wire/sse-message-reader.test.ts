import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readSseMessageBatches, SseMessageReader, type SseMessage } from '../../../src/wire/sse-event-splitter.js';

function readWhole(bytes: Buffer): SseMessage[] {
  const reader = new SseMessageReader();
  return [...reader.push(bytes), ...reader.end()];
}

describe('SseMessageReader', () => {
  it('reads events, joined data lines, comments and every line ending', () => {
    const text = 'event: ping\ndata: {}\n\n: comment\r\ndata: a\r\ndata: b\r\n\r\nevent: last\rdata: é\r\r';
    expect(readWhole(Buffer.from(text))).toEqual([
      { event: 'ping', data: '{}' },
      { event: null, data: 'a\nb' },
      { event: 'last', data: 'é' },
    ]);
  });

  it('dispatches an unterminated last message at the end', () => {
    expect(readWhole(Buffer.from('event: message_stop\ndata: {"type":"message_stop"}'))).toEqual([{ event: 'message_stop', data: '{"type":"message_stop"}' }]);
  });

  it('gives the same messages however the bytes are split into chunks (inside a CRLF or a UTF-8 character too)', async () => {
    const line = fc.constantFrom('event: content_block_delta', 'data: {"text":"héllo ✓"}', 'data: x', ': keep-alive', '', 'id: 7');
    const ending = fc.constantFrom('\n', '\r\n', '\r');
    await fc.assert(fc.asyncProperty(fc.array(fc.tuple(line, ending), { maxLength: 20 }), fc.array(fc.nat(), { maxLength: 8 }), async (lines, cuts) => {
      const bytes = Buffer.from(lines.map(([text, end]) => text + end).join(''), 'utf8');
      const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((left, right) => left - right);
      const chunks = [0, ...points].map((start, index) => bytes.subarray(start, [...points, bytes.length][index]));
      async function* body(): AsyncIterable<Buffer> {
        yield* chunks;
      }
      const batches: SseMessage[] = [];
      for await (const batch of readSseMessageBatches(body())) batches.push(...batch);
      expect(batches).toEqual(readWhole(bytes));
    }), { numRuns: 500 });
  });
});
