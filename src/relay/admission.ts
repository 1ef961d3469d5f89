import type { BillableUsage } from '../billing/compute-cost.js';
import type { Ledger } from '../billing/ledger.js';
import { reservationAmount } from '../billing/reservation-amount.js';
import type { ActiveSubscription, SubscriptionBook } from '../billing/subscription-book.js';
import { newId } from '../shared/ids.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { LimitDecision, LimitRule, LimitState, RateLimiter } from '../limits/rate-limiter.js';
import type { TierLimits, TierLimitsSource } from '../limits/tier-book.js';
import type { Clock } from '../shared/clock.js';
import type { Account, ApiKey, Model } from '../storage/records.js';
import type { RequestMeter, TokenCharge } from './request-meter.js';

export interface AdmissionDependencies {
  ledger: Ledger;
  limiter: RateLimiter;
  clock: Clock;
  /** Per-account limits by the account's tier, from memory. */
  tiers: TierLimitsSource;
  /** The account's active subscriptions (their quota pays first; their plan's RPM/TPM apply). */
  subscriptions: SubscriptionBook;
}

export interface AdmissionRequest {
  key: ApiKey;
  account: Account;
  model: Model;
  /** Prompt estimate plus the requested maximum output: what TPM is charged before forwarding. */
  estimatedTokens: number;
  /**
   * Upper bound of what the request can be billed for, for the money reservation. Token endpoints may leave it out
   * (it is then the prompt estimate plus the output cap); images, audio and per-request endpoints give it.
   */
  maxUsage?: BillableUsage;
  meter: RequestMeter;
}

const MINUTE_MS = 60_000;
/** A concurrency refusal has no window to wait for: this is how soon a slot is worth asking for again. */
const CONCURRENCY_RETRY_SECONDS = 1;

function rule(id: string, dimension: string, limit: number): LimitRule {
  return { id, dimension, limit, windowMs: MINUTE_MS };
}

const keyRpmRule = (key: ApiKey): LimitRule | null => (key.rpm === null ? null : rule(`key:${key.id}:rpm`, 'key-rpm', key.rpm));
const accountRpmRule = (account: Account, tier: TierLimits): LimitRule | null => (tier.rpm === null ? null : rule(`account:${account.id}:rpm`, 'account-rpm', tier.rpm));
const planRpmRule = (subscription: ActiveSubscription | null): LimitRule | null =>
  subscription === null || subscription.plan.rpm === null ? null : rule(`subscription:${subscription.subscription.id}:rpm`, 'plan-rpm', subscription.plan.rpm);

/** The request-rate windows that do not depend on the model: the key's, the account tier's and the plan's RPM. */
export function modelFreeRequestRules(dependencies: Pick<AdmissionDependencies, 'tiers'>, key: ApiKey, account: Account, subscription: ActiveSubscription | null): LimitRule[] {
  const rules = [keyRpmRule(key), accountRpmRule(account, dependencies.tiers.limitsFor(account.tier)), planRpmRule(subscription)];
  return rules.filter((candidate): candidate is LimitRule => candidate !== null);
}

/** The spec's 429 for a refused limit decision: Retry-After and the blocking dimension's X-RateLimit headers. */
export function rateLimitRefusal(decision: Extract<LimitDecision, { allowed: false }>): GatewayError {
  const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
  return new GatewayError('rate_limit_exceeded', `Rate limit reached (${decision.blocking.rule.dimension}). Retry after ${seconds} s.`, {
    retryAfterSeconds: seconds,
    headers: rateLimitHeaders(decision.blocking),
  });
}

/**
 * Everything that must hold before a request reaches an upstream, cheapest first: the key's model allowlist, the
 * money (an upper bound of the cost held from the key's quota cap, the subscription's quota and the wallet, all or
 * nothing; see billing/ledger.ts), the key's concurrency, then every rate dimension at once (key, account tier,
 * subscription plan, model; all or nothing). Returns the X-RateLimit headers of the tightest dimension; throws the
 * spec's error otherwise, after giving back what it took. The money hold usually comes from this instance's lease in
 * memory; when it does not, it waits for one group-committed transaction.
 */
