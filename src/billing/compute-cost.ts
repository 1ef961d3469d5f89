import type { Usage } from '../ir/usage.js';
import type { NanoUsd, PriceTier, Pricing } from '../domain/records.js';

const TOKENS_PER_MILLION = 1_000_000n;

export interface BillableUsage {
  tokens?: Usage;
  images?: number;
  audioSeconds?: number;
  characters?: number;
}

/**
 * Cost of one request in nano-USD, computed in integers: every per-million rate is multiplied out first and
 * divided once, rounding up, so no component is rounded to zero on its own. Reasoning counts as output;
 * cached input and cache writes fall back to the input price when they have no price of their own. When the
 * input passes a long-context tier's threshold, the whole request is billed at that tier's rates.
 */
export function computeCost(pricing: Pricing, usage: BillableUsage): NanoUsd {
  let perMillionSum = 0n;
  const tokens = usage.tokens;
  if (tokens !== undefined) {
    const rates = tokenRates(pricing, tokens.input.total);
    const input = rates.inputPerMtokNano ?? 0n;
    perMillionSum += BigInt(tokens.input.noCache) * input;
    perMillionSum += BigInt(tokens.input.cacheWrite) * (rates.cacheWritePerMtokNano ?? input);
    perMillionSum += BigInt(tokens.input.cacheRead) * (rates.cachedInputPerMtokNano ?? input);
    perMillionSum += BigInt(tokens.output.total) * (rates.outputPerMtokNano ?? 0n);
  }
  if (usage.characters !== undefined) perMillionSum += BigInt(usage.characters) * (pricing.perMcharNano ?? 0n);
  let cost = ceilDivide(perMillionSum, TOKENS_PER_MILLION);
  cost += pricing.perRequestNano ?? 0n;
  if (usage.images !== undefined) cost += BigInt(usage.images) * (pricing.perImageNano ?? 0n);
  if (usage.audioSeconds !== undefined && pricing.perAudioMinuteNano !== null) {
    cost += ceilDivide(BigInt(Math.ceil(usage.audioSeconds)) * pricing.perAudioMinuteNano, 60n);
  }
  return cost;
}

type TokenRates = Omit<PriceTier, 'aboveInputTokens'>;

/** The base token prices, or those of the highest tier whose threshold the input passes. */
export function tokenRates(pricing: Pricing, inputTokens: number): TokenRates {
  let rates: TokenRates = pricing;
  for (const tier of pricing.tiers ?? []) if (inputTokens > tier.aboveInputTokens) rates = tier;
  return rates;
}

function ceilDivide(numerator: bigint, denominator: bigint): bigint {
  return numerator <= 0n ? 0n : (numerator + denominator - 1n) / denominator;
}

/** A model that bills nothing whatever it is used for (every price unset or zero). */
export function chargesNothing(pricing: Pricing): boolean {
  const { tiers, ...prices } = pricing;
  const free = (price: NanoUsd | null): boolean => price === null || price === 0n;
  return Object.values(prices).every(free) && (tiers ?? []).every((tier) => free(tier.inputPerMtokNano) && free(tier.outputPerMtokNano) && free(tier.cachedInputPerMtokNano) && free(tier.cacheWritePerMtokNano));
}
