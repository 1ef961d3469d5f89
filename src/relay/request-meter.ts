import { computeCost, hostedToolCost, type BillableUsage } from '../billing/compute-cost.js';
import type { Ledger } from '../billing/ledger.js';
import type { Reservation } from '../billing/money-pools.js';
import { nanoToDecimalString } from '../billing/money.js';
import { spliceUsageCost } from '../billing/usage-cost-field.js';
import { NO_ANSWER_FACTS, type AnswerFacts } from '../ir/answer-facts.js';
import { madeHostedToolCalls, totalTokens, type Usage } from '../ir/usage.js';
import type { LimitRule, LimitState, RateLimiter, ConcurrencyLease } from '../limits/rate-limiter.js';
import type { Clock } from '../shared/clock.js';
import { newId } from '../shared/ids.js';
import type { Logger } from '../shared/logger.js';
import { describeError } from '../shared/logger.js';
import type { Model, NanoUsd, UsageLogRow } from '../domain/records.js';
import type { UsageLogWriter } from '../usage-log/usage-log-writer.js';
import type { RequestObservation } from '../telemetry/request-observation.js';
import type { Telemetry } from '../telemetry/telemetry.js';
import { NO_IDENTITY, type RequestIdentity } from '../customers/request-identity.js';

export interface MeterDependencies {
  ledger: Ledger;
  usageLog: UsageLogWriter;
  limiter: RateLimiter;
  clock: Clock;
  logger: Logger;
  /** The access log and tracing: the meter reports its settlement to the request's observation. */
  telemetry?: Telemetry;
}

/** Usage-row code of a stream charged at its last checkpoint because its instance stopped (crash, SIGKILL). */
export const INSTANCE_STOPPED = 'instance_stopped';

/** Response header with the request's cost in decimal USD, on every non-streamed billed answer. */
export const COST_HEADER = 'x-request-cost-usd';

/** Basis points in one whole (a cache hit's price is a share of the answer's cost in these). */
const BASIS_POINTS = 10_000n;

/** Tokens taken from one token-limit window before forwarding. */
export interface TokenCharge {
  rule: LimitRule;
  charged: number;
}

/**
 * One request counted in rate windows before its body was read (relay/admit-before-body.ts): it stands once
 * admission takes the request, and is given back by `finish` otherwise (a request refused or failed before
 * admission is not counted, as when all limits are checked at admission).
 */
export interface RequestCharge {
  rules: LimitRule[];
  /** The windows as the early check left them, for the X-RateLimit headers. */
  states: LimitState[];
  chargedAt: number;
  admitted: boolean;
}

export interface RequestOutcome {
  status: number;
  errorCode?: string | null;
  usage?: Usage | null;
  /** What was billed besides tokens (images, audio seconds, characters), for the non-token endpoints. */
  billable?: Omit<BillableUsage, 'tokens'>;
  /** Reads the answering model and finish reasons off the answer; called only when a trace records them. */
  answer?: () => AnswerFacts;
}

/**
 * Follows one authenticated request from admission to its end and settles it exactly once: the charge (from real
 * usage), the token-limit correction, the concurrency slot, and one metadata-only usage row.
 */
export class RequestMeter {
  /** The channels tried, in order; the usage row keeps them, the last as the request's channel. */
  readonly #attemptedChannels: string[] = [];
  ttfbMs: number | null = null;
  #model: Model | null = null;
  #modelId: string | null = null;
  #stream = false;
  #promptTokensEstimate = 0;
  /** What was taken from each token window (admission's and the answering channel's), corrected by the real usage at the end. */
  #tokenCharge: { rules: TokenCharge[]; chargedAt: number } | null = null;
  #requestCharge: RequestCharge | null = null;
  /** The concurrency slot, released by `finish`: on completion, caller abort and upstream failure alike. */
  #lease: ConcurrencyLease | null = null;
  /** The money held by admission, settled to the real cost by `finish` (released when nothing is billed). */
  #reservation: Reservation | null = null;
  /** What the request was billed, once finished. */
  costNano: NanoUsd = 0n;
  /** Set when the answer came from the response cache: the share of the answer's cost billed, in basis points. */
  #cacheHitBasisPoints: number | null = null;
  /** The usage it was billed for, once finished (null: none known). */
  usage: Usage | null = null;
  #answer: (() => AnswerFacts) | null = null;
  #answerFacts: AnswerFacts | null = null;
  /** The end customer and tags the request names (customers/request-identity.ts), kept by its usage row. */
  identity: RequestIdentity = NO_IDENTITY;
  /** The request's access log and trace (null when neither follows it). */
  readonly observation: RequestObservation | null;
  #finished = false;
  /** The stream is checkpointed by the ledger until `finish`. */
  #tracked = false;
  readonly createdAt: number;

