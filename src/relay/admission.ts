import type { Ledger } from '../billing/ledger.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { LimitRule, LimitState, RateLimiter } from '../limits/rate-limiter.js';
import type { Clock } from '../shared/clock.js';
import type { Account, ApiKey, Model } from '../storage/records.js';
import type { RequestMeter } from './request-meter.js';

export interface AdmissionDependencies {
  ledger: Ledger;
  limiter: RateLimiter;
  clock: Clock;
}

export interface AdmissionRequest {
  key: ApiKey;
  account: Account;
  model: Model;
  /** Prompt estimate plus the requested maximum output: what TPM is charged before forwarding. */
  estimatedTokens: number;
  meter: RequestMeter;
}

const MINUTE_MS = 60_000;

function rule(id: string, dimension: string, limit: number): LimitRule {
  return { id, dimension, limit, windowMs: MINUTE_MS };
}

/**
 * Everything that must hold before a request reaches an upstream, cheapest first: the key's model allowlist,
 * its quota cap, the account's funds, then rate and concurrency limits. Returns the X-RateLimit headers of the
 * tightest dimension; throws the spec's error otherwise.
 */
export async function admit(dependencies: AdmissionDependencies, request: AdmissionRequest): Promise<Record<string, string>> {
  const { key, account, model, meter } = request;
  const { ledger, limiter, clock } = dependencies;
  if (key.allowedModels !== null && !key.allowedModels.includes(model.id)) {
    throw new GatewayError('model_not_allowed', `This API key is not allowed to use model '${model.id}'.`);
  }
  if (key.quotaNano !== null && (await ledger.keySpent(key.id)) >= key.quotaNano) {
    throw new GatewayError('quota_exhausted', 'This API key has reached its quota cap and is paused until the cap is raised.', { retryAfterSeconds: 3600 });
  }
  // A cached balance may predate a top-up made elsewhere: confirm with storage before refusing.
  const hasFunds = (balance: bigint): boolean => balance + account.creditLineNano > 0n;
  if (!hasFunds(await ledger.availableBalance(account.id)) && !hasFunds(await ledger.confirmedBalance(account.id))) {
    throw new GatewayError('insufficient_balance', 'The account balance is too low for this request. Top up and retry.');
  }

  const now = clock.now();
  const requests: Array<{ rule: LimitRule; cost: number }> = [];
  let tokenRule: LimitRule | null = null;
  if (key.rpm !== null) requests.push({ rule: rule(`key:${key.id}:rpm`, 'key-rpm', key.rpm), cost: 1 });
  if (key.tpm !== null) {
    tokenRule = rule(`key:${key.id}:tpm`, 'key-tpm', key.tpm);
    requests.push({ rule: tokenRule, cost: request.estimatedTokens });
  }
  if (model.rpm !== null) requests.push({ rule: rule(`model:${model.id}:rpm`, 'model-rpm', model.rpm), cost: 1 });
  if (model.tpm !== null) requests.push({ rule: rule(`model:${model.id}:tpm`, 'model-tpm', model.tpm), cost: request.estimatedTokens });

  let states: LimitState[] = [];
  if (requests.length > 0) {
    const decision = await limiter.consume(requests, now);
    if (!decision.allowed) {
      const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
      throw new GatewayError('rate_limit_exceeded', `Rate limit reached (${decision.blocking.rule.dimension}). Retry after ${seconds} s.`, {
        retryAfterSeconds: seconds,
        headers: rateLimitHeaders(decision.blocking),
      });
    }
    states = decision.states;
    if (tokenRule !== null) meter.tokenCharge = { rule: tokenRule, estimate: request.estimatedTokens, chargedAt: now };
  }
  if (key.concurrency !== null) {
    meter.lease = await limiter.acquire(`key:${key.id}:concurrency`, key.concurrency);
    if (meter.lease === null) {
      throw new GatewayError('rate_limit_exceeded', 'Too many concurrent requests for this API key.', { retryAfterSeconds: 1 });
    }
  }
  const tightest = tightestState(states);
  return tightest === null ? {} : rateLimitHeaders(tightest);
}

/** The dimension with the smallest remaining share of its limit. */
function tightestState(states: LimitState[]): LimitState | null {
  let tightest: LimitState | null = null;
  for (const state of states) {
    if (tightest === null || state.remaining / state.rule.limit < tightest.remaining / tightest.rule.limit) tightest = state;
  }
  return tightest;
}

export function rateLimitHeaders(state: LimitState): Record<string, string> {
  return {
    'x-ratelimit-limit': String(state.rule.limit),
    'x-ratelimit-remaining': String(state.remaining),
    'x-ratelimit-reset': String(Math.ceil(state.resetAtMs / 1000)),
  };
}
