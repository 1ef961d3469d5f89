import type { MatchLogic } from '@pydantic/genai-prices';
import { chargesNothing } from '../billing/compute-cost.js';
import { DEFAULT_BALANCING_STRATEGY } from '../routing/balancing-strategy.js';
import type { Model, Pricing } from '../domain/model-records.js';
import { readBundledPriceData, type BundledPriceModel } from './bundled-price-data.js';
import { fillPricing, overlayFillsOf, overlayModelsOf, pricingOfOverlayModel } from './apply-overlay.js';
import type { CatalogModel } from './catalog-model.js';
import type { OverlayModel } from './catalog-overlay.js';
import { currentPrices, toPricing, withProviderBatchPrices } from './convert-prices.js';
import { DATA_IDS, KNOWN_SNAPSHOTS } from './known-ids.js';
import { exactIds, matches } from './match-logic.js';
import { isServable, traitsOf } from './model-traits.js';

/** A bundled model with the data's rule for the ids it answers to (dated snapshots the data names by pattern). */
export interface BundledModel {
  model: CatalogModel;
  match: MatchLogic;
}

function toBundled(provider: string, info: BundledPriceModel, createdAt: number): BundledModel | null {
  const id = DATA_IDS[info.id] ?? info.id;
  if (!isServable(id) || id.endsWith('-')) return null;
  const traits = traitsOf(id.toLowerCase());
  let pricing = withProviderBatchPrices(provider, id, traits.kind, toPricing(currentPrices(info, createdAt), traits.kind));
  let contextWindow = info.context_window ?? traits.contextWindow;
  // The overlay fills in what the data lacks (catalog-overlay.ts).
  for (const fill of overlayFillsOf(provider, id, traits.kind)) {
    if (fill.prices !== undefined) pricing = fillPricing(pricing, fill.prices);
    if (fill.contextWindow !== undefined && info.context_window === undefined) contextWindow = fill.contextWindow;
  }
  return catalogEntry(provider, id, { pricing, contextWindow, aliases: [...exactIds(info.match), ...(KNOWN_SNAPSHOTS[id] ?? [])], match: info.match }, createdAt);
}

/** A model the overlay adds to the data. */
function overlayBundled(provider: string, entry: OverlayModel, createdAt: number): BundledModel | null {
  const traits = traitsOf(entry.add.toLowerCase());
  return catalogEntry(provider, entry.add, { pricing: pricingOfOverlayModel(entry), contextWindow: traits.contextWindow, aliases: entry.aliases ?? [], match: { equals: entry.add } }, createdAt);
}

function catalogEntry(provider: string, id: string, facts: { pricing: Pricing; contextWindow: number | null; aliases: readonly string[]; match: MatchLogic }, createdAt: number): BundledModel | null {
  const traits = traitsOf(id.toLowerCase());
  const { pricing } = facts;
  // A model the data gives no price for is left out rather than served free; moderation is free by design.
  if (traits.kind !== 'moderation' && chargesNothing(pricing)) return null;
  const aliases = new Set(facts.aliases);
  aliases.delete(id);
  const base: Model = {
    id,
    kind: traits.kind,
    public: true,
    upstream: null,
    ownedBy: provider,
    pricing,
    rpm: null,
    tpm: null,
    routingStrategy: DEFAULT_BALANCING_STRATEGY,
    cache: null,
    fallbacks: [],
    createdAt,
    updatedAt: createdAt,
  };
  return {
    model: {
      ...base,
      aliases: [...aliases].filter(isServable),
      contextWindow: facts.contextWindow,
      maxOutputTokens: traits.maxOutputTokens,
      modalities: traits.modalities,
      capabilities: traits.capabilities,
      priceSource: 'bundled',
      provider,
    },
    match: facts.match,
  };
}

/**
 * The default catalog: every model of the bundled price data (@pydantic/genai-prices, its catalog part extracted to
 * genai-prices.json, bundled-price-data.ts) that the gateway can serve, with prices converted to nano-USD once per
 * provider at its first use, the traits the data lacks, and the overlay's models and facts (catalog-overlay.ts).
 * Upgrading the package takes `npm run catalog:prices` to update it; nothing is fetched at run time.
 */
export class BundledCatalog {
  #version: string | null = null;
  readonly #byProvider = new Map<string, readonly BundledModel[]>();

  constructor(private readonly now: number) {}

  /** The data package's version the bundled data was extracted from. */
  get version(): string {
    this.#version ??= readBundledPriceData().version;
    return this.#version;
  }

  /** The provider's models (built on first use), or an empty list for a provider the data does not have. */
  provider(providerId: string): readonly BundledModel[] {
    let models = this.#byProvider.get(providerId);
    if (models === undefined) {
      const { providers } = readBundledPriceData();
      const seen = new Set<string>();
      const built: BundledModel[] = [];
      const add = (bundled: BundledModel | null): void => {
        if (bundled === null || seen.has(bundled.model.id)) return;
        seen.add(bundled.model.id);
        built.push(bundled);
      };
      for (const info of Object.hasOwn(providers, providerId) ? providers[providerId] ?? [] : []) add(toBundled(providerId, info, this.now));
      for (const entry of overlayModelsOf(providerId)) add(overlayBundled(providerId, entry, this.now));
      models = built;
      this.#byProvider.set(providerId, models);
    }
    return models;
  }
}

/** The first bundled model whose rule accepts the id, also with a `-YYYYMMDD` / `-YYYY-MM-DD` date suffix removed. */
export function matchBundled(models: Iterable<BundledModel>, id: string): BundledModel | undefined {
  const list = [...models];
  const exact = list.find((bundled) => matches(bundled.match, id));
  if (exact !== undefined) return exact;
  const undated = id.replace(/-(20\d{2})-?(\d{2})-?(\d{2})$/, '');
  return undated === id ? undefined : list.find((bundled) => bundled.model.id === undated || matches(bundled.match, undated));
}
