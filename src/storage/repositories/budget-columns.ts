import { toBigInt, toNumber, toOneOf } from '../convert.js';
import type { BudgetPeriod, KeyBudget } from '../../domain/records.js';

const BUDGET_PERIODS: readonly BudgetPeriod[] = ['day', 'week', 'month'];

/** The four columns a period budget (a key's, a project's) is stored in: all null or all set, as read. */
export interface StoredBudget {
  budget_period: string | null;
  budget_limit_nano: bigint | null;
  budget_spent_nano: bigint;
  budget_period_start: number | bigint;
}

/** The columns of a budget, or of none (no period, no limit, nothing spent). */
export function budgetColumns(budget: KeyBudget | null): StoredBudget & { budget_period_start: number } {
  return budget === null
    ? { budget_period: null, budget_limit_nano: null, budget_spent_nano: 0n, budget_period_start: 0 }
    : { budget_period: budget.period, budget_limit_nano: budget.limitNano, budget_spent_nano: budget.spentNano, budget_period_start: budget.periodStart };
}

/** The budget a row's columns hold, or null; `what` names the budget in the error of a stored period out of the set. */
export function budgetOf(row: StoredBudget, what: string): KeyBudget | null {
  return row.budget_period === null || row.budget_limit_nano === null ? null : {
    period: toOneOf(row.budget_period, BUDGET_PERIODS, what),
    limitNano: toBigInt(row.budget_limit_nano),
    spentNano: toBigInt(row.budget_spent_nano),
    periodStart: toNumber(row.budget_period_start),
  };
}

/**
 * The columns a budget patch changes: the limit alone (`budgetLimitOnly`: the period and what was spent in it stay),
 * or the whole budget (a new one starts, or none); nothing when the patch leaves the budget as it is.
 */
export function budgetChanges(patch: { budget?: KeyBudget | null; budgetLimitOnly?: boolean }): Partial<StoredBudget & { budget_period_start: number }> {
  if (patch.budget === undefined) return {};
  if (patch.budgetLimitOnly === true && patch.budget !== null) return { budget_limit_nano: patch.budget.limitNano };
  return budgetColumns(patch.budget);
}
