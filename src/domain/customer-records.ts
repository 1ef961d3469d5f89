import type { BudgetPeriod, NanoUsd } from './records.js';

/** The customer name of the account's rule for every end customer without a rule of its own. */
export const EVERY_CUSTOMER = '';

/**
 * An account's limits for one end customer (or, with `customer` = EVERY_CUSTOMER, for each customer without its own
 * rule): a budget per UTC day, week or month, requests and tokens per minute and requests in flight at once; null: no
 * such limit. A customer's own rule
 * replaces the default one as a whole, so a rule of nulls exempts a customer.
 */
export interface CustomerRule {
  accountId: string;
  customer: string;
  budget: { period: BudgetPeriod; limitNano: NanoUsd } | null;
  rpm: number | null;
  tpm: number | null;
  concurrency: number | null;
  createdAt: number;
  updatedAt: number;
}

/**
 * The alert subject of an end customer's budget: the account and the customer (a customer id has no control
 * characters, an account id no colon, so the first colon separates them).
 */
export function customerSubjectId(accountId: string, customer: string): string {
  return `${accountId}:${customer}`;
}

/** The account and customer of a `customer_budget` subject. */
export function customerOfSubject(subjectId: string): { accountId: string; customer: string } {
  const separator = subjectId.indexOf(':');
  return { accountId: subjectId.slice(0, separator), customer: subjectId.slice(separator + 1) };
}

/** What one dimension of the daily rollups holds for one day and value (a key id, a customer, a tag `name=value`). */
export interface UsageRollup {
  accountId: string;
  day: number;
  value: string;
  requests: number;
  errors: number;
  inputTokens: number;
  outputTokens: number;
  costNano: NanoUsd;
}

export type RollupDimension = 'key' | 'customer' | 'tag';

export interface RollupQuery {
  /** One account's rollups, or every account's (the operator). */
  accountId: string | null;
  dimension: RollupDimension;
  /** UTC days from `from` to `to` (epoch ms, inclusive, any time within the days). */
  from: number;
  to: number;
  /** Only this value (a customer, a key id or a tag `name=value`). */
  value?: string;
}

/** The rule that governs `customer` among the account's rules (its own, else the default), or null. */
export function ruleFor(rules: ReadonlyMap<string, CustomerRule>, customer: string): CustomerRule | null {
  return rules.get(customer) ?? rules.get(EVERY_CUSTOMER) ?? null;
}

/** The money pool of an end customer's budget (billing/money-pools.ts): what is left of it in the current period. */
export const customerPool = (accountId: string, customer: string): string => `customer:${accountId}:${customer}`;
