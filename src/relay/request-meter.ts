import type { GuardrailUsage, McpCallUsage } from '../domain/usage-records.js';
import type { SettledReport } from '../billing/answer-report.js';
import { nanoToDecimalString } from '../billing/money.js';
import type { Settlement, SettledRequest } from '../billing/settle.js';
import { NO_ANSWER_FACTS, type AnswerFacts } from '../ir/answer-facts.js';
import type { Clock } from '../shared/clock.js';
import type { RequestObservation } from '../telemetry/request-observation.js';
import { NO_IDENTITY, type RequestIdentity } from '../customers/request-identity.js';
import type { RelayedRequest } from './attempt-log.js';

export interface MeterDependencies {
  clock: Clock;
}

/**
 * The request a meter follows: its id, and its access log and trace when either follows it (the listener puts them on
 * the request's context); the meter reports the request's settlement there.
 */
export interface MeteredArrival {
  readonly requestId: string;
  readonly observation?: RequestObservation | null;
}

/**
 * What is observed of one authenticated request while it is served, for its usage row, access log and trace: what it
 * is (streamed, its prompt estimate, the model name it gave, its end customer, guardrails, MCP call). The frame and
 * the operation write it; a relay only reads it (`RelayedRequest`) and records its attempts and first byte in the
 * request's `AttemptLog`, which the answer's report carries. It holds no money and settles nothing: billing/settle.ts
 * settles the request from its admission and its answer's report, and reads this record for the usage row.
 */
export class RequestMeter implements RelayedRequest {
  #modelId: string | null = null;
  #stream = false;
  #promptTokensEstimate = 0;
  /** The end customer and tags the request names (customers/request-identity.ts), kept by its usage row. */
  identity: RequestIdentity = NO_IDENTITY;
  /** What the request's guardrail policies did (guardrails/request-guard.ts), kept by its usage row; empty: none ran. */
  readonly guardrails: GuardrailUsage[] = [];
  /** The MCP tool call the request is (mcp/tool-call-meter.ts), kept by its usage row; null: not one. */
  mcp: McpCallUsage | null = null;
  readonly requestId: string;
  /** The request's access log and trace (null when neither follows it). */
  readonly observation: RequestObservation | null;
  readonly createdAt: number;

  constructor(
    dependencies: MeterDependencies,
    request: MeteredArrival,
    readonly accountId: string,
    readonly keyId: string,
    readonly protocol: string,
    readonly endpoint: string,
    readonly startedAt: number,
    /** The request is a line of a batch: the models it names are billed at their batch prices. */
    readonly batch = false,
  ) {
    this.requestId = request.requestId;
    this.createdAt = dependencies.clock.now();
    this.observation = request.observation ?? null;
    this.observation?.meterStarted();
  }

  /**
   * The meter of a realtime session (OpenAI Realtime, Gemini Live): a stream from its start, with no prompt estimate
   * (each of its responses reports its own usage).
   */
  static ofSession(dependencies: MeterDependencies, requestId: string, accountId: string, keyId: string, protocol: string, endpoint: string, startedAt: number): RequestMeter {
    // An upgrade does not pass the listener frame, which is where a request's observation begins.
    const meter = new RequestMeter(dependencies, { requestId }, accountId, keyId, protocol, endpoint, startedAt);
    meter.#stream = true;
    return meter;
  }

  /**
   * The meter of one request a realtime session is billed as, apart from its upgrade (a response, or the session that
   * produced none): the session's facts (who, protocol, endpoint, model name, end customer, streamed) under its own
   * request id, metered from now. It follows no access log or trace: the session's upgrade has them.
   */
  static ofSessionPart(session: RequestMeter, clock: Clock, requestId: string, startedAt: number): RequestMeter {
    const meter = new RequestMeter({ clock }, { requestId }, session.accountId, session.keyId, session.protocol, session.endpoint, startedAt);
    meter.#stream = session.#stream;
    meter.#modelId = session.#modelId;
    meter.identity = session.identity;
    return meter;
  }

  /** The model name the usage row keeps: as the caller (or the fallback chain) named it. */
  get modelId(): string | null {
    return this.#modelId;
  }

  /** Local estimate of the prompt, billed only when a cut stream never reported usage. */
  get promptTokensEstimate(): number {
    return this.#promptTokensEstimate;
  }

  /** The request's facts as the settlement reads them, as plain fields (read once, when it settles). */
  settledRequest(): SettledRequest {
    return {
      requestId: this.requestId,
      accountId: this.accountId,
      keyId: this.keyId,
      protocol: this.protocol,
      endpoint: this.endpoint,
      stream: this.#stream,
      modelId: this.#modelId,
      createdAt: this.createdAt,
      identity: this.identity,
      guardrails: this.guardrails,
      mcp: this.mcp,
    };
  }

  /** What the body says of the request: streamed or not, and the local estimate of its prompt. */
  expect(shape: { stream?: boolean; promptTokens: number }): void {
    if (shape.stream !== undefined) this.#stream = shape.stream;
    this.#promptTokensEstimate = shape.promptTokens;
  }

  /** The model name the request gave, kept by the usage row even when the catalog has no such model. */
  named(modelId: string): void {
    this.#modelId = modelId;
  }

  /**
   * The request settles (`settleNow`, in the trace's `settle` span with its cost and whether money was held): its
   * access log line and trace get what it was billed and how its answer went (`report`).
   */
  observeSettlement(report: SettledReport, settleNow: () => Settlement): void {
    const span = this.observation?.startSpan('settle') ?? null;
    const settlement = settleNow();
    if (span !== null) {
      span.set('unigate.cost_usd', nanoToDecimalString(settlement.costNano)).set('unigate.reserved', settlement.reserved);
      span.end();
    }
    const { row } = settlement;
    let facts: AnswerFacts | null = null;
    const answer = report.answer;
    this.observation?.meterFinished({
      keyId: this.keyId,
      accountId: this.accountId,
      model: report.attempts.modelName ?? this.#modelId,
      channelId: row.channelId,
      protocol: this.protocol,
      status: report.status,
      errorCode: report.errorCode ?? null,
      inputTokens: row.promptTokens,
      outputTokens: row.completionTokens,
      costNano: settlement.costNano,
      latencyMs: row.latencyMs,
      ttfbMs: report.timings.ttfbMs,
      attempts: row.attempts,
      stream: this.#stream,
      answer: answer === undefined ? null : () => (facts ??= answer() ?? NO_ANSWER_FACTS),
    });
  }
}
