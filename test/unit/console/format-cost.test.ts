import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatCost, formatHostedTools, formatUsd } from '../../../web/src/format/format.js';

describe('console cost formatting', () => {
  it('shows a request of a few cents with its fractions, as its hosted-tool part is shown beside it', () => {
    expect(formatCost(0.0253)).toBe('$0.0253');
    expect(formatHostedTools({ web_searches: 1, hosted_tool_cost_usd: 0.025 })).toBe('1 web search · $0.025');
    expect(formatCost(0.000123)).toBe('$0.000123');
    expect(formatCost(0.5)).toBe('$0.50');
    expect(formatCost(0)).toBe('$0.00');
    expect(formatCost(null)).toBe('—');
  });

  it('shows a dollar or more in whole cents, and balances in whole cents, both cut toward zero', () => {
    expect(formatCost(1.2399)).toBe('$1.23');
    expect(formatCost(-0.0253)).toBe('-$0.0253');
    expect(formatUsd(7.9994015)).toBe('$7.99');
    expect(formatUsd(0.0253)).toBe('$0.02');
  });

  it('never shows more than the amount', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 5_000_000_000_000 }), (nano) => {
      const usd = nano / 1e9;
      const shown = Number(formatCost(usd).replace(/[$,]/g, ''));
      expect(shown).toBeLessThanOrEqual(usd);
      expect(usd - shown).toBeLessThan(usd < 1 ? 1e-6 : 0.01);
    }));
  });
});
