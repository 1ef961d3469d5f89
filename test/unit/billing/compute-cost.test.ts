import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { computeCost, hostedToolCost, imagePrice, type BillableUsage } from '../../../src/billing/compute-cost.js';
import type { Usage } from '../../../src/ir/usage.js';
import { NO_PRICES, type Pricing } from '../../../src/domain/model-records.js';

const USD = 1_000_000_000n;

function pricing(overrides: Partial<Pricing> = {}): Pricing {
  return { ...NO_PRICES, ...overrides };
}

function tokens(counts: { noCache?: number; cacheRead?: number; cacheWrite?: number; text?: number; reasoning?: number }): Usage {
  const { noCache = 0, cacheRead = 0, cacheWrite = 0, text = 0, reasoning = 0 } = counts;
  return {
    input: { total: noCache + cacheRead + cacheWrite, noCache, cacheRead, cacheWrite },
    output: { total: text + reasoning, text, reasoning },
  };
}

describe('computeCost', () => {
  it('prices input and output tokens per million', () => {
    const price = pricing({ inputPerMtokNano: 2_500_000_000n, outputPerMtokNano: 10n * USD });
    // 1000 in at $2.50/M = $0.0025; 500 out at $10/M = $0.005.
    expect(computeCost(price, { tokens: tokens({ noCache: 1000, text: 500 }) })).toBe(7_500_000n);
  });

  it('is free when nothing is priced', () => {
    expect(computeCost(pricing(), { tokens: tokens({ noCache: 5000, text: 5000 }), images: 3, audioSeconds: 60, characters: 100 })).toBe(0n);
  });

  it('rounds up once over the summed components, not per component', () => {
    const price = pricing({ inputPerMtokNano: 400_000n, outputPerMtokNano: 400_000n });
    // 0.4 + 0.4 = 0.8 nano: one nano (rounding each up would give 2, rounding down 0).
    expect(computeCost(price, { tokens: tokens({ noCache: 1, text: 1 }) })).toBe(1n);
    // 0.6 + 0.6 = 1.2 nano → 2.
    const bigger = pricing({ inputPerMtokNano: 600_000n, outputPerMtokNano: 600_000n });
    expect(computeCost(bigger, { tokens: tokens({ noCache: 1, text: 1 }) })).toBe(2n);
  });

  it('does not round an exact amount up', () => {
    expect(computeCost(pricing({ inputPerMtokNano: 3n }), { tokens: tokens({ noCache: 1_000_000 }) })).toBe(3n);
    expect(computeCost(pricing({ inputPerMtokNano: 3n }), { tokens: tokens({ noCache: 1_000_001 }) })).toBe(4n);
    expect(computeCost(pricing({ inputPerMtokNano: 1n }), { tokens: tokens({ noCache: 1 }) })).toBe(1n);
  });

  it('never charges for zero tokens', () => {
    expect(computeCost(pricing({ inputPerMtokNano: USD, outputPerMtokNano: USD }), { tokens: tokens({}) })).toBe(0n);
  });

  it('is exact beyond double precision', () => {
    // 4e15 tokens × 123456789 nano per million = 493827156000000000 nano (not representable as a double).
    const cost = computeCost(pricing({ inputPerMtokNano: 123_456_789n }), { tokens: tokens({ noCache: 4e15 }) });
    expect(cost).toBe(493_827_156_000_000_000n);
  });

  it('charges cached input at the cached price, falling back to the input price when none is set', () => {
    const usage = { tokens: tokens({ noCache: 1000, cacheRead: 3000 }) };
    expect(computeCost(pricing({ inputPerMtokNano: 2n * USD }), usage)).toBe(8_000_000n);
    expect(computeCost(pricing({ inputPerMtokNano: 2n * USD, cachedInputPerMtokNano: USD / 2n }), usage)).toBe(2_000_000n + 1_500_000n);
    // An explicit zero cached price is a price, not a missing one.
    expect(computeCost(pricing({ inputPerMtokNano: 2n * USD, cachedInputPerMtokNano: 0n }), usage)).toBe(2_000_000n);
  });

  it('charges cache writes at the input price', () => {
    const price = pricing({ inputPerMtokNano: 2n * USD, cachedInputPerMtokNano: 1n });
    expect(computeCost(price, { tokens: tokens({ cacheWrite: 1000 }) })).toBe(2_000_000n);
  });

  it('counts reasoning tokens as output', () => {
    const price = pricing({ outputPerMtokNano: 10n * USD });
    const withReasoning = computeCost(price, { tokens: tokens({ text: 40, reasoning: 60 }) });
    expect(withReasoning).toBe(1_000_000n);
    expect(withReasoning).toBe(computeCost(price, { tokens: tokens({ text: 100 }) }));
    expect(computeCost(price, { tokens: tokens({ reasoning: 100 }) })).toBe(1_000_000n);
  });

  it('adds the per-request price once, outside the per-million rounding', () => {
    const price = pricing({ perRequestNano: 5n, inputPerMtokNano: 1n });
    expect(computeCost(price, {})).toBe(5n);
    expect(computeCost(price, { tokens: tokens({ noCache: 1 }) })).toBe(6n);
  });

  it('prices images per image', () => {
    const price = pricing({ perImageNano: 40_000_000n });
    expect(computeCost(price, { images: 3 })).toBe(120_000_000n);
    expect(computeCost(price, { images: 0 })).toBe(0n);
    expect(computeCost(price, {})).toBe(0n);
  });

  it('prices audio per minute on whole seconds, rounding up', () => {
    const price = pricing({ perAudioMinuteNano: 6_000_000n });
    expect(computeCost(price, { audioSeconds: 90 })).toBe(9_000_000n);
    expect(computeCost(price, { audioSeconds: 60 })).toBe(6_000_000n);
    // 1.2 s bills as 2 s.
    expect(computeCost(price, { audioSeconds: 1.2 })).toBe(200_000n);
    // One second at one nano a minute is a fraction of a nano: rounds up to 1.
    expect(computeCost(pricing({ perAudioMinuteNano: 1n }), { audioSeconds: 1 })).toBe(1n);
    expect(computeCost(price, { audioSeconds: 0 })).toBe(0n);
    expect(computeCost(pricing(), { audioSeconds: 90 })).toBe(0n);
  });

  it('prices characters per million, sharing the single rounding with tokens', () => {
    expect(computeCost(pricing({ perMcharNano: 15n * USD }), { characters: 1000 })).toBe(15_000_000n);
    const price = pricing({ perMcharNano: 500_000n, inputPerMtokNano: 500_000n });
    expect(computeCost(price, { characters: 1, tokens: tokens({ noCache: 1 }) })).toBe(1n);
  });

  it('adds every component together', () => {
    const price = pricing({
      inputPerMtokNano: USD, outputPerMtokNano: 2n * USD, perRequestNano: 7n, perImageNano: 100n, perAudioMinuteNano: 60n, perMcharNano: USD,
    });
    const usage: BillableUsage = { tokens: tokens({ noCache: 1_000_000, text: 1_000_000 }), images: 2, audioSeconds: 30, characters: 1_000_000 };
    expect(computeCost(price, usage)).toBe(USD + 2n * USD + USD + 7n + 200n + 30n);
  });
});

