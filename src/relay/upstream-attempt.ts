import type { AttemptOutcome } from '../metrics/gateway-metrics.js';
import type { UpstreamFailureClass } from '../routing/failure-class.js';
import type { Candidate, RoutePlan } from '../routing/route-plan.js';
import { describeError } from '../shared/logger.js';
import type { RelayDependencies } from './relay-dependencies.js';
import type { AttemptLog } from './attempt-log.js';
import type { AnswerReport } from '../billing/answer-report.js';
import { operationNameOf, providerNameOf } from '../telemetry/gen-ai-names.js';
import type { Span } from '../telemetry/span.js';
import { setAnswerFacts } from '../telemetry/telemetry.js';
import { NO_ANSWER_FACTS } from '../ir/answer-facts.js';

/**
 * One attempt of a request on one channel, from its start to its single verdict. The verdict goes to the
 * channel's breakers (through the ticket), the metrics, the key rotation (a rejected key) and the log; the usage
 * row learns which channels were tried.
 */
export class UpstreamAttempt {
  #tokensOnLog = false;
  /** The attempt's CLIENT span, when the request's trace is recorded. */
  #span: Span | null = null;
  /** The GenAI metric attributes of this attempt, when metrics are exported. */
  #metricAttributes: Record<string, string> | null = null;
  #sentAt = 0;
  #status: number | null = null;
  #verdict = false;

  constructor(
    private readonly dependencies: RelayDependencies,
    readonly candidate: Candidate,
    readonly credential: string,
    private readonly requestId: string,
    private readonly attempts: AttemptLog | null,
  ) {
    const channel = candidate.route.channel;
    attempts?.attempted(channel.id);
    if (candidate.attempt > 1) dependencies.metrics.retries.inc();
  }

