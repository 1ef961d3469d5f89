import type { AttributeValue, Span, SpanKind } from './span.js';
import type { TraceParent } from './trace-context.js';

/** Attributes of one metric measurement: a few bounded labels (operation, provider, model, error type). */
export type MetricAttributes = Readonly<Record<string, string>>;

/**
 * The OpenTelemetry side of the gateway when OTLP export is configured (loaded on demand, see telemetry.ts):
 * sampling, spans, the GenAI histograms, and their export.
 */
export interface OtelPipeline {
  /**
   * The SERVER span of an API request, as a child of the caller's span when it sent one; null when the sampler
   * decides not to record this trace.
   */
  startServerSpan(name: string, caller: TraceParent | null, traceState: string | null, attributes: Record<string, AttributeValue>): Span | null;
  /** A span under `parent` in the same trace. */
  startChild(parent: Span, name: string, kind: SpanKind): Span;
  /** `gen_ai.client.operation.duration` (one upstream attempt, seconds). */
  recordClientDuration(seconds: number, attributes: MetricAttributes): void;
  /** `gen_ai.client.token.usage`, once per token type (`input`, `output`). */
  recordClientTokens(tokens: number, attributes: MetricAttributes): void;
  /** `gen_ai.server.request.duration` (one metered request, seconds). */
  recordServerDuration(seconds: number, attributes: MetricAttributes): void;
  /** `gen_ai.server.time_to_first_token` (seconds). */
  recordTimeToFirstToken(seconds: number, attributes: MetricAttributes): void;
  /** Sends what is queued and stops the timers. */
  shutdown(): Promise<void>;
}
