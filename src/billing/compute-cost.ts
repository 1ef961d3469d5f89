import type { Usage } from '../ir/usage.js';
import type { NanoUsd, Pricing } from '../storage/records.js';

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
 * cached input falls back to the input price when no cached price is set.
 */
export function computeCost(pricing: Pricing, usage: BillableUsage): NanoUsd {
  let perMillionSum = 0n;
  const tokens = usage.tokens;
  if (tokens !== undefined) {
    const input = pricing.inputPerMtokNano ?? 0n;
    const cached = pricing.cachedInputPerMtokNano ?? input;
    perMillionSum += BigInt(tokens.input.noCache + tokens.input.cacheWrite) * input;
    perMillionSum += BigInt(tokens.input.cacheRead) * cached;
    perMillionSum += BigInt(tokens.output.total) * (pricing.outputPerMtokNano ?? 0n);
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

function ceilDivide(numerator: bigint, denominator: bigint): bigint {
  return numerator <= 0n ? 0n : (numerator + denominator - 1n) / denominator;
}

/** A model that bills nothing whatever it is used for (every price unset or zero). */
export function chargesNothing(pricing: Pricing): boolean {
  return Object.values(pricing).every((price: NanoUsd | null) => price === null || price === 0n);
}