  constructor(
    private readonly dependencies: MeterDependencies,
    readonly requestId: string,
    readonly accountId: string,
    readonly keyId: string,
    readonly protocol: string,
    readonly endpoint: string,
    private readonly startedAt: number,
  ) {
    this.createdAt = dependencies.clock.now();
    this.observation = dependencies.telemetry?.observationOf(requestId) ?? null;
    this.observation?.meterStarted();
  }

  /** The model the answer is priced at (null until the request's model is known). */
  get model(): Model | null {
    return this.#model;
  }

  /** The model name the usage row keeps: as the caller (or the fallback chain) named it. */
  get modelId(): string | null {
    return this.#modelId;
  }

  get stream(): boolean {
    return this.#stream;
  }

  /** Local estimate of the prompt, billed only when a cut stream never reported usage. */
  get promptTokensEstimate(): number {
    return this.#promptTokensEstimate;
  }

  /** Requests counted before the body was read; admission does not count these rules again. */
  get requestCharge(): RequestCharge | null {
    return this.#requestCharge;
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

  /** The model that answers, priced at its own prices, under the name the usage row keeps. */
  pricedAs(model: Model, name: string): void {
    this.#model = model;
    this.#modelId = name;
  }

  /** Admission counted the request in rate windows before its body was read. */
  countedBeforeBody(charge: RequestCharge): void {
    this.#requestCharge = charge;
  }

  /** Admission held money for the request: `finish` settles it to the real cost. */
  holdMoney(reservation: Reservation): void {
    this.#reservation = reservation;
  }

  /** Admission took a concurrency slot: `finish` (or `releaseSlot`) gives it back. */
  holdSlot(lease: ConcurrencyLease): void {
    this.#lease = lease;
  }

  /** Gives the concurrency slot back early (admission refused the request after taking it). */
  releaseSlot(): void {
    const lease = this.#lease;
    this.#lease = null;
    lease?.release();
  }

  /** An attempt on `channelId` started: the usage row counts it and names the channel tried last. */
  recordAttempt(channelId: string): void {
    this.#attemptedChannels.push(channelId);
  }

  /** Tokens taken from token-limit windows at `chargedAt`, corrected by `finish` with the real usage. */
  chargeTokens(charges: readonly TokenCharge[], chargedAt: number): void {
    this.#tokenCharge ??= { rules: [], chargedAt };
    this.#tokenCharge.rules.push(...charges);
  }

  /** The window's charge was given back already (a failed attempt refunded it): `finish` no longer corrects it. */
  forgetTokenCharge(rule: LimitRule): void {
    const rules = this.#tokenCharge?.rules;
    if (rules === undefined) return;
    const index = rules.findIndex((entry) => entry.rule === rule);
    if (index >= 0) rules.splice(index, 1);
  }

  /** The answer's first byte left for the caller: a stream tracked for checkpoints gets its first one now. */
  markFirstByte(): void {
    if (this.ttfbMs !== null) return;
    this.ttfbMs = Math.round(performance.now() - this.startedAt);
    if (this.#tracked && !this.#finished) this.dependencies.ledger.checkpointFirstByte(this.requestId);
  }

  get finished(): boolean {
    return this.#finished;
  }

  /** Gives the money hold back without billing (admission refused the request after reserving). */
  releaseReservation(): void {
    const reservation = this.#reservation;
    if (reservation === null) return;
    this.#reservation = null;
    this.dependencies.ledger.settle(reservation, { costNano: 0n, requestId: this.requestId, createdAt: this.dependencies.clock.now() });
  }

  /**
   * The answer is replayed from the response cache: it is billed `basisPoints` / 10,000 of what its usage costs
   * (rounded down to the nano-dollar), and its usage row says it was a hit.
   */
  answeredFromCache(basisPoints: number): void {
    this.#cacheHitBasisPoints = basisPoints;
  }

  get cacheHit(): boolean {
    return this.#cacheHitBasisPoints !== null;
  }

  /** The cost an outcome will be billed (for the cost header, before the body is sent); `finish` bills the same. */
  quote(outcome: Pick<RequestOutcome, 'usage' | 'billable'>): NanoUsd {
    const usage = outcome.usage ?? null;
    const billable = outcome.billable;
    if (this.#model === null || (usage === null && billable === undefined)) return 0n;
    return this.#share(computeCost(this.#model.pricing, usage === null ? { ...billable } : { ...billable, tokens: usage }));
  }

  /** The part of the quote that pays the answer's hosted tool calls (web searches and the like). */
  #hostedToolQuote(usage: Usage | null): NanoUsd {
    if (this.#model === null || !madeHostedToolCalls(usage?.hostedTools)) return 0n;
    return this.#share(hostedToolCost(this.#model.pricing, usage.hostedTools));
  }

  /** A cost as billed: whole, or the cache hit's share of it (rounded down to the nano-dollar). */
  #share(cost: NanoUsd): NanoUsd {
    return this.#cacheHitBasisPoints === null ? cost : (cost * BigInt(this.#cacheHitBasisPoints)) / BASIS_POINTS;
  }

  /**
   * An answer about to be sent with what it costs: the `x-request-cost-usd` header (decimal USD) and, when the body
   * has a usage object (`usageKey`), `cost` spliced into it. Call `finish` with the same outcome.
   */
  priced(body: Buffer | string, outcome: Pick<RequestOutcome, 'usage' | 'billable'>, usageKey: string | null): { body: Buffer | string; headers: Record<string, string> } {
    const cost = nanoToDecimalString(this.quote(outcome));
    const spliced = usageKey === null ? null : spliceUsageCost(body, cost, usageKey);
    return { body: spliced ?? body, headers: { [COST_HEADER]: cost } };
  }

  /**
   * A streamed event (or encoded tail) carrying the final usage, with the cost of that usage spliced into its usage
   * object (`usage` of OpenAI and Anthropic events, `usageMetadata` of Gemini chunks): what `finish` bills when the
   * stream ends with this usage.
   */
  withCostInUsage<T extends Buffer | string>(payload: T, usage: Usage | null, usageKey: string): T {
    if (usage === null) return payload;
    const spliced = spliceUsageCost(payload, nanoToDecimalString(this.quote({ usage })), usageKey);
    if (spliced === null) return payload;
    return (typeof payload === 'string' ? spliced.toString('utf8') : spliced) as T;
  }

  /**
   * A stream in flight, with what it would be billed if it stopped now (`billed`, computed only when the ledger
   * asks, never per event): its first checkpoint is written as its first byte reaches the caller (the upstream bills
   * the input from then on), then every few seconds, so if this instance dies the stream is charged at it (with a
   * usage row coded `instance_stopped`) instead of its hold being released. `opening`: what it is billed at its first
   * byte when that is cheaper to tell than `billed` (a chat stream's input, no tokenizer run).
   */
  trackStream(billed: () => Promise<Pick<RequestOutcome, 'usage' | 'billable'>>, opening?: () => Pick<RequestOutcome, 'usage' | 'billable'>): void {
    const reservation = this.#reservation;
    if (reservation === null || this.#finished) return;
    this.#tracked = true;
    const figureOf = (current: Pick<RequestOutcome, 'usage' | 'billable'>) => {
      const costNano = this.quote(current);
      return { costNano, row: this.#usageRow({ status: 502, errorCode: INSTANCE_STOPPED }, current.usage ?? null, costNano) };
    };
    this.dependencies.ledger.checkpoints.track(
      this.requestId,
      reservation,
      async () => figureOf(await billed()),
      opening === undefined ? null : () => Promise.resolve(figureOf(opening())),
    );
    if (this.ttfbMs !== null) this.dependencies.ledger.checkpointFirstByte(this.requestId);
  }

  /** Idempotent: the first call settles, later calls return 0 and do nothing. */
  finish(outcome: RequestOutcome): NanoUsd {
    if (this.#finished) return 0n;
    this.#finished = true;
    this.releaseSlot();
    const usage = outcome.usage ?? null;
    const cost = this.quote(outcome);
    this.costNano = cost;
    this.usage = usage;
    this.#answer = outcome.answer ?? null;
    const { ledger, usageLog, limiter, clock, logger } = this.dependencies;
    const settleSpan = this.observation?.startSpan('settle') ?? null;
    if (this.#tokenCharge !== null) {
      const actual = usage === null ? 0 : totalTokens(usage);
      const { rules, chargedAt } = this.#tokenCharge;
      for (const { rule, charged } of rules) {
        if (actual === charged) continue;
        limiter.adjust(rule, actual - charged, chargedAt).catch((error: unknown) => logger.warn('token limit correction failed', describeError(error)));
      }
    }
    if (this.#requestCharge !== null && !this.#requestCharge.admitted) {
      const { rules, chargedAt } = this.#requestCharge;
      for (const rule of rules) limiter.adjust(rule, -1, chargedAt).catch((error: unknown) => logger.warn('request limit refund failed', describeError(error)));
    }
    // Exactly one settlement per request: the reservation's (0 releases it), or a charge with nothing reserved.
    const reservation = this.#reservation ?? (cost > 0n ? ledger.unreserved(this.accountId, this.keyId, newId('led', this.createdAt)) : null);
    this.#reservation = null;
    const checkpointed = this.#tracked && ledger.checkpoints.finish(this.requestId);
    const row = this.#usageRow(outcome, usage, cost);
    // The settlement carries the row: if it has to wait on disk for the database, the row waits with it.
    if (reservation !== null) ledger.settle(reservation, { costNano: cost, requestId: this.requestId, createdAt: clock.now(), checkpointed, usageRow: row });
    usageLog.record(row);
    if (settleSpan !== null) {
      settleSpan.set('unigate.cost_usd', nanoToDecimalString(cost)).set('unigate.reserved', reservation !== null);
      settleSpan.end();
    }
    this.observation?.meterFinished({
      keyId: this.keyId,
      accountId: this.accountId,
      model: this.modelId,
      channelId: row.channelId,
      protocol: this.protocol,
      status: outcome.status,
      errorCode: outcome.errorCode ?? null,
      inputTokens: row.promptTokens,
      outputTokens: row.completionTokens,
      costNano: cost,
      latencyMs: row.latencyMs,
      ttfbMs: this.ttfbMs,
      attempts: row.attempts,
      stream: this.stream,
      answer: this.#answer === null ? null : () => this.answerFacts(),
    });
    return cost;
  }

  /** The finished answer's model and finish reasons, read once (nothing when the request ended without an answer). */
  answerFacts(): AnswerFacts {
    if (this.#answerFacts === null) this.#answerFacts = this.#answer?.() ?? NO_ANSWER_FACTS;
    return this.#answerFacts;
  }

  #usageRow(outcome: Pick<RequestOutcome, 'status' | 'errorCode'>, usage: Usage | null, cost: NanoUsd): UsageLogRow {
    return {
      requestId: this.requestId,
      accountId: this.accountId,
      keyId: this.keyId,
      model: this.modelId,
      channelId: this.#attemptedChannels.at(-1) ?? null,
      protocol: this.protocol,
      endpoint: this.endpoint,
      stream: this.stream,
      status: outcome.status,
      errorCode: outcome.errorCode ?? null,
      promptTokens: usage?.input.total ?? 0,
      completionTokens: usage?.output.total ?? 0,
      cachedTokens: usage?.input.cacheRead ?? 0,
      reasoningTokens: usage?.output.reasoning ?? 0,
      totalTokens: usage === null ? 0 : totalTokens(usage),
      costNano: cost,
      latencyMs: Math.round(performance.now() - this.startedAt),
      ttfbMs: this.ttfbMs,
      attempts: this.#attemptedChannels.length,
      attemptedChannels: this.#attemptedChannels,
      createdAt: this.createdAt,
      cacheHit: this.cacheHit,
      ...(madeHostedToolCalls(usage?.hostedTools) ? { hostedTools: usage.hostedTools, hostedToolCostNano: this.#hostedToolQuote(usage) } : {}),
      ...(this.identity === NO_IDENTITY ? {} : { customer: this.identity.customer, tags: this.identity.tags }),
    };
  }
}
