import type { AnswerProgress, TokenCharge, TokenCharges } from '../billing/answer-report.js';
import type { LimitRule } from '../limits/rate-limiter.js';
import type { RequestObservation } from '../telemetry/request-observation.js';

/** What a relay reads of the request it relays (the meter's facts, read only: a relay never writes the meter). */
export interface RelayedRequest {
  readonly requestId: string;
  readonly accountId: string;
  readonly keyId: string;
  readonly protocol: string;
  /** The model name the request gave (kept by the usage row). */
  readonly modelId: string | null;
  /** Local estimate of the prompt, billed only when a cut stream never reported usage. */
  readonly promptTokensEstimate: number;
  /** The request's access log and trace (null when neither follows it). */
  readonly observation: RequestObservation | null;
  /** `performance.now()` when the request arrived. */
  readonly startedAt: number;
}

/**
 * The attempts of one request's answer as the relays make them, the part of its answer report written while it is
 * served (a relay that throws still leaves its attempts here): the channels tried, the channel-model token windows
 * the answering attempt charged, the model name the fallback chain tried last, and when the answer's first byte left.
 * The metered frame creates it, hands it to the relays and reads it (`progress`) when it settles the request; it
 * holds no money.
 */
export class AttemptLog {
  readonly #channels: string[] = [];
  #tokenCharges: { rules: TokenCharge[]; chargedAt: number } | null = null;
  #modelName: string | null = null;
  #ttfbMs: number | null = null;
  /** Told once, as the answer's first byte leaves; set only for a request whose first byte must be acted on. */
  #onFirstByte: (() => void) | null = null;

  constructor(readonly request: RelayedRequest) {}

  /** The model name the usage row keeps: the fallback chain's step tried last, else the request's. */
  get modelId(): string | null {
    return this.#modelName ?? this.request.modelId;
  }

  /** The channels tried, in order; the last is the request's channel. */
  get attemptedChannels(): readonly string[] {
    return this.#channels;
  }

  /** Channel-model token windows the answering attempt charged (null: none). */
  get tokenCharges(): TokenCharges | null {
    return this.#tokenCharges;
  }

  /** An attempt on `channelId` started: the usage row counts it and names the channel tried last. */
  attempted(channelId: string): void {
    this.#channels.push(channelId);
  }

  /** The answer's first byte left for the caller (the first time only: the time to first byte is taken then). */
  firstByteLeft(): void {
    if (this.#ttfbMs !== null) return;
    this.#ttfbMs = Math.round(performance.now() - this.request.startedAt);
    this.#onFirstByte?.();
  }

  /**
   * `hook` is told when the answer's first byte leaves, unless it has left already (the caller acts on that itself,
   * as a tracked stream writes its first checkpoint at once then). Set when a stream starts being tracked, so a
   * request that never is calls nothing at its first byte.
   */
  whenFirstByte(hook: () => void): void {
    this.#onFirstByte = hook;
  }

  /** The attempts and timings as they stand now, for the answer's report (the total is the time until now). */
  progress(): AnswerProgress {
    return {
      attempts: { modelName: this.#modelName, channels: this.#channels, tokenCharges: this.#tokenCharges },
      timings: { ttfbMs: this.#ttfbMs, totalMs: Math.round(performance.now() - this.request.startedAt) },
    };
  }

  /** The fallback chain tries the model it names `name`: the usage row keeps that name. */
  named(name: string): void {
    this.#modelName = name;
  }

  /** The answering attempt took tokens from channel-model windows at `chargedAt`: the settlement corrects them. */
  chargeTokens(charges: readonly TokenCharge[], chargedAt: number): void {
    this.#tokenCharges ??= { rules: [], chargedAt };
    this.#tokenCharges.rules.push(...charges);
  }

  /** The window's charge was given back already (a failed attempt refunded it): the settlement no longer corrects it. */
  forgetTokenCharge(rule: LimitRule): void {
    const rules = this.#tokenCharges?.rules;
    if (rules === undefined) return;
    const index = rules.findIndex((entry) => entry.rule === rule);
    if (index >= 0) rules.splice(index, 1);
  }
}
