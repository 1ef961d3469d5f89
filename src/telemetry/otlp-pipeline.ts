import { createTraceState, ROOT_CONTEXT, SpanKind as OtelSpanKind, SpanStatusCode, trace, TraceFlags, type Attributes, type Context, type Histogram, type Span as OtelSpan, type Tracer } from '@opentelemetry/api';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader, type PushMetricExporter, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { BatchSpanProcessor, SamplingDecision, TracerProvider, type ReadableSpan, type Sampler, type SamplingResult, type SpanExporter } from '@opentelemetry/sdk-trace';
import type { OtlpConfig, TraceSampler } from '../config/telemetry-config.js';
import { describeError, type Logger } from '../shared/logger.js';
import { DURATION_BUCKETS, TOKEN_BUCKETS } from './gen-ai-names.js';
import type { MetricAttributes, OtelPipeline } from './otel-pipeline.js';
import type { AttributeValue, Span, SpanKind } from './span.js';
import type { TraceParent } from './trace-context.js';
import { newSpanId, newTraceId } from './trace-ids.js';

/** Whether a trace is recorded: the caller's sampled flag for the parent-based samplers, else the root rule. */
export function sampled(sampler: TraceSampler, caller: TraceParent | null, traceId: string): boolean {
  switch (sampler.kind) {
    case 'always_on':
      return true;
    case 'always_off':
      return false;
    case 'traceidratio':
      return withinRatio(traceId, sampler.ratio);
    case 'parentbased_always_on':
      return caller === null ? true : caller.sampled;
    case 'parentbased_always_off':
      return caller === null ? false : caller.sampled;
    case 'parentbased_traceidratio':
      return caller === null ? withinRatio(traceId, sampler.ratio) : caller.sampled;
    default: {
      const unknown: never = sampler;
      throw new Error(`unknown sampler ${String(unknown)}`);
    }
  }
}

/** The trace id's last 52 bits as a fraction of 2^52, below the ratio: the same trace gets the same decision everywhere. */
function withinRatio(traceId: string, ratio: number): boolean {
  if (ratio >= 1) return true;
  return Number.parseInt(traceId.slice(-13), 16) / 2 ** 52 < ratio;
}

const RECORD: SamplingResult = { decision: SamplingDecision.RECORD_AND_SAMPLED };
const DROP: SamplingResult = { decision: SamplingDecision.NOT_RECORD };

/**
 * The SDK's sampler for the configured rule. A span under one of the gateway's own spans follows it; a server span
 * decides by the rule, with the caller's context (a remote parent) as the parent-based samplers' parent.
 */
class ConfiguredSampler implements Sampler {
  constructor(private readonly rule: TraceSampler) {}

  shouldSample(context: Context, traceId: string): SamplingResult {
    const parent = trace.getSpanContext(context);
    const parentSampled = parent !== undefined && (parent.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED;
    if (parent !== undefined && parent.isRemote !== true) return parentSampled ? RECORD : DROP;
    const caller = parent === undefined ? null : { traceId: parent.traceId, spanId: parent.spanId, sampled: parentSampled, flags: parentSampled ? '01' : '00' };
    return sampled(this.rule, caller, traceId) ? RECORD : DROP;
  }

  toString(): string {
    return `ConfiguredSampler{${this.rule.kind}}`;
  }
}

/** Trace and span ids from the process's CSPRNG pool (the SDK's default draws them from Math.random). */
const ID_GENERATOR = { generateTraceId: newTraceId, generateSpanId: newSpanId };

const SPAN_KINDS: Readonly<Record<SpanKind, OtelSpanKind>> = { internal: OtelSpanKind.INTERNAL, server: OtelSpanKind.SERVER, client: OtelSpanKind.CLIENT };

/** The gateway's view of one recording SDK span. */
class SdkSpan implements Span {
  readonly traceId: string;
  readonly spanId: string;

  constructor(
    readonly span: OtelSpan,
    readonly traceState: string | null,
  ) {
    const context = span.spanContext();
    this.traceId = context.traceId;
    this.spanId = context.spanId;
  }

