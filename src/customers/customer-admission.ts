import { GatewayError } from '../errors/gateway-error.js';
import { rateLimitHeaders } from '../limits/rate-limit-headers.js';
import type { LimitDecision, LimitRule, LimitState } from '../limits/rate-limiter.js';
import { ruleFor } from '../domain/customer-records.js';
import type { CustomerRuleBook } from './customer-rule-book.js';

const MINUTE_MS = 60_000;
/** The limit dimension of an end customer's requests per minute (headers and refusals name it). */
export const CUSTOMER_RPM_DIMENSION = 'customer-rpm';
/** The limit dimension of an end customer's tokens per minute. */
export const CUSTOMER_TPM_DIMENSION = 'customer-tpm';

/**
 * What admission takes from the end customer's rule: whether its budget's pool takes part, its RPM and TPM windows and
 * its concurrency slot (null: no such limit).
 */
export interface CustomerAdmission {
  customer: string;
  budgeted: boolean;
  rpmRule: LimitRule | null;
  tpmRule: LimitRule | null;
  concurrency: { id: string; limit: number } | null;
}

/**
 * The rule that governs the request's end customer (null: it names none, or the account sets no rule for it). From
 * memory, except the first request of an account after its rules changed or expired.
 */
export async function customerAdmission(book: CustomerRuleBook | undefined, accountId: string, customer: string | null): Promise<CustomerAdmission | null> {
  if (customer === null || book === undefined) return null;
  const rules = await book.rulesOf(accountId);
  if (rules.size === 0) return null;
  const rule = ruleFor(rules, customer);
  if (rule === null) return null;
  // Each customer has its own windows and slot, also when the default rule governs it.
  const base = `customer:${accountId}:${customer}`;
  return {
    customer,
    budgeted: rule.budget !== null,
    rpmRule: rule.rpm === null ? null : { id: `${base}:rpm`, dimension: CUSTOMER_RPM_DIMENSION, limit: rule.rpm, windowMs: MINUTE_MS },
    tpmRule: rule.tpm === null ? null : { id: `${base}:tpm`, dimension: CUSTOMER_TPM_DIMENSION, limit: rule.tpm, windowMs: MINUTE_MS },
    concurrency: rule.concurrency === null ? null : { id: `${base}:concurrency`, limit: rule.concurrency },
  };
}

/** The 429 of one of the customer's windows, naming the customer and its limit (null: another window refused). */
export function customerRateLimitRefusal(admission: CustomerAdmission | null, decision: Extract<LimitDecision, { allowed: false }>): GatewayError | null {
  if (admission === null) return null;
  const blocking = decision.blocking.rule.id;
  const what = blocking === admission.rpmRule?.id ? 'requests' : blocking === admission.tpmRule?.id ? 'tokens' : null;
  if (what === null) return null;
  const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
  const headers = { ...rateLimitHeaders(decision.blocking), ...customerWindowHeaders(decision.blocking, what) };
  return new GatewayError(
    'rate_limit_exceeded',
    `Rate limit reached for end customer '${admission.customer}' (${decision.blocking.rule.limit} ${what} a minute). Retry after ${seconds} s.`,
    { retryAfterSeconds: seconds, headers },
  );
}

/** The 429 of the customer's full concurrency slot (null: another slot refused). */
export function customerConcurrencyRefusal(admission: CustomerAdmission | null, slotId: string, retryAfterSeconds: number): GatewayError | null {
  if (admission?.concurrency == null || admission.concurrency.id !== slotId) return null;
  return new GatewayError(
    'rate_limit_exceeded',
    `Too many concurrent requests for end customer '${admission.customer}' (limit ${admission.concurrency.limit}).`,
    { retryAfterSeconds },
  );
}

/**
 * A customer window's own headers, beside the generic ones of the tightest window: `x-ratelimit-customer-*` for its
 * requests, `x-ratelimit-customer-*-tokens` for its tokens (OpenAI's naming of the two).
 */
export function customerWindowHeaders(state: LimitState, what: 'requests' | 'tokens'): Record<string, string> {
  const suffix = what === 'tokens' ? '-tokens' : '';
  return {
    [`x-ratelimit-customer-limit${suffix}`]: String(state.rule.limit),
    [`x-ratelimit-customer-remaining${suffix}`]: String(state.remaining),
    [`x-ratelimit-customer-reset${suffix}`]: String(Math.ceil(state.resetAtMs / 1000)),
  };
}

/** Adds the customer windows' headers to an admitted request's headers (for each window its rule has). */
export function withCustomerWindow(headers: Record<string, string>, admission: CustomerAdmission | null, states: readonly LimitState[]): Record<string, string> {
  if (admission === null) return headers;
  for (const [rule, what] of [[admission.rpmRule, 'requests'], [admission.tpmRule, 'tokens']] as const) {
    const state = rule === null ? undefined : states.find((candidate) => candidate.rule.id === rule.id);
    if (state !== undefined) Object.assign(headers, customerWindowHeaders(state, what));
  }
  return headers;
}
