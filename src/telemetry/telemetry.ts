import type { IncomingHttpHeaders } from 'node:http';
import { nanoToDecimalString } from '../billing/money.js';
import type { TelemetryConfig } from '../config/telemetry-config.js';
import type { AnswerFacts } from '../ir/answer-facts.js';
import type { Logger } from '../shared/logger.js';
import { operationNameOf } from './gen-ai-names.js';
import type { OtelPipeline } from './otel-pipeline.js';
import { RequestObservation, type MeteredRequest, type ObservationOwner } from './request-observation.js';
import type { Span } from './span.js';
import { parseTraceparent, readTracestate } from './trace-context.js';

/**
 * The route template of a path (`http.route`), from the API route table that also names the metric labels: a fixed
 * path as is, a patterned one as its template (`/v1/models/{model}`), the admin API as `/admin/*`; null for anything
 * else, so junk cannot add span names. Handed in by the composition root: telemetry sits below the HTTP layer.
 */
export type HttpRouteOf = (path: string) => string | null;

/** What the listener knows of a request when it arrives. */
export interface ArrivingRequest {
  requestId: string;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  clientIp: string;
  startedAt: number;
}

/**
 * Observability of API requests: the per-request access log line, and, when an OTLP endpoint is configured, traces
 * (a SERVER span per request with `admission`, one CLIENT span per upstream attempt and `settle` under it) and the
 * GenAI metrics. With neither the access log nor OTLP, and no caller trace context, a request costs one check here.
 */
export class Telemetry implements ObservationOwner {
  constructor(
    readonly pipeline: OtelPipeline | null,
    readonly accessLog: boolean,
    private readonly logger: Logger,
    private readonly httpRouteOf: HttpRouteOf,
  ) {}

  /** The start of an API request: its observation (the listener puts it on the request's context), or null when nothing follows it. */
  begin(request: ArrivingRequest): RequestObservation | null {
    const traceparent = request.headers.traceparent;
    if (this.pipeline === null && !this.accessLog && traceparent === undefined) return null;
    // Load balancers probe every few seconds: their requests would drown the log and the traces.
    if (request.path === '/healthz' || request.path === '/readyz') return null;
    const caller = traceparent === undefined ? null : parseTraceparent(traceparent);
    const traceState = caller === null ? null : readTracestate(request.headers.tracestate);
    let serverSpan = null;
    if (this.pipeline !== null) {
      const route = this.httpRouteOf(request.path);
      serverSpan = this.pipeline.startServerSpan(route === null ? request.method : `${request.method} ${route}`, caller, traceState, {
        'http.request.method': request.method,
        'url.path': request.path,
        'client.address': request.clientIp,
        'unigate.request_id': request.requestId,
        ...(route === null ? {} : { 'http.route': route }),
      });
    }
    // An invalid traceparent alone (no log, no export) leaves nothing to follow.
    if (!this.accessLog && this.pipeline === null && caller === null) return null;
    return new RequestObservation(this, this.pipeline, request.requestId, request.method, request.path, request.startedAt, caller, traceState, serverSpan);
  }

  complete(observation: RequestObservation, metered: MeteredRequest | null, responseStatus: number): void {
    const status = metered?.status ?? responseStatus;
    const errorCode = metered?.errorCode ?? observation.errorCode;
    const span = observation.serverSpan;
    // Named only for the span and the GenAI metrics, both of which need the OTLP pipeline (a span implies it).
    const operation = metered === null || this.pipeline === null ? null : operationNameOf(metered.protocol);
    if (span !== null) {
      span.set('http.response.status_code', responseStatus);
      if (metered !== null) {
        span
          .set('gen_ai.operation.name', operation)
          .set('gen_ai.request.model', metered.model)
          .set('gen_ai.usage.input_tokens', metered.inputTokens)
          .set('gen_ai.usage.output_tokens', metered.outputTokens)
          .set('unigate.key_id', metered.keyId)
          .set('unigate.account_id', metered.accountId)
          .set('unigate.channel_id', metered.channelId)
          .set('unigate.cost_usd', nanoToDecimalString(metered.costNano))
          .set('unigate.attempts', metered.attempts)
          .set('unigate.stream', metered.stream);
        if (metered.answer !== null) setAnswerFacts(span, metered.answer());
      }
      // A server span is failed by the gateway's own faults (5xx), not by a caller's mistake (4xx).
      if (status >= 500) span.fail(errorCode ?? String(status));
      span.end();
    }
    if (this.pipeline !== null && metered !== null && metered.model !== null) {
      const attributes: Record<string, string> = { 'gen_ai.operation.name': operation as string, 'gen_ai.request.model': metered.model };
      if (status >= 400) attributes['error.type'] = errorCode ?? String(status);
      this.pipeline.recordServerDuration(metered.latencyMs / 1000, attributes);
      if (metered.ttfbMs !== null && metered.stream) this.pipeline.recordTimeToFirstToken(metered.ttfbMs / 1000, attributes);
    }
    if (this.accessLog) this.logger.info('request', accessLogFields(observation, metered, status, errorCode));
  }

  /** Sends what is still queued (spans, metrics); called once on shutdown. */
  async shutdown(): Promise<void> {
    await this.pipeline?.shutdown();
  }
}

/**
 * The access log line's fields: metadata only (no prompt or answer text, no key material, no client address). Each
 * shape is one object literal: spreading one into another costs several times the whole line.
 */
function accessLogFields(observation: RequestObservation, metered: MeteredRequest | null, status: number, errorCode: string | null): Record<string, unknown> {
  if (metered === null) {
    return {
      request_id: observation.requestId,
      trace_id: observation.traceId,
      method: observation.method,
      path: observation.path,
      status,
      error_code: errorCode,
      latency_ms: Math.round(performance.now() - observation.startedAt),
    };
  }
  return {
    request_id: observation.requestId,
    trace_id: observation.traceId,
    method: observation.method,
    path: observation.path,
    status,
    error_code: errorCode,
    latency_ms: metered.latencyMs,
    key_id: metered.keyId,
    account_id: metered.accountId,
    model: metered.model,
    channel: metered.channelId,
    protocol: metered.protocol,
    stream: metered.stream,
    input_tokens: metered.inputTokens,
    output_tokens: metered.outputTokens,
    cost_usd: nanoToDecimalString(metered.costNano),
    ttfb_ms: metered.ttfbMs,
    attempts: metered.attempts,
  };
}

/** `gen_ai.response.model` and `gen_ai.response.finish_reasons` of a span, when the answer reported them. */
export function setAnswerFacts(span: Span, facts: AnswerFacts): void {
  span.set('gen_ai.response.model', facts.model);
  if (facts.finishReasons.length > 0) span.set('gen_ai.response.finish_reasons', facts.finishReasons);
}

/** Builds the service; the OTLP modules are loaded only when an endpoint is configured. */
export async function openTelemetry(config: TelemetryConfig, logger: Logger, httpRouteOf: HttpRouteOf): Promise<Telemetry> {
  if (config.otlp === null) return new Telemetry(null, config.accessLog, logger, httpRouteOf);
  const { startOtlpPipeline } = await import('./otlp-pipeline.js');
  return new Telemetry(startOtlpPipeline(config.otlp, logger, { name: 'unigate' }), config.accessLog, logger, httpRouteOf);
}
