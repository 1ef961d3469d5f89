import { EventStreamCodec, Int64 } from '@smithy/core/event-streams';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EventStreamDecoder, EventStreamError, type EventStreamMessage } from '../../../../src/upstreams/bedrock/event-stream-decoder.js';
import { encodeEventStreamMessage } from '../../../support/event-stream-encoder.js';

/** AWS's own encoder (the one in the AWS SDK), so the decoder is checked against an implementation not written here. */
const awsCodec = new EventStreamCodec((bytes) => Buffer.from(bytes).toString('utf8'), (text) => new Uint8Array(Buffer.from(text, 'utf8')));

const headerName = fc.string({ minLength: 1, maxLength: 20 }).filter((name) => Buffer.byteLength(name) <= 255);
const message = fc.record({
  headers: fc.dictionary(headerName, fc.string({ maxLength: 60 }), { maxKeys: 5 }),
  payload: fc.uint8Array({ maxLength: 300 }),
});

/** Splits bytes at the given cut points. */
function split(bytes: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let start = 0;
  for (const point of points) {
    chunks.push(bytes.subarray(start, point));
    start = point;
  }
  chunks.push(bytes.subarray(start));
  return chunks;
}

function decodeAll(chunks: Buffer[]): EventStreamMessage[] {
  const decoder = new EventStreamDecoder();
  const messages = chunks.flatMap((chunk) => decoder.push(chunk));
  expect(decoder.pending).toBe(0);
  return messages;
}

describe('EventStreamDecoder', () => {
  it('decodes any sequence of messages, however the bytes are chunked', () => {
    fc.assert(
      fc.property(fc.array(message, { minLength: 1, maxLength: 6 }), fc.array(fc.nat(), { maxLength: 12 }), (messages, cuts) => {
        const bytes = Buffer.concat(messages.map((entry) => encodeEventStreamMessage(entry.headers, Buffer.from(entry.payload))));
        const decoded = decodeAll(split(bytes, cuts));
        expect(decoded).toHaveLength(messages.length);
        decoded.forEach((result, index) => {
          expect(result.headers).toEqual(messages[index]!.headers);
          expect(new Uint8Array(result.payload)).toEqual(messages[index]!.payload);
        });
      }),
      { numRuns: 300 },
    );
  });

  it('decodes what the AWS SDK encoder writes, every header type included', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), fc.uuid(), (payload, int, long, uuid) => {
        // `|| 0`: a negative multiple leaves -0, which the wire has no way to say.
        const byte = int % 128 || 0;
        const short = int % 32_768 || 0;
        const encoded = awsCodec.encode({
          headers: {
            yes: { type: 'boolean', value: true },
            no: { type: 'boolean', value: false },
            byte: { type: 'byte', value: byte },
            short: { type: 'short', value: short },
            integer: { type: 'integer', value: int },
            long: { type: 'long', value: Int64.fromNumber(Number(long % 2n ** 52n)) },
            binary: { type: 'binary', value: payload },
            string: { type: 'string', value: 'ünïcode ✓' },
            time: { type: 'timestamp', value: new Date(1_700_000_000_000) },
            id: { type: 'uuid', value: uuid },
          },
          body: payload,
        });
        const [decoded] = decodeAll([Buffer.from(encoded)]);
        expect(decoded!.headers).toEqual({
          yes: true,
          no: false,
          byte,
          short,
          integer: int,
          long: long % 2n ** 52n,
          binary: payload,
          string: 'ünïcode ✓',
          time: new Date(1_700_000_000_000),
          id: uuid,
        });
        expect(new Uint8Array(decoded!.payload)).toEqual(payload);
      }),
      { numRuns: 200 },
    );
  });

  it('rejects any single corrupted byte: prelude and message checksums', () => {
    fc.assert(
      fc.property(message, fc.nat(), fc.integer({ min: 1, max: 255 }), (entry, position, flip) => {
        const bytes = Buffer.from(encodeEventStreamMessage(entry.headers, Buffer.from(entry.payload)));
        const at = position % bytes.length;
        bytes[at] = (bytes[at] as number) ^ flip;
        expect(() => new EventStreamDecoder().push(bytes)).toThrow(EventStreamError);
      }),
      { numRuns: 500 },
    );
  });

  it('keeps a header named __proto__ as a header', () => {
    const headers = JSON.parse('{"__proto__":"x",":event-type":"metadata"}') as Record<string, string>;
    const [decoded] = new EventStreamDecoder().push(encodeEventStreamMessage(headers, '{}'));
    expect(Object.getPrototypeOf(decoded!.headers)).toBeNull();
    expect(Object.getOwnPropertyDescriptor(decoded!.headers, '__proto__')?.value).toBe('x');
    expect(decoded!.headers[':event-type']).toBe('metadata');
  });

  it('holds an unfinished message until the rest arrives', () => {
    const bytes = encodeEventStreamMessage({ ':event-type': 'messageStart' }, '{"role":"assistant"}');
    const decoder = new EventStreamDecoder();
    expect(decoder.push(bytes.subarray(0, 10))).toEqual([]);
    expect(decoder.pending).toBe(10);
    expect(decoder.push(bytes.subarray(10))).toHaveLength(1);
    expect(decoder.pending).toBe(0);
  });
});
