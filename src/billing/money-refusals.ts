import { GatewayError, serviceUnavailable } from '../errors/gateway-error.js';
import { isDependencyUnavailable } from '../errors/dependency-unavailable.js';
import type { NanoUsd } from '../domain/records.js';
import type { KeyPoolRefusal } from './batch-growing.js';
import { nanoToUsd } from './money.js';

// The refusals of a reservation: 402 for the wallet, 429 `quota_exhausted` for a quota, cap or budget.

const SUBSCRIPTION_QUOTA_MESSAGE = 'The subscription\'s quota for this period is used up (its plan allows no overage, or its overage limit is reached). It resets at the start of the next period.';

/** The refusal of a reservation whose money transaction failed: 503 while the database is away, else 500. */
export function transactionFailedRefusal(error: unknown): GatewayError {
  return isDependencyUnavailable(error)
    ? serviceUnavailable(error)
    : new GatewayError('internal_error', 'Funds could not be reserved for this request. Retry shortly.');
}

export function insufficientBalance(): GatewayError {
  return new GatewayError('insufficient_balance', 'The account balance is too low for this request. Top up and retry.');
}

/** A subscription's quota is used up (policy `deny`, or its overage limit): Retry-After is the wait until its period resets. */
export function subscriptionQuotaRefusal(resetsInMs: number): GatewayError {
  return new GatewayError('quota_exhausted', SUBSCRIPTION_QUOTA_MESSAGE, { retryAfterSeconds: Math.max(1, Math.ceil(resetsInMs / 1000)) });
}

/**
 * The refusal of a key's own cap or budget. Nothing left: the key is paused (its view says so). Something left but
 * less than this request's upper bound: the key stays enabled, and the message says how to fit.
 */
const POOL_NAMES: Record<KeyPoolRefusal['pool'], string> = {
  key: 'this API key\'s quota cap',
  budget: 'this API key\'s budget for the current period',
  project: 'its project\'s quota cap',
  projectBudget: 'its project\'s budget for the current period',
  customer: 'the end customer\'s budget for the current period',
};

export function keyPoolRefusal(refusal: KeyPoolRefusal, amountNano: NanoUsd): GatewayError {
  if (refusal.customer !== undefined) return customerBudgetRefusal(refusal, refusal.customer, amountNano);
  const what = POOL_NAMES[refusal.pool];
  const retryAfterSeconds = refusal.retryAfterMs === undefined ? 3600 : Math.max(1, Math.ceil(refusal.retryAfterMs / 1000));
  const resets = refusal.pool === 'budget' || refusal.pool === 'projectBudget' ? ' It resets at the start of the next period.' : '';
  if (refusal.remainingNano <= 0n) {
    const paused = refusal.pool === 'key' || refusal.pool === 'budget' ? 'the key is paused' : 'the project\'s keys are paused';
    return new GatewayError('quota_exhausted', `Nothing is left of ${what}: ${paused}.${resets}`, { retryAfterSeconds });
  }
  return new GatewayError(
    'quota_exhausted',
    `This request could cost up to ${nanoToUsd(amountNano)} USD, more than the ${nanoToUsd(refusal.remainingNano)} USD left of ${what}. `
    + `Send a lower max_tokens (or a shorter prompt).${resets}`,
    { retryAfterSeconds },
  );
}

/** The refusal of an end customer's budget: it names the customer and its budget, and when it resets. */
function customerBudgetRefusal(refusal: KeyPoolRefusal, { customer, budget }: NonNullable<KeyPoolRefusal['customer']>, amountNano: NanoUsd): GatewayError {
  const retryAfterSeconds = refusal.retryAfterMs === undefined ? 3600 : Math.max(1, Math.ceil(refusal.retryAfterMs / 1000));
  const what = `the budget of end customer '${customer}' (${nanoToUsd(budget.limitNano)} USD a ${budget.period})`;
  const resets = ` It resets at the start of the next ${budget.period} (UTC).`;
  if (refusal.remainingNano <= 0n) return new GatewayError('quota_exhausted', `Nothing is left of ${what}.${resets}`, { retryAfterSeconds });
  return new GatewayError(
    'quota_exhausted',
    `This request could cost up to ${nanoToUsd(amountNano)} USD, more than the ${nanoToUsd(refusal.remainingNano)} USD left of ${what}. `
    + `Send a lower max_tokens (or a shorter prompt).${resets}`,
    { retryAfterSeconds },
  );
}