export async function admit(dependencies: AdmissionDependencies, request: AdmissionRequest): Promise<Record<string, string>> {
  const { key, account, model, meter } = request;
  const { ledger } = dependencies;
  // The allowlist may name the model by its id or by the alias the request used.
  if (key.allowedModels !== null && !key.allowedModels.includes(model.id) && !(meter.modelId !== null && key.allowedModels.includes(meter.modelId))) {
    throw new GatewayError('model_not_allowed', `This API key is not allowed to use model '${model.id}'.`);
  }
  const subscriptions = await dependencies.subscriptions.active(account.id);
  const amountNano = reservationAmount(model.pricing, {
    promptTokens: meter.promptTokensEstimate,
    estimatedTokens: request.estimatedTokens,
    ...(request.maxUsage === undefined ? {} : { maxUsage: request.maxUsage }),
    producesText: model.kind === 'chat',
  });
  meter.reservation = await ledger.reserve({
    accountId: account.id,
    keyId: key.id,
    keyCapped: key.quotaNano !== null,
    subscriptions: subscriptions.map(({ subscription }) => subscription.id),
    amountNano,
    entryId: newId('led', meter.createdAt),
  });
  try {
    return await admitLimits(dependencies, request, subscriptions[0] ?? null);
  } catch (error) {
    meter.releaseReservation();
    throw error;
  }
}

async function admitLimits(dependencies: AdmissionDependencies, request: AdmissionRequest, subscription: ActiveSubscription | null): Promise<Record<string, string>> {
  const { key, account, model, meter } = request;
  const { limiter, clock } = dependencies;
  // Concurrency first, so a request refused for it takes nothing from the rate windows.
  if (key.concurrency !== null) {
    meter.lease = await limiter.acquire(`key:${key.id}:concurrency`, key.concurrency);
    if (meter.lease === null) {
      throw new GatewayError('rate_limit_exceeded', `Too many concurrent requests for this API key (limit ${key.concurrency}).`, { retryAfterSeconds: CONCURRENCY_RETRY_SECONDS });
    }
  }

  const tier = dependencies.tiers.limitsFor(account.tier);
  const estimate = Math.max(0, Math.ceil(request.estimatedTokens));
  const requests: Array<{ rule: LimitRule; cost: number }> = [];
  const tokenCharges: TokenCharge[] = [];
  // Windows the request was already counted in before its body was read are not counted again.
  const early = meter.requestCharge;
  const countedEarly = early === null ? null : new Set(early.rules.map((counted) => counted.id));
  const addRequests = (rpmRule: LimitRule | null, tpmRule: LimitRule | null): void => {
    if (rpmRule !== null && countedEarly?.has(rpmRule.id) !== true) requests.push({ rule: rpmRule, cost: 1 });
    if (tpmRule !== null) {
      // An estimate above the whole limit is charged as the whole window, so a large request still gets through an
      // untouched window rather than being refused forever; the real usage corrects it afterwards.
      const charged = Math.min(estimate, tpmRule.limit);
      requests.push({ rule: tpmRule, cost: charged });
      tokenCharges.push({ rule: tpmRule, charged });
    }
  };
  addRequests(keyRpmRule(key), key.tpm === null ? null : rule(`key:${key.id}:tpm`, 'key-tpm', key.tpm));
  addRequests(accountRpmRule(account, tier), tier.tpm === null ? null : rule(`account:${account.id}:tpm`, 'account-tpm', tier.tpm));
  if (subscription !== null) {
    const { plan } = subscription;
    addRequests(planRpmRule(subscription), plan.tpm === null ? null : rule(`subscription:${subscription.subscription.id}:tpm`, 'plan-tpm', plan.tpm));
  }
  addRequests(
    model.rpm === null ? null : rule(`model:${model.id}:rpm`, 'model-rpm', model.rpm),
    model.tpm === null ? null : rule(`model:${model.id}:tpm`, 'model-tpm', model.tpm),
  );

  let states: LimitState[] = [];
  if (requests.length > 0) {
    const now = clock.now();
    const decision = await limiter.consume(requests, now);
    if (!decision.allowed) {
      meter.lease?.release();
      throw rateLimitRefusal(decision);
    }
    if (tokenCharges.length > 0) meter.tokenCharge = { rules: tokenCharges, chargedAt: now };
    states = decision.states;
  }
  if (early !== null) early.admitted = true;
  const tightest = tightestState(early === null ? states : [...early.states, ...states]);
  return tightest === null ? {} : rateLimitHeaders(tightest);
}

/** The dimension with the smallest remaining share of its limit (the first of equals, in admission order). */
function tightestState(states: LimitState[]): LimitState | null {
  let tightest: LimitState | null = null;
  for (const state of states) {
    if (tightest === null || state.remaining / state.rule.limit < tightest.remaining / tightest.rule.limit) tightest = state;
  }
  return tightest;
}

/** The spec's X-RateLimit headers (2.4) of one dimension, plus which dimension it is. */
export function rateLimitHeaders(state: LimitState): Record<string, string> {
  return {
    'x-ratelimit-limit': String(state.rule.limit),
    'x-ratelimit-remaining': String(state.remaining),
    'x-ratelimit-reset': String(Math.ceil(state.resetAtMs / 1000)),
    'x-ratelimit-dimension': state.rule.dimension,
  };
}
