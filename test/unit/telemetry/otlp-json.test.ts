import { describe, expect, it } from 'vitest';
import { Histogram, bucketOf } from '../../../src/telemetry/histogram.js';
import { encodeHistograms, encodeSpans, unixNanos } from '../../../src/telemetry/otlp-json.js';
import { Span, type SpanSink } from '../../../src/telemetry/span.js';

const source = { resource: { 'service.name': 'unigate' }, scopeName: 'unigate' };

describe('unixNanos', () => {
  it('keeps sub-millisecond precision beyond what a double holds in nanoseconds', () => {
    expect(unixNanos(1_700_000_000_123.456789)).toMatch(/^1700000000123456\d{3}$/);
    expect(unixNanos(1_700_000_000_000)).toBe('1700000000000000000');
    expect(unixNanos(1.9999999999)).toBe('1999999');
  });
});

describe('encodeSpans', () => {
  it('writes OTLP/JSON: hex ids, kind and status numbers, typed attribute values', () => {
    const ended: Span[] = [];
    const sink: SpanSink = { ended: (span) => ended.push(span) };
    const span = new Span(sink, 'chat gpt-4o', 'client', 'a'.repeat(32), 'b'.repeat(16), 'c'.repeat(16), 'k=v', 1000.5);
    span.set('gen_ai.request.model', 'gpt-4o').set('gen_ai.usage.input_tokens', 12).set('ratio', 0.5).set('stream', true).set('reasons', ['stop']).set('absent', null);
    span.fail('server_error');
    span.end();
    span.end();
    expect(ended).toHaveLength(1);
    const payload = JSON.parse(encodeSpans(source, ended)) as { resourceSpans: Array<{ resource: unknown; scopeSpans: Array<{ scope: unknown; spans: Array<Record<string, unknown>> }> }> };
    const [resourceSpans] = payload.resourceSpans;
    expect(resourceSpans?.resource).toEqual({ attributes: [{ key: 'service.name', value: { stringValue: 'unigate' } }] });
    const encoded = resourceSpans?.scopeSpans[0]?.spans[0];
    expect(encoded).toMatchObject({
      traceId: 'a'.repeat(32),
      spanId: 'b'.repeat(16),
      parentSpanId: 'c'.repeat(16),
      traceState: 'k=v',
      name: 'chat gpt-4o',
      kind: 3,
      startTimeUnixNano: '1000500000',
      status: { code: 2 },
    });
    expect(encoded?.attributes).toEqual([
      { key: 'gen_ai.request.model', value: { stringValue: 'gpt-4o' } },
      { key: 'gen_ai.usage.input_tokens', value: { intValue: '12' } },
      { key: 'ratio', value: { doubleValue: 0.5 } },
      { key: 'stream', value: { boolValue: true } },
      { key: 'reasons', value: { arrayValue: { values: [{ stringValue: 'stop' }] } } },
      { key: 'error.type', value: { stringValue: 'server_error' } },
    ]);
  });
});

describe('histograms', () => {
  it('counts each value in the first bucket whose bound it does not exceed', () => {
    const bounds = [1, 4, 16];
    expect([0, 1, 1.5, 4, 5, 16, 17, 1e9].map((value) => bucketOf(bounds, value))).toEqual([0, 0, 1, 1, 2, 2, 3, 3]);
  });

  it('keeps one cumulative point per attribute set, whatever the key order', () => {
    const histogram = new Histogram('gen_ai.client.token.usage', '{token}', 'tokens', [1, 4, 16]);
    histogram.record(3, { a: '1', b: '2' });
    histogram.record(20, { b: '2', a: '1' });
    histogram.record(1, { a: '9' });
    histogram.record(-1, { a: '9' });
    histogram.record(Number.NaN, { a: '9' });
    expect(histogram.points.size).toBe(2);
    const payload = JSON.parse(encodeHistograms(source, [histogram], 0, 1) as string) as { resourceMetrics: Array<{ scopeMetrics: Array<{ metrics: Array<{ histogram: { aggregationTemporality: number; dataPoints: Array<Record<string, unknown>> } }> }> }> };
    const metric = payload.resourceMetrics[0]?.scopeMetrics[0]?.metrics[0];
    expect(metric?.histogram.aggregationTemporality).toBe(2);
    expect(metric?.histogram.dataPoints[0]).toMatchObject({ count: '2', sum: 23, min: 3, max: 20, bucketCounts: ['0', '1', '0', '1'], explicitBounds: [1, 4, 16] });
    expect(metric?.histogram.dataPoints[1]).toMatchObject({ count: '1', bucketCounts: ['1', '0', '0', '0'] });
  });

  it('exports nothing before the first measurement', () => {
    expect(encodeHistograms(source, [new Histogram('x', 's', 'x', [1])], 0, 1)).toBeNull();
  });
});
