import type { OtlpConfig, TraceSampler } from '../config/telemetry-config.js';
import type { Logger } from '../shared/logger.js';
import { DURATION_BUCKETS, TOKEN_BUCKETS } from './gen-ai-names.js';
import { Histogram } from './histogram.js';
import type { MetricAttributes, OtelPipeline } from './otel-pipeline.js';
import { encodeHistograms, encodeSpans, type ExportSource } from './otlp-json.js';
import { OtlpSender } from './otlp-sender.js';
import { nowMs, Span, type AttributeValue, type SpanKind, type SpanSink } from './span.js';
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

/**
 * Spans batched into a bounded queue (full: new spans are dropped and counted) and sent when a batch is full or
 * the schedule delay has passed; the GenAI histograms sent every metric interval; both sent once more on shutdown.
 * One export request is in flight per signal at a time.
 */
class OtlpPipeline implements OtelPipeline, SpanSink {
  readonly #queue: Span[] = [];
  #dropped = 0;
  #timer: NodeJS.Timeout | null = null;
  #exporting: Promise<void> | null = null;
  #metricsExport: Promise<void> | null = null;
  readonly #metricTimer: NodeJS.Timeout;
  readonly #startedMs = nowMs();
  readonly #spans: OtlpSender;
  readonly #metrics: OtlpSender;
  readonly #clientDuration = new Histogram('gen_ai.client.operation.duration', 's', 'Duration of one upstream GenAI call (one attempt)', DURATION_BUCKETS);
  readonly #clientTokens = new Histogram('gen_ai.client.token.usage', '{token}', 'Tokens used by an upstream GenAI call', TOKEN_BUCKETS);
  readonly #serverDuration = new Histogram('gen_ai.server.request.duration', 's', 'Duration of a GenAI request served by the gateway', DURATION_BUCKETS);
  readonly #timeToFirstToken = new Histogram('gen_ai.server.time_to_first_token', 's', 'Time until the first byte of the answer reached the caller', DURATION_BUCKETS);
  #closed = false;

  constructor(
    private readonly config: OtlpConfig,
    private readonly source: ExportSource,
    logger: Logger,
  ) {
    this.#spans = new OtlpSender(config.tracesUrl, config.headers, config.timeoutMs, logger, 'traces');
    this.#metrics = new OtlpSender(config.metricsUrl, config.headers, config.timeoutMs, logger, 'metrics');
    this.#metricTimer = setInterval(() => this.#exportMetrics(), config.metricIntervalMs);
    this.#metricTimer.unref();
  }

  /** Spans dropped because the queue was full. */
  get dropped(): number {
    return this.#dropped;
  }

  startServerSpan(name: string, caller: TraceParent | null, traceState: string | null, attributes: Record<string, AttributeValue>): Span | null {
    const traceId = caller?.traceId ?? newTraceId();
    if (!sampled(this.config.sampler, caller, traceId)) return null;
    const span = new Span(this, name, 'server', traceId, newSpanId(), caller?.spanId ?? null, traceState, nowMs());
    Object.assign(span.attributes, attributes);
    return span;
  }

  startChild(parent: Span, name: string, kind: SpanKind): Span {
    return new Span(this, name, kind, parent.traceId, newSpanId(), parent.spanId, parent.traceState, nowMs());
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

  ended(span: Span): void {
    if (this.#queue.length >= this.config.maxQueueSize) {
      this.#dropped += 1;
      return;
    }
    this.#queue.push(span);
    if (this.#closed) return;
    if (this.#queue.length >= this.config.maxExportBatchSize) this.#exportSpans();
    else if (this.#timer === null) {
      this.#timer = setTimeout(() => this.#exportSpans(), this.config.scheduleDelayMs);
      this.#timer.unref();
    }
  }

  /** Sends batches until the queue is below a batch; a rest waits for the next delay. */
  #exportSpans(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#exporting !== null || this.#queue.length === 0) return;
    this.#exporting = (async () => {
      do {
        const batch = this.#queue.splice(0, this.config.maxExportBatchSize);
        await this.#spans.send(encodeSpans(this.source, batch));
      } while (this.#queue.length >= this.config.maxExportBatchSize || (this.#closed && this.#queue.length > 0));
    })().finally(() => {
      this.#exporting = null;
      if (this.#queue.length > 0 && !this.#closed && this.#timer === null) {
        this.#timer = setTimeout(() => this.#exportSpans(), this.config.scheduleDelayMs);
        this.#timer.unref();
      }
    });
  }

  #exportMetrics(): Promise<void> {
    if (this.#metricsExport !== null) return this.#metricsExport;
    const body = encodeHistograms(this.source, [this.#clientDuration, this.#clientTokens, this.#serverDuration, this.#timeToFirstToken], this.#startedMs, nowMs());
    if (body === null) return Promise.resolve();
    this.#metricsExport = this.#metrics.send(body).then(() => undefined).finally(() => {
      this.#metricsExport = null;
    });
    return this.#metricsExport;
  }

  /** Sends the queued spans and the metrics once more; gives up after the export timeout so shutdown is bounded. */
  async shutdown(): Promise<void> {
    if (this.#closed) return;
    clearInterval(this.#metricTimer);
    const flushed = (async () => {
      await this.#exporting;
      this.#closed = true;
      this.#exportSpans();
      await Promise.all([this.#exporting, this.#metricsExport?.then(() => this.#exportMetrics()) ?? this.#exportMetrics()]);
    })();
    let deadline: NodeJS.Timeout | undefined;
    await Promise.race([flushed, new Promise<void>((resolve) => {
      deadline = setTimeout(resolve, this.config.timeoutMs);
    })]);
    clearTimeout(deadline);
    this.#closed = true;
  }
}

/** Starts the OTLP pipeline: the module loaded only when an OTLP endpoint is configured. */
export function startOtlpPipeline(config: OtlpConfig, logger: Logger, scope: { name: string }): OtelPipeline {
  const source: ExportSource = {
    resource: { 'telemetry.sdk.language': 'nodejs', 'telemetry.sdk.name': scope.name, ...config.resourceAttributes, 'service.name': config.serviceName },
    scopeName: scope.name,
  };
  return new OtlpPipeline(config, source, logger);
}
