/**
 * Prices of the bundled catalog against the data package's own calculator: the package's published examples, then
 * every token-priced model of the three built-in providers over usages that exercise cache reads, cache writes and
 * long-context tiers. Our integer cost must equal the package's decimal one to within the one nano-USD our single
 * rounding up may add.
 */
import { calcPrice, type Usage as PackageUsage } from '@pydantic/genai-prices';
import { describe, expect, it } from 'vitest';
import { computeCost } from '../../../src/billing/compute-cost.js';
import { BundledCatalog, type BundledModel } from '../../../src/catalog/bundled-catalog.js';
import type { Usage } from '../../../src/ir/usage.js';

const NOW = Date.parse('2026-11-25T12:00:00Z');
const catalog = new BundledCatalog(NOW);

function usage(input: number, cacheRead: number, cacheWrite: number, output: number): Usage {
  return { input: { total: input, noCache: input - cacheRead - cacheWrite, cacheRead, cacheWrite }, output: { total: output, text: output, reasoning: 0 } };
}

/** The package's price in nano-USD, or null when it has none for this id. */
function packageNano(provider: string, modelId: string, tokens: Usage): number | null {
  const packageUsage: PackageUsage = { input_tokens: tokens.input.total, cache_read_tokens: tokens.input.cacheRead, cache_write_tokens: tokens.input.cacheWrite, output_tokens: tokens.output.total };
  const result = calcPrice(packageUsage, modelId, { providerId: provider, timestamp: new Date(NOW) });
  return result === null ? null : result.total_price * 1e9;
}

function expectSamePrice(provider: string, bundled: BundledModel, tokens: Usage): void {
  const expected = packageNano(provider, bundled.model.id, tokens);
  expect(expected, `${provider}/${bundled.model.id}`).not.toBeNull();
  const ours = Number(computeCost(bundled.model.pricing, { tokens }));
  // Our cost rounds up once to whole nano-USD; the package's is a float.
  expect(Math.abs(ours - (expected as number)), `${provider}/${bundled.model.id} ${JSON.stringify(tokens)}`).toBeLessThanOrEqual(1.000001);
}

function find(provider: string, id: string): BundledModel {
  const found = catalog.provider(provider).find((bundled) => bundled.model.id === id);
  if (found === undefined) throw new Error(`${provider}/${id} is not in the bundled catalog`);
  return found;
}

describe('bundled prices against the package’s published examples', () => {
  it('gpt-3.5-turbo, 1000 input and 100 output tokens (the README’s first example)', () => {
    const tokens = usage(1000, 0, 0, 100);
    expectSamePrice('openai', find('openai', 'gpt-3.5-turbo'), tokens);
    // $0.50/M in, $1.50/M out.
    expect(computeCost(find('openai', 'gpt-3.5-turbo').model.pricing, { tokens })).toBe(650_000n);
  });

  it('claude-sonnet-4-20250514 with 4735 cache-write tokens (the README’s cached-input example)', () => {
    const bundled = find('anthropic', 'claude-sonnet-4-0');
    expect(bundled.model.aliases).toContain('claude-sonnet-4-20250514');
    const tokens = usage(4740, 0, 4735, 255);
    expect(packageNano('anthropic', 'claude-sonnet-4-20250514', tokens)).toBeCloseTo(packageNano('anthropic', 'claude-sonnet-4-0', tokens) as number, 6);
    expectSamePrice('anthropic', bundled, tokens);
    // 5 × $3/M + 4735 × $3.75/M (cache writes at their own price) + 255 × $15/M.
    expect(computeCost(bundled.model.pricing, { tokens })).toBe(15_000n + 17_756_250n + 3_825_000n);
  });
});

describe('every bundled token price matches the package', () => {
  const usages = [usage(1000, 0, 0, 100), usage(50_000, 20_000, 5_000, 2_000), usage(250_000, 100_000, 10_000, 8_000), usage(400_000, 0, 0, 1)];
  for (const provider of ['openai', 'anthropic', 'google']) {
    it(`${provider}: input, output, cache reads, cache writes and long-context tiers`, () => {
      let checked = 0;
      for (const bundled of catalog.provider(provider)) {
        const { pricing } = bundled.model;
        if (bundled.model.kind !== 'chat' || pricing.inputPerMtokNano === null || pricing.outputPerMtokNano === null) continue;
        for (const tokens of usages) expectSamePrice(provider, bundled, tokens);
        checked += 1;
      }
      expect(checked).toBeGreaterThan(15);
    });
  }

  it('a tiered model costs more per token past its threshold, as the package says', () => {
    const bundled = find('anthropic', 'claude-sonnet-4-5');
    expect(bundled.model.pricing.tiers?.[0]?.aboveInputTokens).toBe(200_000);
    const under = Number(computeCost(bundled.model.pricing, { tokens: usage(200_000, 0, 0, 0) }));
    const over = Number(computeCost(bundled.model.pricing, { tokens: usage(200_001, 0, 0, 0) }));
    expect(over / 200_001).toBeGreaterThan((under / 200_000) * 1.9);
  });
});
