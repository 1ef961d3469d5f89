import type { NanoUsd } from '../domain/records.js';
import type { PriceTier, Pricing } from '../domain/model-records.js';

/** `rate` moved by the ratio of the batch price to the normal one (integer arithmetic, rounded down). */
function scaled(rate: NanoUsd | null, batch: NanoUsd | null, normal: NanoUsd | null): NanoUsd | null {
  if (rate === null || batch === null || normal === null || normal === 0n) return rate;
  return (rate * batch) / normal;
}

/**
 * The prices a line of a batch is billed at: input and output per million tokens at the model's batch prices where
 * it has them (else the normal ones); cached input, cache writes and long-context tiers move by the same ratio as
 * the price they belong to. Every other price (per request, image, tool call …) stays.
 */
export function batchPricing(pricing: Pricing): Pricing {
  const input = pricing.batchInputPerMtokNano;
  const output = pricing.batchOutputPerMtokNano;
  if (input === null && output === null) return pricing;
  const normalInput = pricing.inputPerMtokNano;
  const normalOutput = pricing.outputPerMtokNano;
  const tier = (entry: PriceTier): PriceTier => ({
    ...entry,
    inputPerMtokNano: scaled(entry.inputPerMtokNano, input, normalInput),
    outputPerMtokNano: scaled(entry.outputPerMtokNano, output, normalOutput),
    cachedInputPerMtokNano: scaled(entry.cachedInputPerMtokNano, input, normalInput),
    cacheWritePerMtokNano: scaled(entry.cacheWritePerMtokNano, input, normalInput),
  });
  return {
    ...pricing,
    inputPerMtokNano: input ?? normalInput,
    outputPerMtokNano: output ?? normalOutput,
    cachedInputPerMtokNano: scaled(pricing.cachedInputPerMtokNano, input, normalInput),
    cacheWritePerMtokNano: scaled(pricing.cacheWritePerMtokNano, input, normalInput),
    ...(pricing.tiers === undefined ? {} : { tiers: pricing.tiers.map(tier) }),
  };
}

/** The model as a batch line sees it: the same record at its batch prices. */
export function atBatchPrices<T extends { pricing: Pricing }>(model: T): T {
  const pricing = batchPricing(model.pricing);
  return pricing === model.pricing ? model : { ...model, pricing };
}
