import { z } from 'zod';
import { budgetPeriodAt, budgetSpentAt } from '../domain/budget-period.js';
import { nanoToUsd } from '../billing/money.js';
import { limitInput } from '../management/limit-input.js';
import { nonNegativeUsdInput } from '../management/money-input.js';
import { isoTime } from '../management/time-input.js';
import type { NanoUsd } from '../domain/records.js';
import { EVERY_CUSTOMER, type CustomerRule } from '../domain/customer-records.js';
import { CUSTOMER_MAX_LENGTH } from './request-identity.js';

/** A customer as requests name it (trimmed, bounded, printable); null: the rule of every customer. */
const customerName = z.string().trim().min(1).max(CUSTOMER_MAX_LENGTH).regex(/^[^\u0000-\u001f\u007f]+$/, 'must not contain control characters');

export const customerRuleSchema = z.object({
  customer: customerName.nullable(),
  budget: z.object({ period: z.enum(['day', 'week', 'month']), limit_usd: nonNegativeUsdInput }).strict().nullable().optional(),
  rpm: limitInput,
  tpm: limitInput,
  concurrency: limitInput,
}).strict();

export type CustomerRuleInput = z.infer<typeof customerRuleSchema>;

/**
 * One customer's rule in the flat form of `PUT /admin/accounts/:id/customers/:customer` (the customer is in the path,
 * `*` for every customer): `budget_usd` with `period` (a month when left out); absent fields are no limit.
 */
export const flatCustomerRuleSchema = z.object({
  budget_usd: nonNegativeUsdInput.nullable().optional(),
  period: z.enum(['day', 'week', 'month']).optional(),
  rpm: limitInput,
  tpm: limitInput,
  concurrency: limitInput,
}).strict().refine((input) => input.period === undefined || input.budget_usd != null, { message: 'period needs budget_usd', path: ['period'] });

/** The path's customer (`*`: every customer) and the flat body as a rule's input. */
export function flatRuleInput(customer: string, input: z.infer<typeof flatCustomerRuleSchema>): CustomerRuleInput {
  return {
    customer: customer === '*' ? null : customer,
    budget: input.budget_usd == null ? null : { period: input.period ?? 'month', limit_usd: input.budget_usd },
    rpm: input.rpm ?? null,
    tpm: input.tpm ?? null,
    concurrency: input.concurrency ?? null,
  };
}

/** The rule an input sets at `now` (an existing rule keeps its creation time); absent fields are no limit. */
export function ruleFromInput(accountId: string, input: CustomerRuleInput, existing: CustomerRule | null, now: number): CustomerRule {
  return {
    accountId,
    customer: input.customer ?? EVERY_CUSTOMER,
    budget: input.budget == null ? null : { period: input.budget.period, limitNano: input.budget.limit_usd },
    rpm: input.rpm ?? null,
    tpm: input.tpm ?? null,
    concurrency: input.concurrency ?? null,
    createdAt: existing?.createdAt ?? now,
    updatedAt: now,
  };
}

/** The `customer` query parameter of a rule's deletion: absent or empty names the rule of every customer. */
export function customerParam(query: URLSearchParams): string {
  const raw = query.get('customer');
  return raw === null ? EVERY_CUSTOMER : raw.trim();
}

/**
 * A rule as the admin and console APIs show it; a customer's own rule with its budget's spend in the current period
 * (`spent`: the stored spend and the period it belongs to; earlier periods count for nothing).
 */
export function ruleToJson(rule: CustomerRule, spent: { periodStart: number; spentNano: NanoUsd } | undefined, now: number): Record<string, unknown> {
  let budget: Record<string, unknown> | null = null;
  if (rule.budget !== null) {
    const period = budgetPeriodAt(rule.budget.period, now);
    budget = { period: rule.budget.period, limit_usd: nanoToUsd(rule.budget.limitNano), resets_at: isoTime(period.end) };
    if (rule.customer !== EVERY_CUSTOMER) {
      const spentNano = spent === undefined ? 0n : budgetSpentAt({ period: rule.budget.period, spentNano: spent.spentNano, periodStart: spent.periodStart }, now);
      const remaining = rule.budget.limitNano - spentNano;
      budget.spent_usd = nanoToUsd(spentNano);
      budget.remaining_usd = nanoToUsd(remaining < 0n ? 0n : remaining);
    }
  }
  return {
    object: 'customer_rule',
    customer: rule.customer === EVERY_CUSTOMER ? null : rule.customer,
    every_customer: rule.customer === EVERY_CUSTOMER,
    budget,
    rpm: rule.rpm,
    tpm: rule.tpm,
    concurrency: rule.concurrency,
    created_at: isoTime(rule.createdAt),
    updated_at: isoTime(rule.updatedAt),
  };
}
