export type SpanKind = 'internal' | 'server' | 'client';
export type AttributeValue = string | number | boolean | readonly string[];

/** Where an ended span goes (the exporter's queue). */
export interface SpanSink {
  ended(span: Span): void;
}

/** Wall-clock time in milliseconds with sub-millisecond precision (monotonic within the process). */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

/**
 * One recorded span. Attributes are metadata only: the code that sets them never passes prompt or completion
 * text, key material or upstream URLs with credentials.
 */
export class Span {
  readonly attributes: Record<string, AttributeValue> = {};
  status: 'unset' | 'ok' | 'error' = 'unset';
  endMs = 0;

  constructor(
    private readonly sink: SpanSink,
    readonly name: string,
    readonly kind: SpanKind,
    readonly traceId: string,
    readonly spanId: string,
    readonly parentSpanId: string | null,
    readonly traceState: string | null,
    readonly startMs: number,
  ) {}

  get ended(): boolean {
    return this.endMs !== 0;
  }

  set(key: string, value: AttributeValue | null | undefined): this {
    if (value !== null && value !== undefined) this.attributes[key] = value;
    return this;
  }

  /** Marks the span failed with `error.type` (a short class such as `timeout` or an error code, never a message). */
  fail(errorType: string): this {
    this.status = 'error';
    this.attributes['error.type'] = errorType;
    return this;
  }

  /** Ends the span once; later calls do nothing. */
  end(): void {
    if (this.endMs !== 0) return;
    this.endMs = nowMs();
    this.sink.ended(this);
  }
}