  set(key: string, value: AttributeValue | null | undefined): this {
    if (value !== null && value !== undefined) this.span.setAttribute(key, value as Attributes[string]);
    return this;
  }

  fail(errorType: string): this {
    this.span.setStatus({ code: SpanStatusCode.ERROR });
    this.span.setAttribute('error.type', errorType);
    return this;
  }

  end(): void {
    this.span.end();
  }
}

/** A failing collector is reported at most this often per signal. */
const WARN_INTERVAL_MS = 60_000;

/**
 * Reports exports the SDK gave up on (after its own retries of 429, 502-504 and lost connections): by status or error
 * class only, never with the headers (they may carry a collector key), and at most once a minute per signal.
 * Telemetry never holds the gateway back: the batch is dropped.
 */
class FailureReport {
  #lastWarning = Number.NEGATIVE_INFINITY;
  failures = 0;

  constructor(
    private readonly logger: Logger,
    private readonly signal: string,
  ) {}

  failed(error: Error | undefined): void {
    this.failures += 1;
    const now = performance.now();
    if (now - this.#lastWarning < WARN_INTERVAL_MS) return;
    this.#lastWarning = now;
    const status = (error as { code?: unknown } | undefined)?.code;
    this.logger.warn('OTLP export failed; the batch was dropped', { signal: this.signal, failures: this.failures, ...(typeof status === 'number' ? { status } : describeError(error)) });
  }
}

const SUCCESS = 0;

/** The SDK's span exporter, with failed exports reported. */
function reportingSpanExporter(exporter: SpanExporter, report: FailureReport): SpanExporter {
  return {
    export: (spans: ReadableSpan[], done) => exporter.export(spans, (result) => {
      if (result.code !== SUCCESS) report.failed(result.error);
      done(result);
    }),
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}

/** The SDK's metric exporter (cumulative temporality, its default), with failed exports reported. */
function reportingMetricExporter(exporter: OTLPMetricExporter, report: FailureReport): PushMetricExporter {
  return {
    export: (metrics: ResourceMetrics, done) => exporter.export(metrics, (result) => {
      if (result.code !== SUCCESS) report.failed(result.error);
      done(result);
    }),
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush(),
    selectAggregationTemporality: (type) => exporter.selectAggregationTemporality(type),
    selectAggregation: (type) => exporter.selectAggregation(type),
  };
}

/** Attribute sets kept per histogram at most; further ones are folded into the SDK's overflow set. */
const MAX_SERIES = 2000;

/**
 * The OpenTelemetry SDK: spans through a batch processor (bounded queue, sent when a batch is full or the schedule
 * delay has passed, dropped when the queue is full), the GenAI histograms through a periodic reader, both over
 * OTLP/HTTP with JSON bodies and both flushed once more on shutdown.
 */
class SdkPipeline implements OtelPipeline {
  readonly #tracer: Tracer;
  readonly #clientDuration: Histogram;
  readonly #clientTokens: Histogram;
  readonly #serverDuration: Histogram;
  readonly #timeToFirstToken: Histogram;
  #closed: Promise<void> | null = null;

  constructor(
    private readonly config: OtlpConfig,
    private readonly tracerProvider: TracerProvider,
    private readonly meterProvider: MeterProvider,
    scopeName: string,
  ) {
    this.#tracer = tracerProvider.getTracer(scopeName);
    const meter = meterProvider.getMeter(scopeName);
    this.#clientDuration = meter.createHistogram('gen_ai.client.operation.duration', { unit: 's', description: 'Duration of one upstream GenAI call (one attempt)', advice: { explicitBucketBoundaries: [...DURATION_BUCKETS] } });
    this.#clientTokens = meter.createHistogram('gen_ai.client.token.usage', { unit: '{token}', description: 'Tokens used by an upstream GenAI call', advice: { explicitBucketBoundaries: [...TOKEN_BUCKETS] } });
    this.#serverDuration = meter.createHistogram('gen_ai.server.request.duration', { unit: 's', description: 'Duration of a GenAI request served by the gateway', advice: { explicitBucketBoundaries: [...DURATION_BUCKETS] } });
    this.#timeToFirstToken = meter.createHistogram('gen_ai.server.time_to_first_token', { unit: 's', description: 'Time until the first byte of the answer reached the caller', advice: { explicitBucketBoundaries: [...DURATION_BUCKETS] } });
  }

  startServerSpan(name: string, caller: TraceParent | null, traceState: string | null, attributes: Record<string, AttributeValue>): Span | null {
    const parent = caller === null
      ? ROOT_CONTEXT
      : trace.setSpanContext(ROOT_CONTEXT, {
        traceId: caller.traceId,
        spanId: caller.spanId,
        traceFlags: caller.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
        isRemote: true,
        ...(traceState === null ? {} : { traceState: createTraceState(traceState) }),
      });
    const span = this.#tracer.startSpan(name, { kind: OtelSpanKind.SERVER, attributes: attributes as Attributes }, parent);
    if (!span.isRecording()) return null;
    return new SdkSpan(span, traceState);
  }

  startChild(parent: Span, name: string, kind: SpanKind): Span {
    const span = this.#tracer.startSpan(name, { kind: SPAN_KINDS[kind] }, trace.setSpan(ROOT_CONTEXT, (parent as SdkSpan).span));
    return new SdkSpan(span, parent.traceState);
  }

  recordClientDuration(seconds: number, attributes: MetricAttributes): void {
    this.#clientDuration.record(seconds, attributes);
  }

  recordClientTokens(tokens: number, attributes: MetricAttributes): void {
    this.#clientTokens.record(tokens, attributes);
  }

  recordServerDuration(seconds: number, attributes: MetricAttributes): void {
    this.#serverDuration.record(seconds, attributes);
  }

  recordTimeToFirstToken(seconds: number, attributes: MetricAttributes): void {
    this.#timeToFirstToken.record(seconds, attributes);
  }

  /** Sends the queued spans and the metrics once more; gives up after the export timeout so shutdown is bounded. */
  shutdown(): Promise<void> {
    this.#closed ??= (async () => {
      let deadline: NodeJS.Timeout | undefined;
      const flushed = Promise.allSettled([this.tracerProvider.shutdown(), this.meterProvider.shutdown()]);
      await Promise.race([flushed, new Promise<void>((resolve) => {
        deadline = setTimeout(resolve, this.config.timeoutMs);
      })]);
      clearTimeout(deadline);
    })();
    return this.#closed;
  }
}

/** Starts the OTLP pipeline: the module loaded only when an OTLP endpoint is configured. */
export function startOtlpPipeline(config: OtlpConfig, logger: Logger, scope: { name: string }): OtelPipeline {
  const resource = defaultResource().merge(resourceFromAttributes({ ...config.resourceAttributes, 'service.name': config.serviceName }));
  const spanExporter = new OTLPTraceExporter({ url: config.tracesUrl, headers: config.headers, timeoutMillis: config.timeoutMs });
  const tracerProvider = new TracerProvider({
    resource,
    sampler: new ConfiguredSampler(config.sampler),
    idGenerator: ID_GENERATOR,
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: reportingSpanExporter(spanExporter, new FailureReport(logger, 'traces')),
        maxQueueSize: config.maxQueueSize,
        maxExportBatchSize: Math.min(config.maxExportBatchSize, config.maxQueueSize),
        scheduledDelayMillis: config.scheduleDelayMs,
        exportTimeoutMillis: config.timeoutMs,
      }),
    ],
  });
  const metricExporter = new OTLPMetricExporter({ url: config.metricsUrl, headers: config.headers, timeoutMillis: config.timeoutMs });
  const meterProvider = new MeterProvider({
    resource,
    readers: [
      new PeriodicExportingMetricReader({
        exporter: reportingMetricExporter(metricExporter, new FailureReport(logger, 'metrics')),
        exportIntervalMillis: config.metricIntervalMs,
        // The reader refuses a timeout longer than its interval.
        exportTimeoutMillis: Math.min(config.timeoutMs, config.metricIntervalMs),
        cardinalityLimits: { histogram: MAX_SERIES },
      }),
    ],
  });
  return new SdkPipeline(config, tracerProvider, meterProvider, scope.name);
}
