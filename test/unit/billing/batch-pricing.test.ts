import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { batchPricing } from '../../../src/billing/batch-pricing.js';
import { NO_PRICES, type Pricing } from '../../../src/domain/model-records.js';

const base: Pricing = { ...NO_PRICES, inputPerMtokNano: 2_000_000_000n, outputPerMtokNano: 8_000_000_000n, cachedInputPerMtokNano: 200_000_000n, perRequestNano: 1_000n };

describe('batchPricing', () => {
  it('is the normal price when the model has no batch price', () => {
    expect(batchPricing(base)).toBe(base);
  });

  it('takes the batch prices and moves cached input and long-context tiers by the same ratio', () => {
    const pricing: Pricing = {
      ...base, batchInputPerMtokNano: 1_000_000_000n, batchOutputPerMtokNano: 4_000_000_000n,
      tiers: [{ aboveInputTokens: 200_000, inputPerMtokNano: 4_000_000_000n, outputPerMtokNano: 12_000_000_000n, cachedInputPerMtokNano: 400_000_000n, cacheWritePerMtokNano: null }],
    };
    expect(batchPricing(pricing)).toMatchObject({
      inputPerMtokNano: 1_000_000_000n, outputPerMtokNano: 4_000_000_000n, cachedInputPerMtokNano: 100_000_000n, perRequestNano: 1_000n,
      tiers: [{ aboveInputTokens: 200_000, inputPerMtokNano: 2_000_000_000n, outputPerMtokNano: 6_000_000_000n, cachedInputPerMtokNano: 200_000_000n, cacheWritePerMtokNano: null }],
    });
  });

  it('keeps the other side at its normal price when only one batch price is set', () => {
    expect(batchPricing({ ...base, batchOutputPerMtokNano: 1n })).toMatchObject({ inputPerMtokNano: 2_000_000_000n, outputPerMtokNano: 1n, cachedInputPerMtokNano: 200_000_000n });
  });

  it('never prices a derived rate above the normal one when the batch price is lower', () => {
    const nano = fc.bigInt({ min: 1n, max: 10n ** 12n });
    fc.assert(fc.property(nano, nano, nano, (normal, cached, batch) => {
      fc.pre(batch <= normal);
      const priced = batchPricing({ ...NO_PRICES, inputPerMtokNano: normal, cachedInputPerMtokNano: cached, batchInputPerMtokNano: batch });
      expect(priced.cachedInputPerMtokNano as bigint <= cached).toBe(true);
    }));
  });
});
