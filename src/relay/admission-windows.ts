import type { ActiveSubscription } from '../billing/subscription-book.js';
import type { TokenCharge } from '../billing/answer-report.js';
import type { RequestCharge } from '../billing/settle.js';
import type { ProjectFunds } from '../billing/money-pools.js';
import { effectiveAccountLimits, type EffectiveAccountLimits } from '../limits/account-limits.js';
import type { AdmissionAsk, ConcurrencySlot, LimitRule } from '../limits/rate-limiter.js';
import { minuteRule } from '../limits/minute-rules.js';
import type { TierLimitsSource } from '../limits/tier-book.js';
import type { Account, ApiKey } from '../domain/records.js';
import type { Model } from '../domain/model-records.js';
import { projectFundsOf, projectRpmRule, projectTpmRule } from '../projects/project-admission.js';
import type { CustomerAdmission } from '../customers/customer-admission.js';

/**
 * What admission asks the limiter for: the rate windows and concurrency slots of a request's key, project, account,
 * tier, subscription plan, model and end customer, each record's rules made once and kept with the record.
 */

/** What of a request its windows depend on. */
export interface LimitedRequest {
  key: ApiKey;
  account: Account;
  model: Model;
  estimatedTokens: number;
  /** The request counted in rate windows before its body was read, if it was. */
  early: RequestCharge | null;
}

const keyRpmRule = (key: ApiKey): LimitRule | null => (key.rpm === null ? null : minuteRule(key, 'key', 'rpm', 'key-rpm', key.rpm));
const accountRpmRule = (account: Account, rpm: number | null): LimitRule | null => (rpm === null ? null : minuteRule(account, 'account', 'rpm', 'account-rpm', rpm));
const planRpmRule = (subscription: ActiveSubscription | null): LimitRule | null =>
  subscription === null || subscription.plan.rpm === null ? null : minuteRule(subscription.subscription, 'subscription', 'rpm', 'plan-rpm', subscription.plan.rpm);

/** The request-rate windows that do not depend on the model: the key's, the account tier's and the plan's RPM. */
export function modelFreeRequestRules(dependencies: { tiers: TierLimitsSource }, key: ApiKey, account: Account, subscription: ActiveSubscription | null): LimitRule[] {
  const rules = [keyRpmRule(key), projectRpmRule(key), accountRpmRule(account, effectiveAccountLimits(dependencies.tiers, account).rpm.value), planRpmRule(subscription)];
  return rules.filter((candidate): candidate is LimitRule => candidate !== null);
}

/** One owner's windows: requests per minute and tokens per minute (null: no such limit). */
interface RateWindows {
  rpm: LimitRule | null;
  tpm: LimitRule | null;
}

/**
 * The rate windows of a key's plan, one owner a line: the key's, its project's and its account's (the account's own
 * limits where set, its tier's otherwise). A new owner of limits that depends only on the key is one more line.
 */
const KEY_WINDOWS: ReadonlyArray<(key: ApiKey, account: Account, accountLimits: EffectiveAccountLimits) => RateWindows> = [
  (key) => ({ rpm: keyRpmRule(key), tpm: key.tpm === null ? null : minuteRule(key, 'key', 'tpm', 'key-tpm', key.tpm) }),
  (key) => ({ rpm: projectRpmRule(key), tpm: projectTpmRule(key) }),
  (_key, account, accountLimits) => ({
    rpm: accountRpmRule(account, accountLimits.rpm.value),
    tpm: accountLimits.tpm.value === null ? null : minuteRule(account, 'account', 'tpm', 'account-tpm', accountLimits.tpm.value),
  }),
];

/**
 * The rate windows each request adds to its key's plan, after them, one owner a line: its subscription plan's, its
 * model's, its end customer's (all or nothing with the plan's, in one limiter call).
 */
const REQUEST_WINDOWS: ReadonlyArray<(subscription: ActiveSubscription | null, model: Model, customer: CustomerAdmission | null) => RateWindows> = [
  (subscription) => ({
    rpm: planRpmRule(subscription),
    tpm: subscription === null || subscription.plan.tpm === null ? null : minuteRule(subscription.subscription, 'subscription', 'tpm', 'plan-tpm', subscription.plan.tpm),
  }),
  (_subscription, model) => ({
    rpm: model.rpm === null ? null : minuteRule(model, 'model', 'rpm', 'model-rpm', model.rpm),
    tpm: model.tpm === null ? null : minuteRule(model, 'model', 'tpm', 'model-tpm', model.tpm),
  }),
  (_subscription, _model, customer) => ({ rpm: customer?.rpmRule ?? null, tpm: customer?.tpmRule ?? null }),
];

