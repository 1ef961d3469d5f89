import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { currentPeriod } from '../../../src/billing/subscription-period.js';
import type { PlanPeriod } from '../../../src/domain/records.js';

const DAY = 86_400_000;
const utc = (year: number, month: number, day: number, hour = 0, minute = 0): number => Date.UTC(year, month - 1, day, hour, minute);

describe('currentPeriod: day and week', () => {
  const start = utc(2024, 3, 10, 9, 30);

  it('counts whole days from the start', () => {
    expect(currentPeriod(start, 'day', start)).toEqual({ start, end: start + DAY });
    expect(currentPeriod(start, 'day', start + 2.5 * DAY)).toEqual({ start: start + 2 * DAY, end: start + 3 * DAY });
  });

  it('counts whole weeks from the start', () => {
    expect(currentPeriod(start, 'week', start + 6 * DAY)).toEqual({ start, end: start + 7 * DAY });
    expect(currentPeriod(start, 'week', start + 20 * DAY)).toEqual({ start: start + 14 * DAY, end: start + 21 * DAY });
  });

  it('treats the end as exclusive', () => {
    expect(currentPeriod(start, 'day', start + DAY - 1)).toEqual({ start, end: start + DAY });
    expect(currentPeriod(start, 'day', start + DAY)).toEqual({ start: start + DAY, end: start + 2 * DAY });
    expect(currentPeriod(start, 'week', start + 7 * DAY - 1)).toEqual({ start, end: start + 7 * DAY });
    expect(currentPeriod(start, 'week', start + 7 * DAY)).toEqual({ start: start + 7 * DAY, end: start + 14 * DAY });
  });

  it('gives the first period before the start', () => {
    expect(currentPeriod(start, 'day', start - 5 * DAY)).toEqual({ start, end: start + DAY });
    expect(currentPeriod(start, 'week', start - 1)).toEqual({ start, end: start + 7 * DAY });
  });
});

describe('currentPeriod: month', () => {
  it('clamps a start on the 31st to the end of shorter months without drifting (leap year)', () => {
    const start = utc(2024, 1, 31, 12);
    expect(currentPeriod(start, 'month', utc(2024, 2, 10))).toEqual({ start, end: utc(2024, 2, 29, 12) });
    expect(currentPeriod(start, 'month', utc(2024, 3, 5))).toEqual({ start: utc(2024, 2, 29, 12), end: utc(2024, 3, 31, 12) });
    expect(currentPeriod(start, 'month', utc(2024, 4, 1))).toEqual({ start: utc(2024, 3, 31, 12), end: utc(2024, 4, 30, 12) });
    expect(currentPeriod(start, 'month', utc(2024, 5, 15))).toEqual({ start: utc(2024, 4, 30, 12), end: utc(2024, 5, 31, 12) });
  });

  it('clamps to February 28 in a common year', () => {
    const start = utc(2023, 1, 31);
    expect(currentPeriod(start, 'month', utc(2023, 2, 1))).toEqual({ start, end: utc(2023, 2, 28) });
    expect(currentPeriod(start, 'month', utc(2023, 3, 1))).toEqual({ start: utc(2023, 2, 28), end: utc(2023, 3, 31) });
  });

  it('keeps the 30th on the 30th after February', () => {
    const start = utc(2023, 1, 30, 8);
    expect(currentPeriod(start, 'month', utc(2023, 3, 15))).toEqual({ start: utc(2023, 2, 28, 8), end: utc(2023, 3, 30, 8) });
    expect(currentPeriod(start, 'month', utc(2023, 3, 30, 8))).toEqual({ start: utc(2023, 3, 30, 8), end: utc(2023, 4, 30, 8) });
  });

  it('crosses the year boundary', () => {
    const start = utc(2023, 12, 15, 6);
    expect(currentPeriod(start, 'month', utc(2024, 1, 20))).toEqual({ start: utc(2024, 1, 15, 6), end: utc(2024, 2, 15, 6) });
    expect(currentPeriod(start, 'month', utc(2024, 1, 10))).toEqual({ start, end: utc(2024, 1, 15, 6) });
  });

  it('treats the end as exclusive, to the millisecond', () => {
    const start = utc(2024, 1, 31, 12);
    const boundary = utc(2024, 2, 29, 12);
    expect(currentPeriod(start, 'month', boundary - 1)).toEqual({ start, end: boundary });
    expect(currentPeriod(start, 'month', boundary)).toEqual({ start: boundary, end: utc(2024, 3, 31, 12) });
    expect(currentPeriod(start, 'month', start)).toEqual({ start, end: boundary });
  });

  it('gives the first period before the start', () => {
    const start = utc(2024, 1, 31);
    expect(currentPeriod(start, 'month', utc(2023, 6, 1))).toEqual({ start, end: utc(2024, 2, 29) });
  });

  it('still lands on the right day decades later', () => {
    const start = utc(2000, 1, 31, 23, 59);
    expect(currentPeriod(start, 'month', utc(2100, 2, 15))).toEqual({ start: utc(2100, 1, 31, 23, 59), end: utc(2100, 2, 28, 23, 59) });
  });
});

