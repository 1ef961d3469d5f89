import { AnswerPrice } from '../billing/answer-report.js';
import { DEFAULT_OUTPUT_TOKENS_RESERVED } from '../billing/reservation-amount.js';
import { computeCost } from '../billing/compute-cost.js';
import type { Reservation } from '../billing/money-pools.js';
import type { AnswerProgress, SettledReport, TokenCharges } from '../billing/answer-report.js';
import type { SettleDependencies } from '../billing/settle.js';
import type { Account, ApiKey, NanoUsd } from '../domain/records.js';
import type { Model } from '../domain/model-records.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Usage } from '../ir/usage.js';
import { rateLimitRefusal, type Admission } from '../relay/admission.js';
import { RequestMeter } from '../relay/request-meter.js';
import { settleMetered } from '../operations/metered-frame.js';
import { describeError } from '../shared/logger.js';
import type { SubscriptionBook } from '../billing/subscription-book.js';
import { projectFundsOf } from '../projects/project-admission.js';
import { newId } from '../shared/ids.js';

export interface RealtimeBillingDependencies extends SettleDependencies {
  subscriptions: SubscriptionBook;
}

/** What a realtime session is billed as: who pays, for which model, on which channel. */
export interface RealtimeSessionFacts {
  /**
   * The meter of the session's upgrade (its request id is the session's id, each response's usage row is
   * `<session id>.<n>`; its protocol, endpoint and the model name the caller used are the usage rows').
   */
  session: RequestMeter;
  key: ApiKey;
  account: Account;
  model: Model;
  channelId: string;
  /**
   * Checks the caller again as a request would be checked now (its key's standing and IP allowlist, and what
   * admission refuses before money is held, such as the key's model allowlist); throws that refusal.
   */
  recheck(): Promise<void>;
}

/** What the money held for one response covers: its input and its output, priced as audio (the dearer kind). */
export function responseHoldUsage(inputTokens: number, outputTokens: number): Usage {
  return {
    input: { total: inputTokens, noCache: inputTokens, cacheRead: 0, cacheWrite: 0 },
    output: { total: outputTokens, text: 0, reasoning: 0 },
    audio: { input: inputTokens, cacheRead: 0, output: outputTokens },
  };
}

/**
 * The money of one realtime session, billed as it goes: money for the next response is held before it can start
 * (admission held the first), each `response.done` settles that hold to the response's reported usage (one usage row
 * per response) and holds for the next, and the session's end gives back the hold no response used and its
 * concurrency slot. The next response's hold is its input (at least the whole conversation so far: the last input
 * and output) and DEFAULT_OUTPUT_TOKENS_RESERVED output tokens, all at the audio prices.
 *
 * Every response counts in the token-per-minute windows admission charged (the key's, account's, plan's, model's):
 * the next one's tokens, estimated as its hold is, are charged to them with the hold (refused when a window is full,
 * which ends the session as a refused hold does) and corrected to its reported usage when it is billed.
 *
 * Each response (and a session that produced none) is settled as a request of its own, with a meter of its own
 * (`RequestMeter.ofSessionPart`), through the one settlement step every metered request ends in (`settleMetered`).
 */
export class RealtimeBilling {
  #hold: Reservation | null;
  #tokenCharges: TokenCharges | null;
  #responses = 0;
  #conversationTokens = 0;
  #ended = false;

  constructor(
    private readonly dependencies: RealtimeBillingDependencies,
    private readonly facts: RealtimeSessionFacts,
    private readonly admission: Admission,
  ) {
    this.#hold = admission.reservation;
    this.#tokenCharges = admission.tokenCharges;
  }

  get responses(): number {
    return this.#responses;
  }

  /** Whether money is held for a next response. */
  get holding(): boolean {
    return this.#hold !== null;
  }

  /** Bills one finished response (its `status` as the upstream reported it) at its usage, from the hold for it. */
  chargeResponse(usage: Usage | null, status: string, startedAt: number): void {
    this.#responses += 1;
    const reservation = this.#hold;
    this.#hold = null;
    const tokenCharges = this.#tokenCharges;
    this.#tokenCharges = null;
    if (usage !== null) this.#conversationTokens = usage.input.total + usage.output.total;
    const errorCode = status === 'completed' ? null : `response_${status}`;
    this.#settle(`${this.facts.session.requestId}.${this.#responses}`, startedAt, reservation, tokenCharges, { status: 200, errorCode, usage, price: new AnswerPrice(this.facts.model), ...this.#progress(startedAt) });
  }

  /**
   * Whether the caller may still be served: null, or the refusal a request would get now (401 `revoked_api_key` or
   * `expired_api_key`, 403 `key_disabled`, `account_disabled`, `ip_not_allowed`, `model_not_allowed`).
   */
  async standing(): Promise<GatewayError | null> {
    try {
      await this.facts.recheck();
      return null;
    } catch (error) {
      if (error instanceof GatewayError) return error;
      throw error;
    }
  }