/** A window of a key's plan: one that counts tokens, or one that counts requests with its charge (the same object for every request). */
type PlannedWindow = { rule: LimitRule; tokens: true } | { rule: LimitRule; tokens: false; once: { rule: LimitRule; cost: number } };

/**
 * What admission takes for every request of one key that depends only on the key, its project, its account and the
 * account's tier: their concurrency slots and rate windows, in admission order, and what the key adds to the money
 * asked. Kept with the key record and made again when the account record or the tier book's generation is not the
 * one it was made from: a change of the key or its project loads a new key record (the verifier's cache drops the
 * account's keys), a change of the account a new account record, a tier edit moves the generation.
 */
export interface KeyAdmissionPlan {
  account: Account;
  tierGeneration: number;
  slots: readonly ConcurrencySlot[];
  windows: readonly PlannedWindow[];
  keyCapped: boolean;
  keyBudgeted: boolean;
  project: ProjectFunds | null;
}

const plans = new WeakMap<ApiKey, KeyAdmissionPlan>();

/** The key's admission plan (see `KeyAdmissionPlan`), made when it has none that is still valid. */
export function planOf(tiers: TierLimitsSource, key: ApiKey, account: Account): KeyAdmissionPlan {
  const known = plans.get(key);
  if (known !== undefined && known.account === account && known.tierGeneration === tiers.generation) return known;
  const tierGeneration = tiers.generation;
  const accountLimits = effectiveAccountLimits(tiers, account);
  const slots: ConcurrencySlot[] = [];
  if (key.concurrency !== null) slots.push({ id: `key:${key.id}:concurrency`, limit: key.concurrency });
  if (accountLimits.concurrency.value !== null) slots.push({ id: `account:${account.id}:concurrency`, limit: accountLimits.concurrency.value });
  const windows: PlannedWindow[] = [];
  for (const windowsOf of KEY_WINDOWS) {
    const { rpm, tpm } = windowsOf(key, account, accountLimits);
    if (rpm !== null) windows.push({ rule: rpm, tokens: false, once: { rule: rpm, cost: 1 } });
    if (tpm !== null) windows.push({ rule: tpm, tokens: true });
  }
  const made: KeyAdmissionPlan = { account, tierGeneration, slots, windows, keyCapped: key.quotaNano !== null, keyBudgeted: key.budget !== null, project: projectFundsOf(key) };
  plans.set(key, made);
  return made;
}

/** What the limiter is asked for a request, and which of its windows count tokens (their charges by estimate). */
export interface LimitsAsk extends AdmissionAsk {
  charges: Array<{ rule: LimitRule; cost: number }>;
  tokenCharges: TokenCharge[];
}

/** The request's slots and window charges: its key's plan, then the windows of its subscription, model and end customer. */
export function limitsAsk(dependencies: { tiers: TierLimitsSource }, request: LimitedRequest, subscription: ActiveSubscription | null, customer: CustomerAdmission | null): LimitsAsk {
  const { key, account, model, early } = request;
  const plan = planOf(dependencies.tiers, key, account);
  const estimate = Math.max(0, Math.ceil(request.estimatedTokens));
  const asked: LimitsAsk = { slots: customer?.concurrency == null ? plan.slots : [...plan.slots, customer.concurrency], charges: [], tokenCharges: [] };
  // Windows the request was already counted in before its body was read are not counted again.
  const countedEarly = early === null ? null : early.rules;
  for (const window of plan.windows) {
    if (window.tokens) chargeTokens(asked, window.rule, estimate);
    else if (countedEarly === null || !countedEarly.some((counted) => counted.id === window.rule.id)) asked.charges.push(window.once);
  }
  for (const windowsOf of REQUEST_WINDOWS) {
    const { rpm, tpm } = windowsOf(subscription, model, customer);
    if (rpm !== null && (countedEarly === null || !countedEarly.some((counted) => counted.id === rpm.id))) asked.charges.push({ rule: rpm, cost: 1 });
    if (tpm !== null) chargeTokens(asked, tpm, estimate);
  }
  return asked;
}

/**
 * Charges the request's token estimate to a window. An estimate above the whole limit is charged as the whole window,
 * so a large request still gets through an untouched window rather than being refused forever; the real usage
 * corrects it afterwards.
 */
function chargeTokens(asked: LimitsAsk, rule: LimitRule, estimate: number): void {
  const charged = Math.min(estimate, rule.limit);
  asked.charges.push({ rule, cost: charged });
  asked.tokenCharges.push({ rule, charged });
}
