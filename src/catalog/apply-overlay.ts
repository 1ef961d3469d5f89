import { NO_PRICES, type Pricing } from '../domain/model-records.js';
import type { NanoUsd } from '../domain/records.js';
import { CATALOG_OVERLAY, fillCovers, isOverlayModel, type OverlayFill, type OverlayModel, type OverlayPrices } from './catalog-overlay.js';
import { usdToNano } from './convert-prices.js';

type FlatPrice = Exclude<keyof Pricing, 'tiers' | 'perImageBySize'>;

/** The overlay's price names (the admin API's) → the pricing fields (USD per unit, per million characters). */
const FIELD_OF: Record<Exclude<keyof OverlayPrices, 'per_image_by_size'>, FlatPrice> = {
  per_mchar: 'perMcharNano',
  per_image: 'perImageNano',
  per_web_search: 'perWebSearchNano',
  per_grounded_prompt: 'perGroundedPromptNano',
  per_web_fetch: 'perWebFetchNano',
  per_file_search: 'perFileSearchNano',
};

/** The price fields an overlay entry sets. */
export function overlayPriceFields(prices: OverlayPrices): Partial<Pricing> {
  const fields: Partial<Record<FlatPrice, NanoUsd>> & { perImageBySize?: Record<string, NanoUsd> } = {};
  for (const [name, field] of Object.entries(FIELD_OF) as Array<[keyof typeof FIELD_OF, FlatPrice]>) {
    const usd = prices[name];
    if (usd !== undefined) fields[field] = usdToNano(usd);
  }
  if (prices.per_image_by_size !== undefined) {
    fields.perImageBySize = Object.fromEntries(Object.entries(prices.per_image_by_size).map(([variant, usd]) => [variant, usdToNano(usd)]));
  }
  return fields;
}

/** `pricing` with the overlay's prices where it has none (the data's own price always stays). */
export function fillPricing(pricing: Pricing, prices: OverlayPrices): Pricing {
  const filled: Pricing = { ...pricing };
  for (const [field, value] of Object.entries(overlayPriceFields(prices)) as Array<[keyof Pricing, unknown]>) {
    if (field === 'perImageBySize') filled.perImageBySize ??= value as Record<string, NanoUsd>;
    else if (field !== 'tiers' && filled[field] === null) filled[field] = value as NanoUsd;
  }
  return filled;
}

/** The fill entries for one model of the data. */
export function overlayFillsOf(provider: string, id: string, kind: string): OverlayFill[] {
  return CATALOG_OVERLAY.filter((entry): entry is OverlayFill => !isOverlayModel(entry) && entry.provider === provider && fillCovers(entry, id, kind));
}

/** The models the overlay adds to a provider. */
export function overlayModelsOf(provider: string): OverlayModel[] {
  return CATALOG_OVERLAY.filter((entry): entry is OverlayModel => isOverlayModel(entry) && entry.provider === provider);
}

/** The pricing of a model the overlay adds. */
export function pricingOfOverlayModel(model: OverlayModel): Pricing {
  return fillPricing(NO_PRICES, model.prices);
}
