import type { PlanPeriod } from '../domain/records.js';

const DAY_MS = 86_400_000;

function addPeriod(start: number, period: PlanPeriod, count: number): number {
  switch (period) {
    case 'day':
      return start + count * DAY_MS;
    case 'week':
      return start + count * 7 * DAY_MS;
    case 'month': {
      const date = new Date(start);
      const day = date.getUTCDate();
      date.setUTCDate(1);
      date.setUTCMonth(date.getUTCMonth() + count);
      const lastDay = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 0)).getUTCDate();
      date.setUTCDate(Math.min(day, lastDay));
      return date.getTime();
    }
    default: {
      const unknown: never = period;
      throw new Error(`unknown period ${String(unknown)}`);
    }
  }
}

/**
 * The billing period that contains `now`, counted from the subscription's start (UTC; a month period started on
 * the 31st ends on the last day of shorter months). Before the start, the first period.
 */
export function currentPeriod(startsAt: number, period: PlanPeriod, now: number): { start: number; end: number } {
  if (now < startsAt) return { start: startsAt, end: addPeriod(startsAt, period, 1) };
  let count = period === 'month' ? 0 : Math.floor((now - startsAt) / (period === 'day' ? DAY_MS : 7 * DAY_MS));
  if (period === 'month') {
    const from = new Date(startsAt);
    const to = new Date(now);
    count = Math.max(0, (to.getUTCFullYear() - from.getUTCFullYear()) * 12 + to.getUTCMonth() - from.getUTCMonth() - 1);
  }
  let start = addPeriod(startsAt, period, count);
  let end = addPeriod(startsAt, period, count + 1);
  while (end <= now) {
    count += 1;
    start = end;
    end = addPeriod(startsAt, period, count + 1);
  }
  return { start, end };
}
