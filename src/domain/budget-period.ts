import type { BudgetPeriod, KeyBudget, NanoUsd } from './records.js';

const DAY_MS = 86_400_000;
/** 1970-01-01 was a Thursday: weeks (from Monday 00:00 UTC) start 3 days after the epoch's multiples of 7 days. */
const MONDAY_OFFSET_MS = 4 * DAY_MS;

/** The calendar period containing `now`, in UTC: a day from 00:00, a week from Monday 00:00, a month from the 1st. */
export function budgetPeriodAt(period: BudgetPeriod, now: number): { start: number; end: number } {
  switch (period) {
    case 'day': {
      const start = Math.floor(now / DAY_MS) * DAY_MS;
      return { start, end: start + DAY_MS };
    }
    case 'week': {
      const start = Math.floor((now - MONDAY_OFFSET_MS) / (7 * DAY_MS)) * 7 * DAY_MS + MONDAY_OFFSET_MS;
      return { start, end: start + 7 * DAY_MS };
    }
    case 'month': {
      const date = new Date(now);
      return { start: Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1), end: Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1) };
    }
    default: {
      const unknown: never = period;
      throw new Error(`unknown budget period ${String(unknown)}`);
    }
  }
}

/** What the budget has spent in the period containing `now` (a stored spend of an earlier period counts as 0). */
export function budgetSpentAt(budget: Pick<KeyBudget, 'period' | 'spentNano' | 'periodStart'>, now: number): NanoUsd {
  return budget.periodStart === budgetPeriodAt(budget.period, now).start ? budget.spentNano : 0n;
}