const priceArb = fc.option(fc.bigInt({ min: 0n, max: 100_000_000_000n }), { nil: null });
const pricingArb = fc.record({
  inputPerMtokNano: priceArb,
  outputPerMtokNano: priceArb,
  cachedInputPerMtokNano: priceArb,
  cacheWritePerMtokNano: priceArb,
  perRequestNano: priceArb,
  perImageNano: priceArb,
  perAudioMinuteNano: priceArb,
  perMcharNano: priceArb,
  perWebSearchNano: priceArb,
  perGroundedPromptNano: priceArb,
  perWebFetchNano: priceArb,
  perFileSearchNano: priceArb,
  perSearchUnitNano: priceArb,
  batchInputPerMtokNano: priceArb,
  batchOutputPerMtokNano: priceArb,
});
const count = fc.integer({ min: 0, max: 50_000_000 });
const countsArb = fc.record({ noCache: count, cacheRead: count, cacheWrite: count, text: count, reasoning: count, images: fc.integer({ min: 0, max: 100 }),
  audioTenths: fc.integer({ min: 0, max: 100_000 }), characters: count, webSearch: fc.integer({ min: 0, max: 50 }), webFetch: fc.integer({ min: 0, max: 50 }),
  fileSearch: fc.integer({ min: 0, max: 50 }) });
