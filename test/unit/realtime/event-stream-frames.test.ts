import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EventStreamFrames } from '../../../src/realtime/event-stream-frames.js';

/** The events of a whole text read at once. */
function framesOf(text: string, cuts: number[]): string[] {
  const frames = new EventStreamFrames();
  const bytes = Buffer.from(text);
  const events: string[] = [];
  let start = 0;
  for (const cut of [...cuts.filter((at) => at < bytes.length).sort((a, b) => a - b), bytes.length]) {
    events.push(...frames.push(bytes.subarray(start, cut)));
    start = cut;
  }
  return events;
}

describe('server-sent events read from chunks', () => {
  it('gives the same events however the stream is cut, whatever its line ends', () => {
    const lineEnd = fc.constantFrom('\n', '\r\n');
    const event = fc.tuple(fc.array(fc.string({ maxLength: 12 }).map((text) => text.replace(/[\r\n]/g, ' ')), { minLength: 1, maxLength: 3 }), lineEnd, fc.boolean()).map(([lines, end, named]) => `${named ? `event: x${end}` : ''}${lines.map((line) => `data: ${line}`).join(end)}${end}${end}`);
    fc.assert(
      fc.property(fc.array(event, { maxLength: 8 }), fc.array(fc.nat({ max: 400 }), { maxLength: 30 }), (events, cuts) => {
        const text = events.join('');
        expect(framesOf(text, cuts)).toEqual(framesOf(text, []));
        expect(framesOf(text, []).length).toBe(events.length);
      }),
    );
  });

  it('reads one event of many chunks in time that grows with its length', () => {
    const timed = (megabytes: number): number => {
      const frames = new EventStreamFrames();
      const piece = Buffer.from('x'.repeat(64 * 1024));
      const started = performance.now();
      frames.push(Buffer.from('data: '));
      for (let index = 0; index < megabytes * 16; index += 1) frames.push(piece);
      expect(frames.push(Buffer.from('\n\n'))[0]?.length).toBe(megabytes * 1024 * 1024);
      return performance.now() - started;
    };
    // The fastest of three runs: a collection or a busy neighbour can stall any single run, never all three.
    const fastest = (megabytes: number): number => Math.min(timed(megabytes), timed(megabytes), timed(megabytes));
    timed(1);
    const small = fastest(4);
    const large = fastest(16);
    expect(large).toBeLessThan(small * 10 + 50);
  });
});
