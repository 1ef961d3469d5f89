import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { alertRetryDelayMs } from '../../../src/alerts/alert-checker.js';
import { quotaThresholdNano } from '../../../src/alerts/quota-threshold.js';

const MAX_QUOTA = 1_000_000_000n * 1_000_000_000n;

describe('quotaThresholdNano', () => {
  it('is ceil(quota × percent / 100), exactly, for every quota up to a billion USD', () => {
    fc.assert(fc.property(fc.bigInt({ min: 0n, max: MAX_QUOTA }), fc.integer({ min: 1, max: 100 }), (quota, percent) => {
      const exact = (quota * BigInt(percent) + 99n) / 100n;
      const threshold = quotaThresholdNano(quota, percent);
      expect(threshold).toBe(exact);
      // The smallest spend whose share reaches the percent.
      expect(threshold * 100n >= quota * BigInt(percent)).toBe(true);
      if (threshold > 0n) expect((threshold - 1n) * 100n < quota * BigInt(percent)).toBe(true);
    }), { numRuns: 2000 });
  });

  it('fires at the whole quota for 100 % and refuses percents outside 1..100', () => {
    expect(quotaThresholdNano(12_345n, 100)).toBe(12_345n);
    expect(quotaThresholdNano(1n, 1)).toBe(1n);
    expect(() => quotaThresholdNano(10n, 0)).toThrow(RangeError);
    expect(() => quotaThresholdNano(10n, 101)).toThrow(RangeError);
    expect(() => quotaThresholdNano(10n, 50.5)).toThrow(RangeError);
    expect(() => quotaThresholdNano(-1n, 50)).toThrow(RangeError);
  });
});

describe('alertRetryDelayMs', () => {
  it('starts at the check interval, doubles per failure and stops at the cap', () => {
    expect(alertRetryDelayMs(1, 1000, 60_000)).toBe(1000);
    expect(alertRetryDelayMs(2, 1000, 60_000)).toBe(2000);
    expect(alertRetryDelayMs(5, 1000, 60_000)).toBe(16_000);
    expect(alertRetryDelayMs(10, 1000, 60_000)).toBe(60_000);
    expect(alertRetryDelayMs(10_000, 30_000, 3_600_000)).toBe(3_600_000);
  });
});