type Counts = {
  noCache: number; cacheRead: number; cacheWrite: number; text: number; reasoning: number; images: number; audioTenths: number; characters: number;
  webSearch: number; webFetch: number; fileSearch: number;
};

function billable(counts: Counts): BillableUsage {
  const hostedTools = { webSearch: counts.webSearch, webFetch: counts.webFetch, fileSearch: counts.fileSearch };
  return { tokens: { ...tokens(counts), hostedTools }, images: counts.images, audioSeconds: counts.audioTenths / 10, characters: counts.characters };
}

describe('computeCost cache writes and long-context tiers', () => {
  it('bills cache writes at their own price, and as input when they have none', () => {
    const usage = { tokens: tokens({ noCache: 1_000_000, cacheWrite: 1_000_000 }) };
    expect(computeCost(pricing({ inputPerMtokNano: 3n * USD, cacheWritePerMtokNano: 3_750_000_000n }), usage)).toBe(3n * USD + 3_750_000_000n);
    expect(computeCost(pricing({ inputPerMtokNano: 3n * USD }), usage)).toBe(6n * USD);
  });

  it('bills the whole request at the tier once the input passes its threshold', () => {
    const tiered = pricing({
      inputPerMtokNano: 3n * USD, outputPerMtokNano: 15n * USD,
      tiers: [{ aboveInputTokens: 200_000, inputPerMtokNano: 6n * USD, outputPerMtokNano: 22_500_000_000n, cachedInputPerMtokNano: null, cacheWritePerMtokNano: null }],
    });
    expect(computeCost(tiered, { tokens: tokens({ noCache: 200_000, text: 1_000_000 }) })).toBe(600_000_000n + 15n * USD);
    expect(computeCost(tiered, { tokens: tokens({ noCache: 200_001, text: 1_000_000 }) })).toBe(1_200_006_000n + 22_500_000_000n);
  });
});

