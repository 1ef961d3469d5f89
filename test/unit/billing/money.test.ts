import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MoneyFormatError, NANO_PER_USD, nanoToDecimalString, nanoToUsd, usdToNano } from '../../../src/billing/money.js';

describe('usdToNano', () => {
  it.each<[number, bigint]>([
    [0, 0n],
    [-0, 0n],
    [1, 1_000_000_000n],
    [12.5, 12_500_000_000n],
    [0.1, 100_000_000n],
    [0.3, 300_000_000n],
    [123456.789, 123_456_789_000_000n],
    [0.000000001, 1n],
    [1e-7, 100n],
    [1.5e-7, 150n],
    [2.5e-8, 25n],
    [-1e-9, -1n],
    [-0.000000001, -1n],
    [-12.25, -12_250_000_000n],
    [1e21, 10n ** 30n],
    [1.5e22, 15n * 10n ** 30n],
  ])('converts the number %s exactly to %s nano', (value, expected) => {
    expect(usdToNano(value)).toBe(expected);
  });

  it.each<[string, bigint]>([
    ['0', 0n],
    ['12.5', 12_500_000_000n],
    [' 12.5 ', 12_500_000_000n],
    ['-0.000000001', -1n],
    ['0.000000001', 1n],
    ['0.000000001000', 1n],
    ['1.0000000000000', 1_000_000_000n],
    ['007', 7_000_000_000n],
    // Above 2^53 nano: these cannot be carried by a double, only by a string.
    ['9007199.254740993', 9_007_199_254_740_993n],
    ['123456789012345678.123456789', 123_456_789_012_345_678_123_456_789n],
    ['-99999999999999999999.999999999', -99_999_999_999_999_999_999_999_999_999n],
  ])('converts the string %j exactly to %s nano', (value, expected) => {
    expect(usdToNano(value)).toBe(expected);
  });

  it.each<number | string>([2.5e-9, 1e-10, 1.5e-9, 0.1 + 0.2, '0.0000000001', '0.0000000015', '-0.0000000001', '1.1234567891'])(
    'refuses %s as finer than one nano-USD',
    (value) => {
      expect(() => usdToNano(value)).toThrow(MoneyFormatError);
      expect(() => usdToNano(value)).toThrow(/finer than 1e-9/);
    },
  );

  it.each<number | string>([
    Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY,
    '', ' ', 'abc', 'NaN', 'Infinity', '-Infinity', '1.2.3', '1,5', '+1', '.5', '5.', '--1', '0x10', '1e', '$5', '5 USD', '1 2',
  ])('refuses %j', (value) => {
    expect(() => usdToNano(value)).toThrow(MoneyFormatError);
  });

  it('produces a MoneyFormatError named as such', () => {
    try {
      usdToNano('garbage');
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(MoneyFormatError);
      expect((error as Error).name).toBe('MoneyFormatError');
      expect((error as Error).message).toContain('garbage');
    }
  });

  it('agrees for a JSON number and its decimal string', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1_000_000_000, max: 1_000_000_000 }), fc.integer({ min: 0, max: 6 }), (units, scale) => {
        // units / 10^scale has at most 6 decimals, so both forms denote the same exact amount.
        const text = (units / 10 ** scale).toFixed(scale);
        expect(usdToNano(Number(text))).toBe(usdToNano(text));
      }),
      { numRuns: 300 },
    );
  });
});

describe('nanoToDecimalString and nanoToUsd', () => {
  it.each<[bigint, string]>([
    [0n, '0'],
    [1n, '0.000000001'],
    [-1n, '-0.000000001'],
    [1_500_000_000n, '1.5'],
    [-1_500_000_000n, '-1.5'],
    [NANO_PER_USD, '1'],
    [100n, '0.0000001'],
    [123_456_789_000_000n, '123456.789'],
    [10n ** 30n, `1${'0'.repeat(21)}`],
    [9_007_199_254_740_993n, '9007199.254740993'],
  ])('%s nano prints as %s', (nano, text) => {
    expect(nanoToDecimalString(nano)).toBe(text);
  });

  it.each<[bigint, number]>([
    [0n, 0],
    [1n, 1e-9],
    [-1n, -1e-9],
    [1_500_000_000n, 1.5],
    [12_345_678_901n, 12.345678901],
  ])('%s nano is the number %s', (nano, usd) => {
    expect(nanoToUsd(nano)).toBe(usd);
  });

  it('round-trips any bigint through the decimal string', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }), (nano) => {
        expect(usdToNano(nanoToDecimalString(nano))).toBe(nano);
      }),
      { numRuns: 1000 },
    );
  });

  it('round-trips small amounts (fraction-heavy) through the decimal string', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 10n), max: 10n ** 10n }), (nano) => {
        expect(usdToNano(nanoToDecimalString(nano))).toBe(nano);
      }),
      { numRuns: 500 },
    );
  });

  it('round-trips through a JSON number while one nano-USD is coarser than a double ulp (below 2^23 USD)', () => {
    const limit = 2n ** 23n * NANO_PER_USD - 1n;
    fc.assert(
      fc.property(fc.bigInt({ min: -limit, max: limit }), (nano) => {
        expect(usdToNano(nanoToUsd(nano))).toBe(nano);
        expect(usdToNano(JSON.parse(JSON.stringify({ usd: nanoToUsd(nano) })).usd as number)).toBe(nano);
      }),
      { numRuns: 1000 },
    );
  });

  it('the decimal string never has a trailing zero in the fraction or a trailing point', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }), (nano) => {
        const text = nanoToDecimalString(nano);
        expect(text).toMatch(/^-?\d+(\.\d*[1-9])?$/);
        expect(text.startsWith('-')).toBe(nano < 0n);
      }),
      { numRuns: 500 },
    );
  });
});
