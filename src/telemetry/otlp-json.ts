import type { Histogram } from './histogram.js';
import type { AttributeValue, Span, SpanKind } from './span.js';

/** OTLP's JSON form of an attribute value (proto3 JSON mapping: 64-bit integers as decimal strings). */
type AnyValue =
  | { stringValue: string }
  | { boolValue: boolean }
  | { intValue: string }
  | { doubleValue: number }
  | { arrayValue: { values: AnyValue[] } };

interface KeyValue {
  key: string;
  value: AnyValue;
}

/** What every export names as its source: the resource (service.name …) and the instrumentation scope. */
export interface ExportSource {
  resource: Record<string, string>;
  scopeName: string;
}

function anyValue(value: AttributeValue): AnyValue {
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  if (typeof value === 'number') return Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value };
  return { arrayValue: { values: value.map((entry) => ({ stringValue: entry })) } };
}

export function keyValues(attributes: Readonly<Record<string, AttributeValue>>): KeyValue[] {
  return Object.keys(attributes).map((key) => ({ key, value: anyValue(attributes[key] as AttributeValue) }));
}

/** Milliseconds since the epoch (fractional) as OTLP's nanoseconds, a decimal string (beyond a double's precision). */
export function unixNanos(milliseconds: number): string {
  const whole = Math.floor(milliseconds);
  const nanos = Math.min(999_999, Math.round((milliseconds - whole) * 1e6));
  return (BigInt(whole) * 1_000_000n + BigInt(nanos)).toString();
}

const SPAN_KINDS: Readonly<Record<SpanKind, number>> = { internal: 1, server: 2, client: 3 };
const STATUS_CODES = { unset: 0, ok: 1, error: 2 } as const;

function resourceOf(source: ExportSource): { attributes: KeyValue[] } {
  return { attributes: keyValues(source.resource) };
}

function scopeOf(source: ExportSource): { name: string } {
  return { name: source.scopeName };
}

/** An ExportTraceServiceRequest in OTLP/JSON (ids as lowercase hex, as the JSON encoding requires). */
export function encodeSpans(source: ExportSource, spans: readonly Span[]): string {
  return JSON.stringify({
    resourceSpans: [{
      resource: resourceOf(source),
      scopeSpans: [{
        scope: scopeOf(source),
        spans: spans.map((span) => ({
          traceId: span.traceId,
          spanId: span.spanId,
          ...(span.parentSpanId === null ? {} : { parentSpanId: span.parentSpanId }),
          ...(span.traceState === null ? {} : { traceState: span.traceState }),
          name: span.name,
          kind: SPAN_KINDS[span.kind],
          startTimeUnixNano: unixNanos(span.startMs),
          endTimeUnixNano: unixNanos(span.endMs),
          attributes: keyValues(span.attributes),
          status: { code: STATUS_CODES[span.status] },
        })),
      }],
    }],
  });
}

/** Cumulative temporality (AGGREGATION_TEMPORALITY_CUMULATIVE). */
const CUMULATIVE = 2;

/** An ExportMetricsServiceRequest in OTLP/JSON with the histograms that have data points. */
export function encodeHistograms(source: ExportSource, histograms: readonly Histogram[], startMs: number, nowMs: number): string | null {
  const metrics = histograms.filter((histogram) => histogram.points.size > 0).map((histogram) => ({
    name: histogram.name,
    unit: histogram.unit,
    description: histogram.description,
    histogram: {
      aggregationTemporality: CUMULATIVE,
      dataPoints: [...histogram.points.values()].map((point) => ({
        attributes: keyValues(point.attributes),
        startTimeUnixNano: unixNanos(startMs),
        timeUnixNano: unixNanos(nowMs),
        count: String(point.count),
        sum: point.sum,
        min: point.min,
        max: point.max,
        bucketCounts: point.bucketCounts.map(String),
        explicitBounds: histogram.bounds,
      })),
    },
  }));
  if (metrics.length === 0) return null;
  return JSON.stringify({ resourceMetrics: [{ resource: resourceOf(source), scopeMetrics: [{ scope: scopeOf(source), metrics }] }] });
}
