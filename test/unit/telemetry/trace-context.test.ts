import { describe, expect, it } from 'vitest';
import { formatTraceparent, parseTraceparent, readTracestate } from '../../../src/telemetry/trace-context.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

describe('parseTraceparent', () => {
  it('reads a version-00 header with its sampled flag', () => {
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-01`)).toEqual({ traceId: TRACE, spanId: SPAN, sampled: true, flags: '01' });
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-00`)).toMatchObject({ sampled: false, flags: '00' });
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-03`)).toMatchObject({ sampled: true });
  });

  it('reads a later version by its first four fields', () => {
    expect(parseTraceparent(`01-${TRACE}-${SPAN}-01-what-comes-next`)).toMatchObject({ traceId: TRACE, spanId: SPAN });
    expect(parseTraceparent(`01-${TRACE}-${SPAN}-01`)).toMatchObject({ traceId: TRACE });
  });

  it.each([
    ['absent', undefined],
    ['repeated', [`00-${TRACE}-${SPAN}-01`, `00-${TRACE}-${SPAN}-01`]],
    ['version ff', `ff-${TRACE}-${SPAN}-01`],
    ['version 00 with a tail', `00-${TRACE}-${SPAN}-01-extra`],
    ['later version tail without dash', `01-${TRACE}-${SPAN}-01x`],
    ['uppercase hex', `00-${TRACE.toUpperCase()}-${SPAN}-01`],
    ['zero trace id', `00-${'0'.repeat(32)}-${SPAN}-01`],
    ['zero span id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['short trace id', `00-${TRACE.slice(1)}-${SPAN}-01`],
    ['bad separator', `00_${TRACE}-${SPAN}-01`],
    ['non-hex flags', `00-${TRACE}-${SPAN}-zz`],
  ])('refuses %s', (_name, header) => {
    expect(parseTraceparent(header)).toBeNull();
  });

  it('round-trips what it formats', () => {
    expect(parseTraceparent(formatTraceparent(TRACE, SPAN, true))).toMatchObject({ traceId: TRACE, spanId: SPAN, sampled: true });
    expect(formatTraceparent(TRACE, SPAN, false)).toBe(`00-${TRACE}-${SPAN}-00`);
  });
});

describe('readTracestate', () => {
  it('passes a plausible list on and joins repeated headers', () => {
    expect(readTracestate(' congo=t61rcWkgMzE,rojo=00f067aa0ba902b7 ')).toBe('congo=t61rcWkgMzE,rojo=00f067aa0ba902b7');
    expect(readTracestate(['a=1', 'b=2'])).toBe('a=1,b=2');
  });

  it('drops an empty, oversized or unprintable one', () => {
    expect(readTracestate(undefined)).toBeNull();
    expect(readTracestate('  ')).toBeNull();
    expect(readTracestate(`a=${'x'.repeat(600)}`)).toBeNull();
    expect(readTracestate('a=1\u0000')).toBeNull();
  });
});
