import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addUsd, sumUsd } from '../../../web/src/format/usd-sum.js';

/** What the console shows: the amount rounded to the micro-dollar. */
const shown = (usd: number): string => usd.toFixed(6);

describe('console USD sums', () => {
  it('add five request costs to the total the server reports, where a float sum is a micro-dollar off', () => {
    // Five rows of one customer's day whose exact total is 0.0000595 USD: the float sum rounds down.
    const rows = [0.000004676, 0.000026789, 0.000007721, 0.00001267, 0.000007644];
    expect(shown(rows.reduce((sum, value) => sum + value, 0))).toBe('0.000059');
    expect(shown(sumUsd(rows))).toBe('0.000060');
    expect(shown(rows.reduce(addUsd, 0))).toBe('0.000060');
    expect(sumUsd(rows)).toBe(0.0000595);
  });

  it('equal the integer sum of the nano-dollars, in any order and grouping', () => {
    fc.assert(fc.property(fc.array(fc.integer({ min: 0, max: 5_000_000_000 }), { maxLength: 200 }), (nanos) => {
      const exact = nanos.reduce((sum, nano) => sum + nano, 0) / 1e9;
      const usd = nanos.map((nano) => nano / 1e9);
      expect(sumUsd(usd)).toBe(exact);
      expect(usd.reduce(addUsd, 0)).toBe(exact);
      expect([...usd].reverse().reduce(addUsd, 0)).toBe(exact);
    }));
  });
});