  /**
   * The request is about to be sent to `url`: the attempt's CLIENT span starts (when the trace is recorded) and its
   * duration is measured (when metrics are exported). Returns the W3C trace headers to send, if any.
   */
  sending(url: string): Record<string, string> | null {
    const observation = this.attempts?.request.observation ?? null;
    if (observation === null) return null;
    if (observation.pipeline !== null) {
      const { route } = this.candidate;
      const operation = operationNameOf((this.attempts as AttemptLog).request.protocol);
      const server = serverOf(url);
      this.#metricAttributes = {
        'gen_ai.operation.name': operation,
        'gen_ai.provider.name': providerNameOf(route.channel.type),
        'gen_ai.request.model': route.upstreamModel,
        'server.address': server.address,
      };
      this.#sentAt = performance.now();
      this.#span = observation.startSpan(`${operation} ${route.upstreamModel}`, 'client');
      if (this.#span !== null) {
        for (const [key, value] of Object.entries(this.#metricAttributes)) this.#span.set(key, value);
        this.#span
          .set('server.port', server.port)
          .set('unigate.channel_id', route.channel.id)
          .set('unigate.channel_name', route.channel.name)
          .set('unigate.attempt', this.candidate.attempt);
      }
    }
    return observation.upstreamHeaders(this.#span);
  }

  /** The HTTP status the upstream answered with (null: no answer). */
  upstreamStatus(status: number | null): void {
    this.#status = status;
  }

  /** The upstream's response head arrived: the channel-model's time to first byte, for least-latency balancing. */
  answered(): void {
    this.candidate.ticket.answered();
  }

  /** The upstream answered; its channel-model TPM charge is now corrected with the request's real usage. */
  chargeTokens(): void {
    const charge = this.candidate.tokenCharge;
    if (charge === null || this.attempts === null || this.#tokensOnLog) return;
    this.attempts.chargeTokens([{ rule: charge.rule, charged: charge.estimate }], charge.chargedAt);
    this.#tokensOnLog = true;
  }

  /** The answer was relayed; `report`, when the relay has it by now, gives the attempt's span its usage and facts. */
  succeeded(report: AnswerReport | null = null): void {
    this.candidate.ticket.succeeded();
    this.#count('success');
    this.#observed(null, report);
  }

  failed(failureClass: UpstreamFailureClass, retryAfterMs: number | null): void {
    const { route, ticket } = this.candidate;
    const { credentials } = this.dependencies;
    if (failureClass === 'credential') credentials.reportRejected(route.channel, this.credential);
    // A rejected key is the rotation's business while the channel has other keys; with none left, the channel's.
    if (failureClass === 'credential' && credentials.hasUsableKey(route.channel)) ticket.release();
    else ticket.failed({ failureClass, retryAfterMs });
    this.#count('failure');
    this.dependencies.metrics.upstreamErrors.labels(route.channel.name, failureClass).inc();
    this.dependencies.logger.warn('upstream attempt failed', { requestId: this.requestId, channelId: route.channel.id, attempt: this.candidate.attempt, failureClass });
    this.#observed(failureClass);
  }

  /** A failure before anything reached the caller: the next channel tries, and the TPM taken here is given back. */
  failedBeforeAnswer(failureClass: UpstreamFailureClass, retryAfterMs: number | null): void {
    this.failed(failureClass, retryAfterMs);
    this.#refundTokens();
  }

  /** The upstream refused the caller's request (its 4xx): no verdict on the channel. */
  refused(): void {
    this.candidate.ticket.release();
    this.#count('refused');
    this.#observed(this.#status === null ? 'refused' : String(this.#status));
  }

  /** The caller left: no verdict on the channel. */
  aborted(): void {
    this.candidate.ticket.release();
    this.#count('aborted');
    this.#observed('client_closed_request');
  }

  /**
   * Reading the upstream's answer threw: a fault in the gateway's own handling, so no verdict on the channel; the
   * attempt's span ends failed. Does nothing once the attempt has its verdict.
   */
  threw(): void {
    if (this.#verdict) return;
    this.candidate.ticket.release();
    this.#count('error');
    this.#observed('internal_error');
  }

  /** Ends the attempt's span and records its duration (and, on success, its tokens); `errorType` null for success. */
  #observed(errorType: string | null, report: AnswerReport | null = null): void {
    const attributes = this.#metricAttributes;
    if (attributes === null) return;
    this.#metricAttributes = null;
    const pipeline = this.attempts?.request.observation?.pipeline ?? null;
    // A successful answer's report, when the relay has it before the attempt's verdict: its usage is the answer's.
    const usage = errorType === null ? (report?.usage ?? null) : null;
    const span = this.#span;
    if (span !== null) {
      span.set('http.response.status_code', this.#status);
      if (errorType !== null) span.fail(errorType);
      if (usage !== null) span.set('gen_ai.usage.input_tokens', usage.input.total).set('gen_ai.usage.output_tokens', usage.output.total);
      if (errorType === null && this.attempts !== null) setAnswerFacts(span, report?.answer?.() ?? NO_ANSWER_FACTS);
      span.end();
    }
    if (pipeline === null) return;
    pipeline.recordClientDuration((performance.now() - this.#sentAt) / 1000, errorType === null ? attributes : Object.assign({}, attributes, { 'error.type': errorType }));
    if (usage !== null) {
      pipeline.recordClientTokens(usage.input.total, Object.assign({}, attributes, { 'gen_ai.token.type': 'input' }));
      pipeline.recordClientTokens(usage.output.total, Object.assign({}, attributes, { 'gen_ai.token.type': 'output' }));
    }
  }

  #count(outcome: AttemptOutcome): void {
    this.#verdict = true;
    this.dependencies.metrics.upstreamAttempts.labels(this.candidate.route.channel.name, outcome).inc();
  }

  #refundTokens(): void {
    const charge = this.candidate.tokenCharge;
    if (charge === null) return;
    if (this.#tokensOnLog && this.attempts !== null) {
      this.attempts.forgetTokenCharge(charge.rule);
      this.#tokensOnLog = false;
    }
    this.dependencies.routing.limiter.adjust(charge.rule, -charge.estimate, charge.chargedAt).catch((error: unknown) => {
      this.dependencies.logger.warn('channel-model token limit refund failed', describeError(error));
    });
  }
}

/** Reads a 2xx answer with `read`; when that throws, the attempt ends (see `threw`) before the error goes on. */
export async function readingAnswer<T>(attempt: UpstreamAttempt, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    attempt.threw();
    throw error;
  }
}

/** After a rejected key, the same channel with its next key, when it has one left. */
export function anotherKey(dependencies: RelayDependencies, plan: RoutePlan, candidate: Candidate): Candidate | null {
  return dependencies.credentials.hasUsableKey(candidate.route.channel) ? plan.again(candidate) : null;
}

/** Host and port of an upstream URL, for `server.address` and `server.port`. */
function serverOf(url: string): { address: string; port: number } {
  try {
    const parsed = new URL(url);
    return { address: parsed.hostname, port: parsed.port === '' ? (parsed.protocol === 'https:' ? 443 : 80) : Number(parsed.port) };
  } catch {
    return { address: 'unknown', port: 0 };
  }
}
