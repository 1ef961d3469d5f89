/**
 * The bundled catalog's batch prices: half the input and output token prices, in integer nano-USD rounded half up,
 * for the models the provider's own batch API takes (OpenAI, Anthropic, Google); none for any other provider or model;
 * and the operator's batch price (or own normal price) over them.
 */
import { describe, expect, it } from 'vitest';
import { batchPricing } from '../../../src/billing/batch-pricing.js';
import { computeCost } from '../../../src/billing/compute-cost.js';
import { BundledCatalog } from '../../../src/catalog/bundled-catalog.js';
import { overlayOperatorModel, operatorCopy, type CatalogModel } from '../../../src/catalog/catalog-model.js';
import { halfPrice, hasHalfPriceBatch, withProviderBatchPrices } from '../../../src/catalog/convert-prices.js';
import { NO_PRICES, type Pricing } from '../../../src/domain/model-records.js';
import type { Usage } from '../../../src/ir/usage.js';

const NOW = Date.parse('2026-11-25T12:00:00Z');
const catalog = new BundledCatalog(NOW);

function find(provider: string, id: string): CatalogModel {
  const found = catalog.provider(provider).find((bundled) => bundled.model.id === id);
  if (found === undefined) throw new Error(`${provider}/${id} is not in the bundled catalog`);
  return found.model;
}

const tokens = (input: number, output: number): Usage => ({ input: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 }, output: { total: output, text: output, reasoning: 0 } });

describe('halfPrice', () => {
  it('halves exactly, rounding a half nano up', () => {
    expect(halfPrice(0n)).toBe(0n);
    expect(halfPrice(1n)).toBe(1n);
    expect(halfPrice(2n)).toBe(1n);
    expect(halfPrice(3n)).toBe(2n);
    expect(halfPrice(150_000_000n)).toBe(75_000_000n);
    expect(halfPrice(37_500_001n)).toBe(18_750_001n);
    // Beyond float precision: integer arithmetic throughout.
    expect(halfPrice(9_007_199_254_740_993n)).toBe(4_503_599_627_370_497n);
  });
});

describe('withProviderBatchPrices', () => {
  const pricing: Pricing = { ...NO_PRICES, inputPerMtokNano: 1_250_000_001n, outputPerMtokNano: 10_000_000_000n };

  it('gives a batch-accepted model half its input and output prices, rounded half up', () => {
    const priced = withProviderBatchPrices('openai', 'gpt-4o', 'chat', pricing);
    expect(priced.batchInputPerMtokNano).toBe(625_000_001n);
    expect(priced.batchOutputPerMtokNano).toBe(5_000_000_000n);
    expect(priced.inputPerMtokNano).toBe(pricing.inputPerMtokNano);
  });

  it('leaves a price the model lacks without a batch price, and keeps a batch price already there', () => {
    const embedding = withProviderBatchPrices('google', 'gemini-embedding-001', 'embedding', { ...NO_PRICES, inputPerMtokNano: 150_000_000n });
    expect(embedding.batchInputPerMtokNano).toBe(75_000_000n);
    expect(embedding.batchOutputPerMtokNano).toBeNull();
    const given = withProviderBatchPrices('anthropic', 'claude-sonnet-4-6', 'chat', { ...pricing, batchInputPerMtokNano: 7n });
    expect(given.batchInputPerMtokNano).toBe(7n);
  });

  it('gives no batch price to other providers or to models the batch APIs do not take', () => {
    for (const [provider, id, kind] of [
      ['deepseek', 'deepseek-chat', 'chat'], ['mistral', 'mistral-large', 'chat'], ['openai', 'gpt-4o-audio-preview', 'chat'],
      ['openai', 'gpt-4o-realtime-preview', 'chat'], ['openai', 'gpt-4o-search-preview', 'chat'], ['openai', 'chatgpt-4o-latest', 'chat'],
      ['openai', 'gpt-oss-120b', 'chat'], ['openai', 'gpt-image-1', 'image'], ['openai', 'gpt-4o-transcribe', 'audio'],
      ['google', 'gemma-2-27b-it', 'chat'], ['google', 'gemini-2.5-flash-tts', 'audio'], ['google', 'gemini-2.5-flash-image', 'image'],
    ] as const) {
      expect(hasHalfPriceBatch(provider, id, kind), `${provider}/${id}`).toBe(false);
      expect(withProviderBatchPrices(provider, id, kind, pricing), `${provider}/${id}`).toBe(pricing);
    }
  });
});

