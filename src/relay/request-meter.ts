import { computeCost } from '../billing/compute-cost.js';
import type { Ledger } from '../billing/ledger.js';
import { totalTokens, type Usage } from '../ir/usage.js';
import type { LimitRule, RateLimiter, ConcurrencyLease } from '../limits/rate-limiter.js';
import type { Clock } from '../shared/clock.js';
import { newId } from '../shared/ids.js';
import type { Logger } from '../shared/logger.js';
import { describeError } from '../shared/logger.js';
import type { Model, NanoUsd } from '../storage/records.js';
import type { UsageLogWriter } from '../usage-log/usage-log-writer.js';

export interface MeterDependencies {
  ledger: Ledger;
  usageLog: UsageLogWriter;
  limiter: RateLimiter;
  clock: Clock;
  logger: Logger;
}

/** Tokens taken from one token-limit window before forwarding. */
export interface TokenCharge {
  rule: LimitRule;
  charged: number;
}

export interface RequestOutcome {
  status: number;
  errorCode?: string | null;
  usage?: Usage | null;
}

/**
 * Follows one authenticated request from admission to its end and settles it exactly once: the charge (from real
 * usage), the token-limit correction, the concurrency slot, and one metadata-only usage row.
 */
export class RequestMeter {
  channelId: string | null = null;
  attempts = 0;
  /** The channels tried, in order; the usage row keeps them. */
  readonly attemptedChannels: string[] = [];
  ttfbMs: number | null = null;
  model: Model | null = null;
  modelId: string | null = null;
  stream = false;
  /** Local estimate of the prompt, billed only when a cut stream never reported usage. */
  promptTokensEstimate = 0;
  /** What admission took from each token window (key, account, model), corrected by the real usage at the end. */
  tokenCharge: { rules: TokenCharge[]; chargedAt: number } | null = null;
  /** The concurrency slot, released by `finish`: on completion, caller abort and upstream failure alike. */
  lease: ConcurrencyLease | null = null;
  #finished = false;
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
  }

  markFirstByte(): void {
    this.ttfbMs ??= Math.round(performance.now() - this.startedAt);
  }

  get finished(): boolean {
    return this.#finished;
  }

  /** Idempotent: the first call settles, later calls return 0 and do nothing. */
  finish(outcome: RequestOutcome): NanoUsd {
    if (this.#finished) return 0n;
    this.#finished = true;
    this.lease?.release();
    const usage = outcome.usage ?? null;
    const cost = usage !== null && this.model !== null ? computeCost(this.model.pricing, { tokens: usage }) : 0n;
    const { ledger, usageLog, limiter, clock, logger } = this.dependencies;
    if (this.tokenCharge !== null) {
      const actual = usage === null ? 0 : totalTokens(usage);
      const { rules, chargedAt } = this.tokenCharge;
      for (const { rule, charged } of rules) {
        if (actual === charged) continue;
        limiter.adjust(rule, actual - charged, chargedAt).catch((error: unknown) => logger.warn('token limit correction failed', describeError(error)));
      }
    }
    if (cost > 0n) {
      ledger.charge({ entryId: newId('led', this.createdAt), accountId: this.accountId, keyId: this.keyId, requestId: this.requestId, costNano: cost, createdAt: clock.now() });
    }
    usageLog.record({
      requestId: this.requestId,
      accountId: this.accountId,
      keyId: this.keyId,
      model: this.modelId,
      channelId: this.channelId,
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
      attempts: this.attempts,
      attemptedChannels: this.attemptedChannels,
      createdAt: this.createdAt,
    });
    return cost;
  }
}