  /**
   * Checks the caller's standing again, then holds money for the next response and charges its estimated tokens to
   * the session's token windows; the refusal (the standing's, 402 `insufficient_balance`, 429 `quota_exhausted` or
   * `rate_limit_exceeded`…) when the caller may not go on, it cannot be paid or a window is full.
   */
  async holdNext(): Promise<GatewayError | null> {
    if (this.#hold !== null || this.#ended) return null;
    const refusal = await this.standing();
    if (refusal !== null || this.#ended) return refusal;
    const { key, account } = this.facts;
    const tokenRules = this.admission.tokenCharges?.rules ?? [];
    let tokenCharges: TokenCharges | null = null;
    if (tokenRules.length > 0) {
      const estimate = this.#conversationTokens + DEFAULT_OUTPUT_TOKENS_RESERVED;
      const charges = tokenRules.map(({ rule }) => ({ rule, cost: Math.min(estimate, rule.limit) }));
      const chargedAt = this.dependencies.clock.now();
      const decision = await this.dependencies.limiter.consume(charges, chargedAt);
      if (!decision.allowed) return rateLimitRefusal(decision);
      tokenCharges = { rules: charges.map(({ rule, cost }) => ({ rule, charged: cost })), chargedAt };
    }
    try {
      const subscriptions = await this.dependencies.subscriptions.active(account.id);
      const reservation = await this.dependencies.ledger.reserve({
        accountId: account.id,
        keyId: key.id,
        keyCapped: key.quotaNano !== null,
        keyBudgeted: key.budget !== null,
        subscriptions: subscriptions.map(({ subscription }) => subscription.id),
        amountNano: this.nextHoldNano(),
        entryId: newId('led', this.dependencies.clock.now()),
        project: projectFundsOf(key),
      });
      if (this.#ended) {
        this.dependencies.ledger.release(reservation, { requestId: this.facts.session.requestId, createdAt: this.dependencies.clock.now() });
        this.#giveBackTokens(tokenCharges);
        return null;
      }
      this.#hold = reservation;
      this.#tokenCharges = tokenCharges;
      return null;
    } catch (error) {
      this.#giveBackTokens(tokenCharges);
      if (error instanceof GatewayError) return error;
      throw error;
    }
  }

  /** Token-window charges of a response that never happened, taken back. */
  #giveBackTokens(charges: TokenCharges | null): void {
    for (const { rule, charged } of charges?.rules ?? []) {
      this.dependencies.limiter.adjust(rule, -charged, charges?.chargedAt ?? 0).catch((error: unknown) => this.dependencies.logger.warn('token limit correction failed', describeError(error)));
    }
  }

  /** The money held for the next response. */
  nextHoldNano(): NanoUsd {
    return computeCost(this.facts.model.pricing, { tokens: responseHoldUsage(this.#conversationTokens, DEFAULT_OUTPUT_TOKENS_RESERVED) });
  }

  /**
   * The session ended: the hold no response used is given back and the concurrency slot released. A session that
   * produced no response at all still gets one usage row (cost 0), so it is on record.
   */
  end(startedAt: number, errorCode: string | null): void {
    if (this.#ended) return;
    this.#ended = true;
    this.admission.lease?.release();
    const reservation = this.#hold;
    this.#hold = null;
    if (this.#responses === 0) {
      this.#settle(this.facts.session.requestId, startedAt, reservation, this.#tokenCharges, { status: 200, errorCode, usage: null, ...this.#progress(startedAt) });
      return;
    }
    if (reservation !== null) this.dependencies.ledger.release(reservation, { requestId: this.facts.session.requestId, createdAt: this.dependencies.clock.now() });
    this.#giveBackTokens(this.#tokenCharges);
    this.#tokenCharges = null;
  }

  /**
   * One settlement of the session: a response billed from the hold for it, or a session that produced none, as its
   * own request (`requestId`, from `startedAt`) with its usage row. The session's concurrency slot is not part of it:
   * `end` releases it.
   */
  #settle(requestId: string, startedAt: number, reservation: Reservation | null, tokenCharges: TokenCharges | null, report: SettledReport): void {
    const meter = RequestMeter.ofSessionPart(this.facts.session, this.dependencies.clock, requestId, startedAt);
    settleMetered(this.dependencies, meter, reservation === null ? null : { reservation, lease: null, tokenCharges }, null, report);
  }

  /** A response (or the session) from `startedAt` until now, on the session's one channel. */
  #progress(startedAt: number): AnswerProgress {
    return {
      attempts: { modelName: null, channels: [this.facts.channelId], tokenCharges: null },
      timings: { ttfbMs: null, totalMs: Math.round(performance.now() - startedAt) },
    };
  }
}