/** Reference month arithmetic: the start's day (clamped to the month's length) and time, `k` months later. */
function monthStep(startsAt: number, k: number): number {
  const from = new Date(startsAt);
  const year = from.getUTCFullYear();
  const month = from.getUTCMonth() + k;
  const daysInMonth = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  return Date.UTC(year, month, Math.min(from.getUTCDate(), daysInMonth), from.getUTCHours(), from.getUTCMinutes(), from.getUTCSeconds(), from.getUTCMilliseconds());
}

describe('currentPeriod properties', () => {
  const startArb = fc.integer({ min: utc(1971, 1, 1), max: utc(2090, 1, 1) });
  const offsetArb = fc.oneof(fc.integer({ min: 0, max: 40 * 366 * DAY }), fc.integer({ min: 0, max: 3 * DAY }));
  const periodArb = fc.constantFrom<PlanPeriod>('day', 'week', 'month');

  it('contains now: start <= now < end, and start is not before the subscription', () => {
    fc.assert(
      fc.property(startArb, offsetArb, periodArb, (startsAt, offset, period) => {
        const now = startsAt + offset;
        const { start, end } = currentPeriod(startsAt, period, now);
        expect(start).toBeLessThanOrEqual(now);
        expect(now).toBeLessThan(end);
        expect(start).toBeGreaterThanOrEqual(startsAt);
      }),
      { numRuns: 1000 },
    );
  });

  it('day and week periods are whole multiples of their length from the start', () => {
    fc.assert(
      fc.property(startArb, offsetArb, fc.constantFrom<PlanPeriod>('day', 'week'), (startsAt, offset, period) => {
        const length = period === 'day' ? DAY : 7 * DAY;
        const { start, end } = currentPeriod(startsAt, period, startsAt + offset);
        expect(end - start).toBe(length);
        expect((start - startsAt) % length).toBe(0);
      }),
      { numRuns: 500 },
    );
  });

  it('month periods start and end on consecutive clamped anniversaries of the start', () => {
    fc.assert(
      fc.property(startArb, offsetArb, (startsAt, offset) => {
        const { start, end } = currentPeriod(startsAt, 'month', startsAt + offset);
        const from = new Date(startsAt);
        const at = new Date(start);
        const k = (at.getUTCFullYear() - from.getUTCFullYear()) * 12 + at.getUTCMonth() - from.getUTCMonth();
        expect(start).toBe(monthStep(startsAt, k));
        expect(end).toBe(monthStep(startsAt, k + 1));
      }),
      { numRuns: 1000 },
    );
  });

  it('before the start, always the first period', () => {
    fc.assert(
      fc.property(startArb, fc.integer({ min: 1, max: 400 * DAY }), periodArb, (startsAt, before, period) => {
        const first = currentPeriod(startsAt, period, startsAt);
        expect(currentPeriod(startsAt, period, startsAt - before)).toEqual(first);
        expect(first.start).toBe(startsAt);
      }),
      { numRuns: 300 },
    );
  });
});
