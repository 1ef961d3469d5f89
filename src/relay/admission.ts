import type { BillableUsage } from '../billing/compute-cost.js';
import type { Ledger } from '../billing/ledger.js';
import { reservationAmount } from '../billing/reservation-amount.js';
import type { ActiveSubscription, SubscriptionBook } from '../billing/subscription-book.js';
import { newId } from '../shared/ids.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { ClientFamily } from '../codecs/client-family.js';
import type { HostedToolOffer } from '../ir/hosted-tool-offer.js';
import { effectiveAccountLimits } from '../limits/account-limits.js';
import { admittedRateLimitHeaders, rateLimitHeaders } from '../limits/rate-limit-headers.js';
import type { ConcurrencySlot, LimitDecision, LimitRule, LimitState, RateLimiter } from '../limits/rate-limiter.js';
import type { TierLimitsSource } from '../limits/tier-book.js';
import type { Clock } from '../shared/clock.js';
import type { Account, ApiKey, Model, NanoUsd } from '../domain/records.js';
import type { RequestMeter, TokenCharge } from './request-meter.js';
import { projectFundsOf, projectMayUse, projectRpmRule, projectTpmRule } from '../projects/project-admission.js';

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
  /** Models that may answer instead of `model` (its fallback chain): the money held covers the dearest of them all. */
  fallbackModels?: readonly Model[];
  /** Tools the upstream bills per call that the request offers: each is held for at its cap of calls. */
  hostedTools?: HostedToolOffer;
  meter: RequestMeter;
  /** The client's protocol family: its own rate-limit headers are added to the generic ones. */
  family: ClientFamily;
}

const MINUTE_MS = 60_000;
/** A concurrency refusal has no window to wait for: this is how soon a slot is worth asking for again. */
const CONCURRENCY_RETRY_SECONDS = 1;

/** Each record's rules by dimension, kept as long as the record is: a request does not build their ids and objects. */
const rulesOf = new WeakMap<object, Map<string, LimitRule>>();

/**
 * The one-minute rule `<scope>:<owner id>:<suffix>` of `owner` (a key, account, subscription or model record) for
 * `dimension`, made again only when its limit changed (an account's limit can change with its tier).
 */
function rule(owner: { id: string }, scope: string, suffix: string, dimension: string, limit: number): LimitRule {
  let rules = rulesOf.get(owner);
  if (rules === undefined) {
    rules = new Map();
    rulesOf.set(owner, rules);
  }
  const known = rules.get(dimension);
  if (known !== undefined && known.limit === limit) return known;
  const made = { id: `${scope}:${owner.id}:${suffix}`, dimension, limit, windowMs: MINUTE_MS };
  rules.set(dimension, made);
  return made;
}

const keyRpmRule = (key: ApiKey): LimitRule | null => (key.rpm === null ? null : rule(key, 'key', 'rpm', 'key-rpm', key.rpm));
const accountRpmRule = (account: Account, rpm: number | null): LimitRule | null => (rpm === null ? null : rule(account, 'account', 'rpm', 'account-rpm', rpm));
const planRpmRule = (subscription: ActiveSubscription | null): LimitRule | null =>
  subscription === null || subscription.plan.rpm === null ? null : rule(subscription.subscription, 'subscription', 'rpm', 'plan-rpm', subscription.plan.rpm);

