import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { eventData, sseMessage } from '../../../src/wire/sse-event-splitter.js';

/** The fields of an event read line by line as the SSE specification reads them (any line end), for reference. */
function referenceFields(event: Buffer): Array<[string, string]> {
  return event.toString('utf8').split(/\r\n|\r|\n/).map((line) => {
    const colon = line.indexOf(':');
    if (colon < 0) return [line, ''];
    const value = line.slice(colon + 1);
    return [line.slice(0, colon), value.startsWith(' ') ? value.slice(1) : value];
  });
}

function referenceData(event: Buffer): string | null {
  const data = referenceFields(event).filter(([name]) => name === 'data').map(([, value]) => value);
  return data.length === 0 ? null : data.join('\n');
}

function referenceMessage(event: Buffer): { event: string | null; data: string } | null {
  let name: string | null = null;
  const data: string[] = [];
  for (const [field, value] of referenceFields(event)) {
    if (field === '' ) continue;
    if (field === 'event') name = value;
    else if (field === 'data') data.push(value);
  }
  return data.length === 0 && name === null ? null : { event: name, data: data.join('\n') };
}

const piece = fc.constantFrom('data', 'data:', 'data: ', 'datax:', ' data:', 'event: ', ':', ' ', '\n', '\n\n', '\r', '\r\n', '{"a":1}', 'é', '😀', 'x');
const event = fc.array(piece, { maxLength: 10 }).map((pieces) => Buffer.from(pieces.join(''), 'utf8'));
/** Events as upstreams write them: one `data:` line (or a few lines) and a blank line. */
const usual = fc.tuple(fc.constantFrom('data: ', 'data:', 'event: x\ndata: ', 'data: a\ndata: '), fc.string({ unit: 'grapheme', maxLength: 30 }), fc.constantFrom('\n\n', '\n', '\r\n\r\n', '\n\r\n', '\r\n\n', '\r\r\n', '\r\n', '\r\r', ''))
  .map(([head, text, end]) => Buffer.from(head + text.replace(/[\r\n]/gu, '') + end, 'utf8'));

describe('eventData and sseMessage read as the line-by-line reading does', () => {
  it('property: any bytes, any line ends', () => {
    fc.assert(fc.property(fc.oneof(event, usual), (bytes) => {
      expect(eventData(bytes)).toBe(referenceData(bytes));
      expect(sseMessage(bytes)).toEqual(referenceMessage(bytes));
    }), { numRuns: 5000 });
  });
});
