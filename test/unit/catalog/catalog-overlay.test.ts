/**
 * The catalog overlay (src/catalog/catalog-overlay.ts) only holds what the maintained price data lacks. The day the
 * data carries one of its facts, this test fails and names the entry, so the overlay shrinks instead of rotting.
 */
import { findProvider, type ModelInfo, type Provider } from '@pydantic/genai-prices';
import { describe, expect, it } from 'vitest';
import { overlayPriceFields } from '../../../src/catalog/apply-overlay.js';
import { BundledCatalog } from '../../../src/catalog/bundled-catalog.js';
import { CATALOG_OVERLAY, fillCovers, isOverlayModel } from '../../../src/catalog/catalog-overlay.js';
import { currentPrices, toPricing } from '../../../src/catalog/convert-prices.js';
import { matches } from '../../../src/catalog/match-logic.js';
import { kindOf } from '../../../src/catalog/model-traits.js';
import type { Pricing } from '../../../src/domain/model-records.js';

const NOW = Date.parse('2026-06-01T00:00:00Z');

/** Overlay entries the data now carries, each with why (empty: the overlay holds only what the data lacks). */
function staleOverlayEntries(providerOf: (id: string) => Provider | undefined): string[] {
  const stale: string[] = [];
  for (const entry of CATALOG_OVERLAY) {
    const models: ModelInfo[] = providerOf(entry.provider)?.models ?? [];
    if (isOverlayModel(entry)) {
      for (const id of [entry.add, ...(entry.aliases ?? [])]) {
        const carried = models.find((model) => model.id === id || matches(model.match, id));
        if (carried !== undefined) stale.push(`${entry.add}: the data now has ${id} (as ${carried.id})`);
      }
      continue;
    }
    const covered = models.filter((model) => fillCovers(entry, model.id, kindOf(model.id.toLowerCase())));
    if (covered.length === 0) stale.push(`${String(entry.models)}: no model of the data matches any more`);
    for (const model of covered) {
      const pricing = toPricing(currentPrices(model, NOW), kindOf(model.id.toLowerCase()));
      for (const field of Object.keys(overlayPriceFields(entry.prices ?? {})) as Array<keyof Pricing>) {
        if (field !== 'perImageBySize' && field !== 'tiers' && pricing[field] !== null) stale.push(`${model.id}: the data now prices ${field}`);
      }
      if (entry.contextWindow !== undefined && model.context_window !== undefined) stale.push(`${model.id}: the data now gives a context window (${model.context_window})`);
    }
  }
  return stale;
}

const bundledProvider = (id: string): Provider | undefined => {
  const provider = findProvider({ providerId: id });
  return provider?.id === id ? provider : undefined;
};

describe('the catalog overlay', () => {
  it('holds only what the bundled price data lacks', () => {
    expect(staleOverlayEntries(bundledProvider)).toEqual([]);
  });

  it('fails the day the data carries a fact it holds (a model, a price, a limit)', () => {
    const later = (id: string): Provider | undefined => {
      const provider = bundledProvider(id);
      if (provider === undefined) return undefined;
      const models = provider.models.map((model): ModelInfo => {
        if (model.id === 'gpt-4o-search-preview') return { ...model, prices: { ...currentPrices(model, NOW), web_searches_kcount: 25 } };
        if (model.id === 'gemini-embedding-001') return { ...model, context_window: 2048 };
        return model;
      });
      if (id === 'openai') models.push({ id: 'tts-1', match: { starts_with: 'tts-1' }, prices: { input_mchars: 15 } });
      return { ...provider, models };
    };
    expect(staleOverlayEntries(later)).toEqual(expect.arrayContaining([
      'tts-1: the data now has tts-1 (as tts-1)',
      'tts-1-hd: the data now has tts-1-hd (as tts-1)',
      'gpt-4o-search-preview: the data now prices perWebSearchNano',
      'gemini-embedding-001: the data now gives a context window (2048)',
    ]));
  });

  it('names a source (the provider\'s pricing or model page) for every entry', () => {
    for (const entry of CATALOG_OVERLAY) expect(entry.source, JSON.stringify(entry)).toMatch(/^https:\/\/(platform\.openai\.com|ai\.google\.dev)\//);
  });

  it('adds its models with the kind, prices and limits of their family, and fills in the data\'s gaps', () => {
    const catalog = new BundledCatalog(NOW);
    const model = (provider: string, id: string) => catalog.provider(provider).find((bundled) => bundled.model.id === id)?.model;
    expect(model('openai', 'tts-1')).toMatchObject({ kind: 'audio', aliases: ['tts-1-1106'], modalities: { input: ['text'], output: ['audio'] }, pricing: { perMcharNano: 15_000_000_000n } });
    expect(model('openai', 'tts-1-hd')?.pricing.perMcharNano).toBe(30_000_000_000n);
    expect(model('openai', 'dall-e-3')).toMatchObject({ kind: 'image', pricing: { perImageBySize: { 'hd 1024x1792': 120_000_000n, 'standard 1024x1024': 40_000_000n } } });
    expect(model('openai', 'dall-e-2')?.pricing.perImageBySize).toEqual({ '256x256': 16_000_000n, '512x512': 18_000_000n, '1024x1024': 20_000_000n });
    expect(model('google', 'gemini-embedding-001')).toMatchObject({ kind: 'embedding', contextWindow: 2048 });
    expect(model('google', 'gemini-3-pro-preview')?.pricing).toMatchObject({ perWebSearchNano: 14_000_000n, perGroundedPromptNano: null });
    expect(model('google', 'gemini-2.5-pro')?.pricing).toMatchObject({ perWebSearchNano: null, perGroundedPromptNano: 35_000_000n });
    // Image models of the same generation do not ground on Google Search.
    expect(model('google', 'gemini-3-pro-image-preview')?.pricing.perWebSearchNano).toBeNull();
    // The data's own prices stay: Anthropic's and OpenAI's searches, OpenAI's file searches.
    expect(model('anthropic', 'claude-sonnet-4-5')?.pricing.perWebSearchNano).toBe(10_000_000n);
    expect(model('openai', 'gpt-5.1')?.pricing).toMatchObject({ perWebSearchNano: 10_000_000n, perFileSearchNano: 2_500_000n });
  });
});
