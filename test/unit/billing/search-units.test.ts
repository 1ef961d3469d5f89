import { describe, expect, it } from 'vitest';
import { computeCost } from '../../../src/billing/compute-cost.js';
import { searchUnitsOf } from '../../../src/billing/search-units.js';
import { NO_PRICES } from '../../../src/domain/model-records.js';

describe("Cohere's search-unit rule", () => {
  it('one query over up to 100 short documents is one unit; 101 are two', () => {
    expect(searchUnitsOf(10, Array.from({ length: 1 }, () => 50))).toBe(1);
    expect(searchUnitsOf(10, Array.from({ length: 100 }, () => 50))).toBe(1);
    expect(searchUnitsOf(10, Array.from({ length: 101 }, () => 50))).toBe(2);
  });

  it('a document over 500 tokens with the query counts one per 500-token chunk', () => {
    // 10 + 490 = 500: one chunk; 10 + 491 = 501: two.
    expect(searchUnitsOf(10, [...Array.from({ length: 99 }, () => 1), 490])).toBe(1);
    expect(searchUnitsOf(10, [...Array.from({ length: 99 }, () => 1), 491])).toBe(2);
    expect(searchUnitsOf(0, [50_000])).toBe(1);
    expect(searchUnitsOf(0, [50_001])).toBe(2);
  });

  it('max_tokens_per_doc cuts a document before it is chunked', () => {
    expect(searchUnitsOf(10, [...Array.from({ length: 99 }, () => 1), 10_000], 490)).toBe(1);
  });

  it('is billed per unit in nano-dollars, beside any token price', () => {
    const pricing = { ...NO_PRICES, perSearchUnitNano: 2_000_000n };
    expect(computeCost(pricing, { searchUnits: 3 })).toBe(6_000_000n);
    const both = { ...pricing, inputPerMtokNano: 20_000_000n };
    const tokens = { input: { total: 1234, noCache: 1234, cacheRead: 0, cacheWrite: 0 }, output: { total: 0, text: 0, reasoning: 0 } };
    // ceil(1234 × 0.02 USD / 1M) = 24 680 nano, plus one unit.
    expect(computeCost(both, { tokens, searchUnits: 1 })).toBe(24_680n + 2_000_000n);
  });
});
