/**
 * The bundled price data the catalog reads (src/catalog/genai-prices.json) is the installed @pydantic/genai-prices
 * package's, extracted by `npm run catalog:prices`: an upgraded package fails here until the file is written again.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { findProvider } from '@pydantic/genai-prices';
import { GENAI_PRICES_FILE, readBundledPriceData } from '../../../src/catalog/bundled-price-data.js';
import { extractGenaiPrices, formatGenaiPrices } from '../../../scripts/genai-prices-data.js';

describe('bundled price data file', () => {
  it('is the installed package data, as the extraction writes it', () => {
    const extracted = extractGenaiPrices();
    const file = readFileSync(new URL(`../../../src/catalog/${GENAI_PRICES_FILE}`, import.meta.url), 'utf8');
    expect(file, 'run `npm run catalog:prices` after upgrading @pydantic/genai-prices').toBe(formatGenaiPrices(extracted));
    expect(readBundledPriceData()).toEqual(extracted);
  });

  it('holds every provider the package finds by id, each model with its id, rule, context window and prices', () => {
    const { providers } = readBundledPriceData();
    expect(Object.keys(providers)).toEqual(expect.arrayContaining(['openai', 'anthropic', 'google', 'mistral', 'deepseek']));
    for (const [id, models] of Object.entries(providers)) {
      const provider = findProvider({ providerId: id });
      expect(provider?.id).toBe(id);
      expect(models.map((model) => model.id)).toEqual(provider?.models.map((model) => model.id));
      for (const [index, model] of models.entries()) {
        const info = provider?.models[index];
        expect(model).toEqual({ id: info?.id, match: info?.match, prices: info?.prices, ...(info?.context_window === undefined ? {} : { context_window: info.context_window }) });
      }
    }
  });
});
