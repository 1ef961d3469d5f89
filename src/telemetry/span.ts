export type SpanKind = 'internal' | 'server' | 'client';
export type AttributeValue = string | number | boolean | readonly string[];

/**
 * One recorded span (an OpenTelemetry SDK span, see otlp-pipeline.ts). Attributes are metadata only: the code that
 * sets them never passes prompt or completion text, key material or upstream URLs with credentials.
 */
export interface Span {
  readonly traceId: string;
  readonly spanId: string;
  /** The caller's `tracestate`, passed on with the trace. */
  readonly traceState: string | null;
  /** Sets an attribute; null and undefined leave it unset. */
  set(key: string, value: AttributeValue | null | undefined): this;
  /** Marks the span failed with `error.type` (a short class such as `timeout` or an error code, never a message). */
  fail(errorType: string): this;
  /** Ends the span once; later calls do nothing. */
  end(): void;
}
