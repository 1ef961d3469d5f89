import { describe, expect, it } from 'vitest';
import { SseEventSplitter } from '../../../src/wire/sse-event-splitter.js';

describe('one long server-sent event split from many chunks', () => {
  it('comes out whole, once, in time that grows with its length', () => {
    const timed = (megabytes: number): number => {
      const splitter = new SseEventSplitter();
      const piece = Buffer.from('x'.repeat(64 * 1024));
      const started = process.cpuUsage();
      expect(splitter.push(Buffer.from('data: '))).toEqual([]);
      for (let index = 0; index < megabytes * 16; index += 1) expect(splitter.push(piece)).toEqual([]);
      const events = splitter.push(Buffer.from('\n\ndata: next'));
      expect(events.map((event) => event.length)).toEqual([megabytes * 1024 * 1024 + 8]);
      expect(splitter.flush()?.toString()).toBe('data: next');
      const used = process.cpuUsage(started);
      return (used.user + used.system) / 1000;
    };
    // CPU time, not wall time: a loaded machine delays a run but does not make it do more work. The fastest of
    // three runs, as a collection can land in any one of them.
    const fastest = (megabytes: number): number => Math.min(timed(megabytes), timed(megabytes), timed(megabytes));
    timed(1);
    const small = fastest(4);
    const large = fastest(16);
    expect(large).toBeLessThan(small * 10 + 50);
  });

  it('keeps a CR at a chunk end for the byte after it', () => {
    const splitter = new SseEventSplitter();
    expect(splitter.push(Buffer.from('data: a\r\n\r'))).toEqual([]);
    expect(splitter.push(Buffer.from('\ndata: b')).map(String)).toEqual(['data: a\r\n\r\n']);
    expect(splitter.push(Buffer.from('ccc'))).toEqual([]);
    expect(splitter.flush()?.toString()).toBe('data: bccc');
  });
});
