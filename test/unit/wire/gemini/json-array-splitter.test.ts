import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { eventPayload } from '../../../../src/wire/gemini/event-payload.js';
import { JsonArraySplitter } from '../../../../src/wire/gemini/json-array-splitter.js';
import { SseEventSplitter } from '../../../../src/wire/sse-event-splitter.js';

/** The payloads of the Gemini stream events that one piece of SSE text completes. */
class SseDataSplitter {
  readonly #splitter = new SseEventSplitter();

  push(text: string): string[] {
    return payloads(this.#splitter.push(Buffer.from(text, 'utf8')));
  }

  flush(): string[] {
    const rest = this.#splitter.flush();
    return rest === null ? [] : payloads([rest]);
  }
}

function payloads(events: Buffer[]): string[] {
  return events.map(eventPayload).filter((payload): payload is string => payload !== null);
}

function splitAll(text: string, cuts: number[]): { elements: string[]; complete: boolean } {
  const splitter = new JsonArraySplitter();
  const elements: string[] = [];
  let start = 0;
  for (const cut of [...cuts, text.length].sort((a, b) => a - b)) {
    elements.push(...splitter.push(text.slice(start, cut)));
    start = cut;
  }
  return { elements, complete: splitter.complete };
}

describe('JsonArraySplitter', () => {
  it('splits Google framing, pretty-printed, with brackets, commas and escapes inside strings', () => {
    const text = '[{\n  "text": "a ] } , \\" [ {"\n}\n,\r\n{\n  "b": [1, {"c": "\\\\"}]\n}\n]';
    expect(splitAll(text, [])).toEqual({ elements: ['{\n  "text": "a ] } , \\" [ {"\n}', '{\n  "b": [1, {"c": "\\\\"}]\n}'], complete: true });
  });

  it('handles scalars, empty arrays and leading whitespace', () => {
    expect(splitAll(' \r\n[1, "two", true ,null]', [])).toEqual({ elements: ['1', '"two"', 'true', 'null'], complete: true });
    expect(splitAll('[]', [])).toEqual({ elements: [], complete: true });
    expect(splitAll('[{"a":1}\n,\r\n{"b"', [])).toEqual({ elements: ['{"a":1}'], complete: false });
  });

  it('rejects a body that is not an array', () => {
    expect(() => new JsonArraySplitter().push('{"error": {}}')).toThrow(SyntaxError);
    expect(() => new JsonArraySplitter().push('[1] x')).toThrow(SyntaxError);
  });

  it('gives the same elements at any chunk boundaries', () => {
    const value = fc.jsonValue({ maxDepth: 3 });
    fc.assert(
      fc.property(fc.array(value, { maxLength: 6 }), fc.array(fc.nat(), { maxLength: 8 }), fc.boolean(), (values, rawCuts, prettyPrint) => {
        const parts = values.map((item) => (prettyPrint ? JSON.stringify(item, null, 2) : JSON.stringify(item)));
        const text = `[${parts.join('\n,\r\n')}${parts.length > 0 ? '\n' : ''}]`;
        const cuts = rawCuts.map((cut) => cut % (text.length + 1));
        const { elements, complete } = splitAll(text, cuts);
        expect(complete).toBe(true);
        expect(elements.map((element) => JSON.parse(element) as unknown)).toEqual(JSON.parse(text));
      }),
      { numRuns: 150 },
    );
  });
});

describe('Gemini SSE payloads (the shared SSE splitter and eventPayload)', () => {
  it('splits events in any line-end style, joins data lines, skips comments and keeps bare JSON', () => {
    const splitter = new SseDataSplitter();
    expect(splitter.push('data: {"a":1}\r\n\r\ndata: {"b"')).toEqual(['{"a":1}']);
    expect(splitter.push(':2}\n\n: keep-alive\n\ndata:x\ndata:y\r\r')).toEqual(['{"b":2}', 'x\ny']);
    expect(splitter.push('{\n  "error": {"code": 500}\n}\n\n')).toEqual(['{\n  "error": {"code": 500}\n}']);
    expect(splitter.push('data: tail')).toEqual([]);
    expect(splitter.flush()).toEqual(['tail']);
  });
});
