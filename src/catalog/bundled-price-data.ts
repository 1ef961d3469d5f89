import { readFileSync } from 'node:fs';
import type { MatchLogic, ModelInfo } from '@pydantic/genai-prices';

/**
 * The file beside this module holding the bundled price data (tsconfig.build.json copies it beside the build). It is
 * read on demand, never loaded as a module: a loaded module's data and code stay resident for the life of the process.
 */
export const GENAI_PRICES_FILE = 'genai-prices.json';

/** What the catalog reads of one model of the data. */
export interface BundledPriceModel {
  id: string;
  match: MatchLogic;
  context_window?: number;
  prices: ModelInfo['prices'];
}

/**
 * The catalog's part of @pydantic/genai-prices, extracted from the installed package by `npm run catalog:prices`
 * (scripts/extract-genai-prices.ts): each provider's models with their match rules, context windows and prices.
 * Loading the package itself costs the process about 16 MiB for as long as it runs (its code and every provider's
 * data); the catalog needs a few providers' prices once per provider.
 */
export interface BundledPriceData {
  package: string;
  version: string;
  providers: Record<string, BundledPriceModel[]>;
}

let lastRead: WeakRef<BundledPriceData> | null = null;

/**
 * The data, read and parsed from the file; reads close together (the providers of one catalog load) share one
 * parse, which the garbage collector takes once the callers have converted what they need.
 */
export function readBundledPriceData(): BundledPriceData {
  const cached = lastRead?.deref();
  if (cached !== undefined) return cached;
  const data = JSON.parse(readFileSync(new URL(`./${GENAI_PRICES_FILE}`, import.meta.url), 'utf8')) as BundledPriceData;
  lastRead = new WeakRef(data);
  return data;
}
