import type { AnswerFacts } from '../ir/answer-facts.js';
import type { OtelPipeline } from './otel-pipeline.js';
import type { Span, SpanKind } from './span.js';
import { formatTraceparent, type TraceParent } from './trace-context.js';

/** What the meter knew of a request when it settled it: the access log's and the server span's figures. */
export interface MeteredRequest {
  keyId: string;
  accountId: string;
  model: string | null;
  /** The channel that answered (or was tried last). */
  channelId: string | null;
  /** The usage-log protocol label (`openai-chat`, `anthropic-messages`, …). */
  protocol: string;
  status: number;
  errorCode: string | null;
  inputTokens: number;
  outputTokens: number;
  costNano: bigint;
  latencyMs: number;
  ttfbMs: number | null;
  attempts: number;
  stream: boolean;
  /** Reads the answering model and finish reasons (parses the answer's closing event): call only for a recorded span. */
  answer: (() => AnswerFacts) | null;
}

/** Where a finished observation goes (the Telemetry service: server span, metrics, access log). */
export interface ObservationOwner {
  complete(observation: RequestObservation, metered: MeteredRequest | null, responseStatus: number): void;
}

/** After the caller's connection closed, how long a settlement still running is waited for before logging without it. */
const METER_GRACE_MS = 60_000;

/**
 * One API request as observability follows it, from the listener to the later of two ends: the response closed
 * and, when a meter took the request, the meter's settlement. It holds the caller's trace context and the request's
 * SERVER span (when the trace is recorded), the spans under it, and the W3C headers each upstream attempt sends.
 */
export class RequestObservation {
  /** The gateway error code the request was answered with, when the listener rendered one. */
  errorCode: string | null = null;
  #meterPending = false;
  #metered: MeteredRequest | null = null;
  #responseStatus: number | null = null;
  #done = false;

  constructor(
    private readonly owner: ObservationOwner,
    /** The OTLP pipeline (metrics, spans); null when no OTLP endpoint is configured. */
    readonly pipeline: OtelPipeline | null,
    readonly requestId: string,
    readonly method: string,
    readonly path: string,
    /** `performance.now()` when the request arrived. */
    readonly startedAt: number,
    /** The caller's `traceparent`, when it sent a valid one. */
    readonly caller: TraceParent | null,
    readonly traceState: string | null,
    /** The request's SERVER span; null when the trace is not recorded. */
    readonly serverSpan: Span | null,
  ) {}

  /** The trace the request belongs to: the recorded one, else the caller's; null when neither exists. */
  get traceId(): string | null {
    return this.serverSpan?.traceId ?? this.caller?.traceId ?? null;
  }

  /** A span under the request's SERVER span; null when the trace is not recorded. */
  startSpan(name: string, kind: SpanKind = 'internal'): Span | null {
    return this.serverSpan === null || this.pipeline === null ? null : this.pipeline.startChild(this.serverSpan, name, kind);
  }

  /**
   * The trace headers one upstream attempt sends: a `traceparent` naming the attempt's CLIENT span when the trace is
   * recorded, else the caller's own `traceparent` passed on unchanged; null when there is no trace to continue.
   */
  upstreamHeaders(attemptSpan: Span | null): Record<string, string> | null {
    let traceparent: string;
    if (attemptSpan !== null) traceparent = formatTraceparent(attemptSpan.traceId, attemptSpan.spanId, true);
    else if (this.caller !== null) traceparent = `00-${this.caller.traceId}-${this.caller.spanId}-${this.caller.flags}`;
    else return null;
    return this.traceState === null ? { traceparent } : { traceparent, tracestate: this.traceState };
  }

  /** A meter took the request: the observation ends only once it has settled. */
  meterStarted(): void {
    this.#meterPending = true;
  }

  meterFinished(metered: MeteredRequest): void {
    this.#metered = metered;
    this.#meterPending = false;
    if (this.#responseStatus !== null) this.#complete();
  }

  /** The response closed (sent in full or cut off) with this status. */
  responseClosed(status: number): void {
    if (this.#responseStatus !== null) return;
    this.#responseStatus = status;
    if (!this.#meterPending) {
      this.#complete();
      return;
    }
    // The relay settles a request whose caller left right after noticing it; this bounds a settlement that never comes.
    setTimeout(() => this.#complete(), METER_GRACE_MS).unref();
  }

  #complete(): void {
    if (this.#done) return;
    this.#done = true;
    this.owner.complete(this, this.#metered, this.#responseStatus ?? 0);
  }
}