describe('computeCost properties', () => {
  it('is never negative and never below the per-request price', () => {
    fc.assert(
      fc.property(pricingArb, countsArb, (price, counts) => {
        const cost = computeCost(price, billable(counts));
        expect(cost >= 0n).toBe(true);
        expect(cost >= (price.perRequestNano ?? 0n)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('is monotonic in each count', () => {
    const field = fc.constantFrom<keyof Counts>('noCache', 'cacheRead', 'cacheWrite', 'text', 'reasoning', 'images', 'audioTenths', 'characters', 'webSearch', 'webFetch', 'fileSearch');
    fc.assert(
      fc.property(pricingArb, countsArb, field, fc.integer({ min: 1, max: 1_000_000 }), (price, counts, name, extra) => {
        const more = { ...counts, [name]: counts[name] + extra };
        expect(computeCost(price, billable(more)) >= computeCost(price, billable(counts))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('equals the exact per-million sum rounded up once, plus the flat parts', () => {
    fc.assert(
      fc.property(pricingArb, countsArb, (price, counts) => {
        const input = price.inputPerMtokNano ?? 0n;
        const cached = price.cachedInputPerMtokNano ?? input;
        const cacheWrite = price.cacheWritePerMtokNano ?? input;
        const perMillion = BigInt(counts.noCache) * input + BigInt(counts.cacheWrite) * cacheWrite + BigInt(counts.cacheRead) * cached
          + BigInt(counts.text + counts.reasoning) * (price.outputPerMtokNano ?? 0n) + BigInt(counts.characters) * (price.perMcharNano ?? 0n);
        const audioSeconds = BigInt(Math.ceil(counts.audioTenths / 10));
        const audio = price.perAudioMinuteNano === null ? 0n : (audioSeconds * price.perAudioMinuteNano + 59n) / 60n;
        const tools = BigInt(counts.webSearch) * (price.perWebSearchNano ?? 0n) + (counts.webSearch > 0 ? (price.perGroundedPromptNano ?? 0n) : 0n)
          + BigInt(counts.webFetch) * (price.perWebFetchNano ?? 0n) + BigInt(counts.fileSearch) * (price.perFileSearchNano ?? 0n);
        const expected = (perMillion + 999_999n) / 1_000_000n + (price.perRequestNano ?? 0n) + BigInt(counts.images) * (price.perImageNano ?? 0n) + audio + tools;
        expect(computeCost(price, billable(counts))).toBe(expected);
      }),
      { numRuns: 300 },
    );
  });
});

describe('hosted tool calls', () => {
  const searches = (webSearch: number, webFetch = 0, fileSearch = 0): Usage => ({ ...tokens({ noCache: 1000, text: 100 }), hostedTools: { webSearch, webFetch, fileSearch } });

  it('bills each web search, web fetch and file search at its price on top of the tokens', () => {
    const price = pricing({ inputPerMtokNano: 3n * USD, outputPerMtokNano: 15n * USD, perWebSearchNano: 10_000_000n, perWebFetchNano: 1_000_000n, perFileSearchNano: 2_500_000n });
    // 1,000 × $3/M + 100 × $15/M = $0.0045; three searches $0.03, two fetches $0.002, one file search $0.0025.
    expect(computeCost(price, { tokens: searches(3, 2, 1) })).toBe(4_500_000n + 30_000_000n + 2_000_000n + 2_500_000n);
    expect(computeCost(price, { tokens: searches(0) })).toBe(4_500_000n);
  });

  it('bills a grounded prompt once however many searches it ran (Gemini 2.x), nothing when it ran none', () => {
    const price = pricing({ perGroundedPromptNano: 35_000_000n });
    expect(hostedToolCost(price, { webSearch: 3, webFetch: 0, fileSearch: 0 })).toBe(35_000_000n);
    expect(hostedToolCost(price, { webSearch: 1, webFetch: 0, fileSearch: 0 })).toBe(35_000_000n);
    expect(hostedToolCost(price, { webSearch: 0, webFetch: 0, fileSearch: 0 })).toBe(0n);
    expect(hostedToolCost(price, undefined)).toBe(0n);
  });

  it('takes the calls given apart over those of the token usage (the hold bounds them so)', () => {
    const price = pricing({ perWebSearchNano: 14_000_000n });
    expect(computeCost(price, { tokens: searches(3), hostedTools: { webSearch: 10, webFetch: 0, fileSearch: 0 } })).toBe(140_000_000n);
  });
});

describe('per-image prices by size and quality', () => {
  const dalle3 = pricing({ perImageBySize: { 'standard 1024x1024': 40_000_000n, 'standard 1024x1792': 80_000_000n, 'hd 1024x1024': 80_000_000n, 'hd 1024x1792': 120_000_000n } });
  const dalle2 = pricing({ perImageBySize: { '256x256': 16_000_000n, '512x512': 18_000_000n, '1024x1024': 20_000_000n } });

  it('prices the variant asked for, with OpenAI\'s defaults for what the request left out', () => {
    expect(imagePrice(dalle3, { size: '1024x1792', quality: 'hd' })).toBe(120_000_000n);
    expect(imagePrice(dalle3, {})).toBe(40_000_000n);
    expect(imagePrice(dalle3, { quality: 'hd' })).toBe(80_000_000n);
    expect(imagePrice(dalle2, { size: '512x512' })).toBe(18_000_000n);
    expect(computeCost(dalle3, { images: 2, imageVariant: { size: '1024x1792', quality: 'hd' } })).toBe(240_000_000n);
  });

  it('bills a variant the table does not list at the flat price, else at the dearest listed', () => {
    expect(imagePrice({ ...dalle3, perImageNano: 50_000_000n }, { size: '2048x2048' })).toBe(50_000_000n);
    expect(imagePrice(dalle3, { size: '2048x2048' })).toBe(120_000_000n);
    expect(imagePrice(pricing({ perImageNano: 7n }), { size: '1024x1792', quality: 'hd' })).toBe(7n);
  });
});