describe('the bundled catalog', () => {
  it('carries half-price batch prices for the three providers’ chat and embedding models', () => {
    for (const [provider, id] of [['openai', 'gpt-4o-mini'], ['openai', 'o3'], ['openai', 'text-embedding-3-small'], ['anthropic', 'claude-sonnet-4-6'], ['google', 'gemini-2.5-pro'], ['google', 'gemini-embedding-001']] as const) {
      const { pricing } = find(provider, id);
      expect(pricing.batchInputPerMtokNano, `${provider}/${id}`).toBe(halfPrice(pricing.inputPerMtokNano as bigint));
      expect(pricing.batchOutputPerMtokNano, `${provider}/${id}`).toBe(pricing.outputPerMtokNano === null ? null : halfPrice(pricing.outputPerMtokNano));
    }
    expect(find('openai', 'gpt-4o-mini').pricing).toMatchObject({ inputPerMtokNano: 150_000_000n, batchInputPerMtokNano: 75_000_000n, outputPerMtokNano: 600_000_000n, batchOutputPerMtokNano: 300_000_000n });
    expect(find('openai', 'text-embedding-3-small').pricing).toMatchObject({ inputPerMtokNano: 20_000_000n, batchInputPerMtokNano: 10_000_000n });
  });

  it('carries none for the models the batch APIs do not take or providers that publish none', () => {
    for (const id of ['gpt-4o-audio-preview', 'gpt-4o-search-preview', 'gpt-image-1', 'gpt-4o-transcribe']) {
      expect(find('openai', id).pricing, id).toMatchObject({ batchInputPerMtokNano: null, batchOutputPerMtokNano: null });
    }
    const others = ['deepseek', 'mistral', 'groq'].flatMap((provider) => catalog.provider(provider));
    expect(others.length).toBeGreaterThan(0);
    for (const { model } of others) expect(model.pricing, model.id).toMatchObject({ batchInputPerMtokNano: null, batchOutputPerMtokNano: null });
  });

  it('bills a batch line of a bundled model at half price, long-context tiers and cache reads too', () => {
    const model = find('google', 'gemini-2.5-pro');
    const normal = computeCost(model.pricing, { tokens: tokens(300_000, 1_000) });
    expect(computeCost(batchPricing(model.pricing), { tokens: tokens(300_000, 1_000) })).toBe((normal + 1n) / 2n);
    const mini = find('openai', 'gpt-4o-mini');
    expect(computeCost(batchPricing(mini.pricing), { tokens: tokens(1_000_000, 1_000_000) })).toBe(375_000_000n);
  });
});

describe("the operator's batch price", () => {
  const bundled = find('openai', 'gpt-4o-mini');
  const record = (pricing: Partial<Pricing>) => ({ ...operatorCopy(bundled, NOW), pricing: { ...operatorCopy(bundled, NOW).pricing, ...pricing } });

  it('wins over the catalog’s', () => {
    const served = overlayOperatorModel(bundled, record({ batchInputPerMtokNano: 100_000_000n, batchOutputPerMtokNano: 500_000_000n })).pricing;
    expect(served).toMatchObject({ batchInputPerMtokNano: 100_000_000n, batchOutputPerMtokNano: 500_000_000n });
  });

  it("unset, is the catalog's while the record keeps the catalog's normal price, else the record's normal price", () => {
    const same = overlayOperatorModel(bundled, record({ batchInputPerMtokNano: null, batchOutputPerMtokNano: null })).pricing;
    expect(same).toMatchObject({ batchInputPerMtokNano: 75_000_000n, batchOutputPerMtokNano: 300_000_000n });
    const repriced = overlayOperatorModel(bundled, record({ inputPerMtokNano: 200_000_000n, batchInputPerMtokNano: null, batchOutputPerMtokNano: null })).pricing;
    expect(repriced).toMatchObject({ batchInputPerMtokNano: null, batchOutputPerMtokNano: 300_000_000n });
    expect(batchPricing(repriced).inputPerMtokNano).toBe(200_000_000n);
  });

  it('is copied from the catalog when a record is made from a bundled model', () => {
    expect(operatorCopy(bundled, NOW).pricing).toMatchObject({ batchInputPerMtokNano: 75_000_000n, batchOutputPerMtokNano: 300_000_000n });
  });
});
