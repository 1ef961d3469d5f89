import { GatewayError } from '../errors/gateway-error.js';
import { rateLimitHeaders } from '../limits/rate-limit-headers.js';
import type { LimitDecision, LimitRule, LimitState } from '../limits/rate-limiter.js';
import { ruleFor } from '../domain/customer-records.js';
import type { CustomerRuleBook } from './customer-rule-book.js';

const MINUTE_MS = 60_000;
/** The limit dimension of an end customer's requests per minute (headers and refusals name it). */
export const CUSTOMER_RPM_DIMENSION = 'customer-rpm';

/** What admission takes from the end customer's rule: whether its budget's pool takes part, and its RPM window. */
export interface CustomerAdmission {
  customer: string;
  budgeted: boolean;
  rpmRule: LimitRule | null;
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
  const rpmRule = rule.rpm === null ? null : { id: `customer:${accountId}:${customer}:rpm`, dimension: CUSTOMER_RPM_DIMENSION, limit: rule.rpm, windowMs: MINUTE_MS };
  return { customer, budgeted: rule.budget !== null, rpmRule };
}

/** The 429 of the customer's RPM window, naming the customer and its limit (null: another window refused). */
export function customerRateLimitRefusal(admission: CustomerAdmission | null, decision: Extract<LimitDecision, { allowed: false }>): GatewayError | null {
  if (admission?.rpmRule == null || decision.blocking.rule.id !== admission.rpmRule.id) return null;
  const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
  return new GatewayError(
    'rate_limit_exceeded',
    `Rate limit reached for end customer '${admission.customer}' (${admission.rpmRule.limit} requests a minute). Retry after ${seconds} s.`,
    { retryAfterSeconds: seconds, headers: { ...rateLimitHeaders(decision.blocking), ...customerWindowHeaders(decision.blocking) } },
  );
}

/** The customer window's own headers, beside the generic ones of the tightest window. */
export function customerWindowHeaders(state: LimitState): Record<string, string> {
  return {
    'x-ratelimit-customer-limit': String(state.rule.limit),
    'x-ratelimit-customer-remaining': String(state.remaining),
    'x-ratelimit-customer-reset': String(Math.ceil(state.resetAtMs / 1000)),
  };
}

/** Adds the customer window's headers to an admitted request's headers (when the customer has an RPM rule). */
export function withCustomerWindow(headers: Record<string, string>, admission: CustomerAdmission | null, states: readonly LimitState[]): Record<string, string> {
  if (admission?.rpmRule == null) return headers;
  const id = admission.rpmRule.id;
  const state = states.find((candidate) => candidate.rule.id === id);
  return state === undefined ? headers : Object.assign(headers, customerWindowHeaders(state));
}
