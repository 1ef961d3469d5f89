import type { AnswerFacts } from '../ir/answer-facts.js';
import type { LimitRule } from '../limits/rate-limiter.js';
import { madeHostedToolCalls, type Usage } from '../ir/usage.js';
import type { Model } from '../domain/model-records.js';
import type { NanoUsd } from '../domain/records.js';
import { computeCost, hostedToolCost, type BillableUsage } from './compute-cost.js';
import { nanoToDecimalString } from './money.js';
import { withUsageCost, type AnswerCost } from '../wire/usage-cost.js';

/** Response header with the request's cost in decimal USD, on every non-streamed billed answer. */
export const COST_HEADER = 'x-request-cost-usd';

/** The header of an answer that costs `costDecimalUsd`. */
export function costHeader(costDecimalUsd: string): Record<string, string> {
  return { [COST_HEADER]: costDecimalUsd };
}

/** Basis points in one whole (a cache hit's price is a share of the answer's cost in these). */
const BASIS_POINTS = 10_000n;

/** What an answer is billed for: its token usage and, for the non-token endpoints, what else it produced. */
export interface Billed {
  usage?: Usage | null;
  /** What was billed besides tokens (images, audio seconds, characters), for the non-token endpoints. */
  billable?: Omit<BillableUsage, 'tokens'>;
}

/**
 * The price of one answer: the model it is billed at (a fallback model answers at its own prices) and, for an answer
 * replayed from the response cache, the share of its cost billed in basis points (rounded down to the nano-dollar).
 * The cost an answer carries (header, usage object) and the cost settled are both computed here, so they agree, and
 * computed once: the settlement reuses the answer's quote when it bills the same usage.
 */
export class AnswerPrice implements AnswerCost {
  /**
   * The last cost quoted and what it was quoted for, as JSON text (a copy of its values, so a usage object changed
   * afterwards is told apart): the cost an answer carried is the cost settled, computed once, unless what is billed
   * changed since (a stream whose usage grew, a cut stream billed by its delivered text). Equal values written in
   * another key order only cost a second computation.
   */
  #quoted: { of: string; cost: NanoUsd } | null = null;

  constructor(
    readonly model: Model | null,
    /** Null: not a cache hit. */
    readonly cacheHitBasisPoints: number | null = null,
    /** A call billed at a fixed price whatever it produced (an MCP tool call); null: billed by its usage. */
    readonly perCallNano: NanoUsd | null = null,
  ) {}

  get cacheHit(): boolean {
    return this.cacheHitBasisPoints !== null;
  }

  /** The cost `billed` is billed. */
  quote(billed: Billed): NanoUsd {
    if (this.perCallNano !== null) return this.perCallNano;
    const usage = billed.usage ?? null;
    const billable = billed.billable;
    if (this.model === null || (usage === null && billable === undefined)) return 0n;
    const of = JSON.stringify([usage, billable ?? null]);
    if (this.#quoted?.of === of) return this.#quoted.cost;
    const cost = this.#share(computeCost(this.model.pricing, usage === null ? { ...billable } : { ...billable, tokens: usage }));
    this.#quoted = { of, cost };
    return cost;
  }

  /** The part of the quote that pays the answer's hosted tool calls (web searches and the like). */
  hostedToolQuote(usage: Usage | null): NanoUsd {
    if (this.model === null || !madeHostedToolCalls(usage?.hostedTools)) return 0n;
    return this.#share(hostedToolCost(this.model.pricing, usage.hostedTools));
  }

  /** The cost `billed` is billed, in decimal USD: what the answer carries (header, usage object). */
  quoteUsd(billed: Billed): string {
    return nanoToDecimalString(this.quote(billed));
  }

  /**
   * The cost of an answer with this usage, in decimal USD: what a codec splices into the usage object that completes
   * the answer (a whole answer's, a stream's final usage event).
   */
  costUsd(usage: Usage): string {
    return this.quoteUsd({ usage });
  }

  /**
   * An answer of a non-chat endpoint about to be sent with what it costs: the `x-request-cost-usd` header (decimal
   * USD) and, when the body has a usage object (`usageKey`), `cost` spliced into it. The answer's report carries the
   * same `billed`. (A chat answer gets its cost from its codec.)
   */
  priced(body: Buffer | string, billed: Billed, usageKey: string | null): { body: Buffer | string; headers: Record<string, string> } {
    const cost = this.quoteUsd(billed);
    return { body: withUsageCost(body, cost, usageKey), headers: costHeader(cost) };
  }

  /** A cost as billed: whole, or the cache hit's share of it (rounded down to the nano-dollar). */
  #share(cost: NanoUsd): NanoUsd {
    return this.cacheHitBasisPoints === null ? cost : (cost * BigInt(this.cacheHitBasisPoints)) / BASIS_POINTS;
  }
}

/**
 * How a request's answer ended, as every relay (unary, streamed, translated, cache replay, fallback chain) reports it:
 * the status and code the usage row records, what it is billed and at what price, and the answer's facts for traces.
 * A relay returns it and never settles: the metered frame settles the request once, with this report.
 */
export interface AnswerReport extends Billed {
  status: number;
  errorCode?: string | null;
  /** The price the answer was quoted at (default: the admitted model's, whole). */
  price?: AnswerPrice;
  /** Reads the answering model and finish reasons off the answer; called only when a trace records them. */
  answer?: () => AnswerFacts;
}

/** Tokens taken from one token-limit window before forwarding, corrected by the real usage when the request settles. */
export interface TokenCharge {
  rule: LimitRule;
  charged: number;
}

/** Token-limit windows charged at one moment. */
export interface TokenCharges {
  rules: readonly TokenCharge[];
  chargedAt: number;
}

/** The attempts an answer took, as its relays made them (relay/attempt-log.ts records them while it is served). */
export interface AnswerAttempts {
  /** The model name the fallback chain tried last (null: the request's own name). */
  readonly modelName: string | null;
  /** The channels tried, in order; the last is the request's channel. */
  readonly channels: readonly string[];
  /** Channel-model token windows the answering attempt charged (null: none). */
  readonly tokenCharges: TokenCharges | null;
}

/** When the answer left, in milliseconds from the request's arrival: its first byte (null: none left) and its end. */
export interface AnswerTimings {
  readonly ttfbMs: number | null;
  readonly totalMs: number;
}

/** The part of an answer's report written while it is served, whoever answered: its attempts and timings. */
export interface AnswerProgress {
  readonly attempts: AnswerAttempts;
  readonly timings: AnswerTimings;
}

/** An answer that made no attempt (a priced call, a refusal before routing), ended now. */
export function noAttempts(startedAt: number, now: number = performance.now()): AnswerProgress {
  return { attempts: { modelName: null, channels: [], tokenCharges: null }, timings: { ttfbMs: null, totalMs: Math.round(now - startedAt) } };
}

/** A report as it is settled: what the relay reported, with the attempts and timings of the whole request. */
export type SettledReport = AnswerReport & AnswerProgress;

/** A failure reported with what it is still billed for (an upstream that answered but produced nothing usable). */
const billedFailures = new WeakMap<object, AnswerReport>();

/** `error`, to be thrown, with the report its request settles with (instead of a report of the error alone). */
export function withReport<E extends Error>(error: E, report: AnswerReport): E {
  billedFailures.set(error, report);
  return error;
}

/** The report a thrown error carries (see `withReport`), else null. */
export function reportOf(error: unknown): AnswerReport | null {
  return typeof error === 'object' && error !== null ? (billedFailures.get(error) ?? null) : null;
}