/** The request-rate windows that do not depend on the model: the key's, the account tier's and the plan's RPM. */
export function modelFreeRequestRules(dependencies: Pick<AdmissionDependencies, 'tiers'>, key: ApiKey, account: Account, subscription: ActiveSubscription | null): LimitRule[] {
  const rules = [keyRpmRule(key), projectRpmRule(key), accountRpmRule(account, effectiveAccountLimits(dependencies.tiers, account).rpm.value), planRpmRule(subscription)];
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

/** The key's model allowlist, which may name the model by its id or by the name (alias) the request used. */
export function keyMayUse(key: ApiKey, model: Model, name: string | null): boolean {
  return (key.allowedModels === null || key.allowedModels.includes(model.id) || (name !== null && key.allowedModels.includes(name))) && projectMayUse(key, model, name);
}

/** The spec's 403 for a model outside the key's allowlist. */
export function modelNotAllowed(model: Model): GatewayError {
  return new GatewayError('model_not_allowed', `This API key is not allowed to use model '${model.id}'.`);
}

/**
 * Everything that must hold before a request reaches an upstream, cheapest first: the key's model allowlist, the
 * money (an upper bound of the cost held from the key's quota cap and budget, the subscription's quota and the
 * wallet, all or nothing; see billing/ledger.ts), then in one limiter call (one Redis script) the key's and the
 * account's concurrency and every rate dimension (key, account, subscription plan, model; all or nothing). Returns the rate-limit headers of the caller's
 * family (limits/rate-limit-headers.ts); throws the spec's error otherwise, after giving back what it took. The money hold usually comes from this instance's lease in
 * memory; when it does not, it waits for one group-committed transaction.
 */
export async function admit(dependencies: AdmissionDependencies, request: AdmissionRequest): Promise<Record<string, string>> {
  const span = request.meter.observation?.startSpan('admission') ?? null;
  if (span === null) return admitRequest(dependencies, request);
  try {
    return await admitRequest(dependencies, request);
  } catch (error) {
    span.fail(error instanceof GatewayError ? error.code : 'internal_error');
    throw error;
  } finally {
    span.end();
  }
}

async function admitRequest(dependencies: AdmissionDependencies, request: AdmissionRequest): Promise<Record<string, string>> {
  const { key, account, model, meter } = request;
  const { ledger } = dependencies;
  if (!keyMayUse(key, model, meter.modelId)) throw modelNotAllowed(model);
  const subscriptions = await dependencies.subscriptions.active(account.id);
  let amountNano = heldFor(model, request);
  for (const candidate of request.fallbackModels ?? []) {
    const amount = heldFor(candidate, request);
    if (amount > amountNano) amountNano = amount;
  }
  const reservation = await ledger.reserve({
    accountId: account.id,
    keyId: key.id,
    keyCapped: key.quotaNano !== null,
    keyBudgeted: key.budget !== null,
    subscriptions: subscriptions.map(({ subscription }) => subscription.id),
    amountNano,
    entryId: newId('led', meter.createdAt),
    project: projectFundsOf(key),
  });
  meter.holdMoney(reservation);
  try {
    return await admitLimits(dependencies, request, subscriptions[0] ?? null);
  } catch (error) {
    meter.releaseReservation();
    throw error;
  }
}

/** The money `model` would hold for the request. */
function heldFor(model: Model, request: AdmissionRequest): NanoUsd {
  return reservationAmount(model.pricing, {
    promptTokens: request.meter.promptTokensEstimate,
    estimatedTokens: request.estimatedTokens,
    maxUsage: request.maxUsage,
    producesText: model.kind === 'chat',
    hostedTools: request.hostedTools,
  });
}

async function admitLimits(dependencies: AdmissionDependencies, request: AdmissionRequest, subscription: ActiveSubscription | null): Promise<Record<string, string>> {
  const { key, account, model, meter } = request;
  const { limiter, clock } = dependencies;
  const accountLimits = effectiveAccountLimits(dependencies.tiers, account);
  const accountConcurrency = accountLimits.concurrency.value;
  const slots: ConcurrencySlot[] = [];
  if (key.concurrency !== null) slots.push({ id: `key:${key.id}:concurrency`, limit: key.concurrency });
  if (accountConcurrency !== null) slots.push({ id: `account:${account.id}:concurrency`, limit: accountConcurrency });
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
  addRequests(keyRpmRule(key), key.tpm === null ? null : rule(key, 'key', 'tpm', 'key-tpm', key.tpm));
  addRequests(projectRpmRule(key), projectTpmRule(key));
  const accountTpm = accountLimits.tpm.value;
  addRequests(accountRpmRule(account, accountLimits.rpm.value), accountTpm === null ? null : rule(account, 'account', 'tpm', 'account-tpm', accountTpm));
  if (subscription !== null) {
    const { plan } = subscription;
    addRequests(planRpmRule(subscription), plan.tpm === null ? null : rule(subscription.subscription, 'subscription', 'tpm', 'plan-tpm', plan.tpm));
  }
  addRequests(
    model.rpm === null ? null : rule(model, 'model', 'rpm', 'model-rpm', model.rpm),
    model.tpm === null ? null : rule(model, 'model', 'tpm', 'model-tpm', model.tpm),
  );

  let states: LimitState[] = [];
  const now = clock.now();
  if (slots.length > 0 || requests.length > 0) {
    // Concurrency is checked first (a request refused for it takes nothing from the rate windows), in the same step.
    const decision = await limiter.admit({ slots, charges: requests }, now);
    if (!decision.allowed) {
      if (decision.slot === null) throw rateLimitRefusal(decision);
      throw concurrencyRefusal(decision.slot, key);
    }
    if (decision.lease !== null) meter.holdSlot(decision.lease);
    if (tokenCharges.length > 0) meter.chargeTokens(tokenCharges, now);
    states = decision.states;
  }
  if (early !== null) early.admitted = true;
  const tokenRules = new Set(tokenCharges.map((charge) => charge.rule.id));
  return admittedRateLimitHeaders({ states: early === null ? states : [...early.states, ...states], tokenRules }, request.family, now);
}

/** The spec's 429 for a full concurrency slot, the key's or the account's. */
function concurrencyRefusal(slot: ConcurrencySlot, key: ApiKey): GatewayError {
  const whose = slot.id === `key:${key.id}:concurrency` ? 'this API key' : 'this account';
  return new GatewayError('rate_limit_exceeded', `Too many concurrent requests for ${whose} (limit ${slot.limit}).`, { retryAfterSeconds: CONCURRENCY_RETRY_SECONDS });
}
