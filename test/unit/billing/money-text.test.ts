import { describe, expect, it } from 'vitest';
import { formatUsdText } from '../../../src/billing/money-text.js';

describe('formatUsdText', () => {
  it('shows whole cents cut toward zero, with thousands separated', () => {
    expect(formatUsdText(7_999_401_500n)).toBe('$7.99');
    expect(formatUsdText(8_000_000_000n)).toBe('$8.00');
    expect(formatUsdText(0n)).toBe('$0.00');
    expect(formatUsdText(1_234_567_890_000n)).toBe('$1,234.56');
    expect(formatUsdText(-1_500_000_000n)).toBe('-$1.50');
  });

  it('shows a non-zero amount below a cent to six decimals (below a millionth of a dollar: $0.00)', () => {
    expect(formatUsdText(123_456n)).toBe('$0.000123');
    expect(formatUsdText(5_000_000n)).toBe('$0.005');
    expect(formatUsdText(-9_999_999n)).toBe('-$0.009999');
    expect(formatUsdText(999n)).toBe('$0.00');
  });
});
