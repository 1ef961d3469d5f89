import type { AudioTokens, HostedToolCalls, Usage } from '../ir/usage.js';
import type { NanoUsd } from '../domain/records.js';
import type { PriceTier, Pricing } from '../domain/model-records.js';

const TOKENS_PER_MILLION = 1_000_000n;

export interface BillableUsage {
  tokens?: Usage;
  images?: number;
  /** The images' quality and size as the request asked (DALL·E bills each variant its own price). */
  imageVariant?: ImageVariant;
  audioSeconds?: number;
  characters?: number;
  /** Calls of tools the upstream runs itself and bills per call. */
  hostedTools?: HostedToolCalls;
  /** Search units of a rerank request (billing/search-units.ts). */
  searchUnits?: number;
}

export interface ImageVariant {
  size?: string;
  quality?: string;
}

/** OpenAI's defaults for an image request that names no size or quality. */
const DEFAULT_IMAGE_SIZE = '1024x1024';
const DEFAULT_IMAGE_QUALITY = 'standard';

/**
 * Cost of one request in nano-USD, computed in integers: every per-million rate is multiplied out first and
 * divided once, rounding up, so no component is rounded to zero on its own. Reasoning counts as output;
 * cached input and cache writes fall back to the input price when they have no price of their own. When the
 * input passes a long-context tier's threshold, the whole request is billed at that tier's rates. Hosted tool calls
 * (`hostedTools`, else those the token usage carries) are billed per call on top.
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
    if (tokens.audio !== undefined) perMillionSum += audioSurcharge(pricing, rates, tokens.audio);
  }
  if (usage.characters !== undefined) perMillionSum += BigInt(usage.characters) * (pricing.perMcharNano ?? 0n);
  let cost = ceilDivide(perMillionSum, TOKENS_PER_MILLION);
  cost += pricing.perRequestNano ?? 0n;
  if (usage.images !== undefined) cost += BigInt(usage.images) * imagePrice(pricing, usage.imageVariant);
  cost += hostedToolCost(pricing, usage.hostedTools ?? tokens?.hostedTools);
  if (usage.searchUnits !== undefined) cost += BigInt(usage.searchUnits) * (pricing.perSearchUnitNano ?? 0n);
  if (usage.audioSeconds !== undefined && pricing.perAudioMinuteNano !== null) {
    cost += ceilDivide(BigInt(Math.ceil(usage.audioSeconds)) * pricing.perAudioMinuteNano, 60n);
  }
  return cost;
}

/**
 * The price of one image: the size-and-quality table's (`<quality> <size>`, then `<size>` alone, OpenAI's defaults
 * standing for what the request left out), else the flat per-image price, else the table's dearest (a variant the
 * table does not know is billed at most that).
 */
export function imagePrice(pricing: Pricing, variant: ImageVariant = {}): NanoUsd {
  const table = pricing.perImageBySize;
  if (table !== undefined) {
    const size = variant.size ?? DEFAULT_IMAGE_SIZE;
    const listed = table[`${variant.quality ?? DEFAULT_IMAGE_QUALITY} ${size}`] ?? table[size];
    if (listed !== undefined) return listed;
  }
  if (pricing.perImageNano !== null) return pricing.perImageNano;
  return table === undefined ? 0n : Object.values(table).reduce((dearest, price) => (price > dearest ? price : dearest), 0n);
}

/**
 * What the hosted tool calls of an answer cost: each web search, web fetch and file search at its price, and the
 * grounded-prompt price once when the answer searched at all.
 */
export function hostedToolCost(pricing: Pricing, calls: HostedToolCalls | undefined): NanoUsd {
  if (calls === undefined) return 0n;
  let cost = BigInt(calls.webSearch) * (pricing.perWebSearchNano ?? 0n);
  if (calls.webSearch > 0) cost += pricing.perGroundedPromptNano ?? 0n;
  cost += BigInt(calls.webFetch) * (pricing.perWebFetchNano ?? 0n);
  cost += BigInt(calls.fileSearch) * (pricing.perFileSearchNano ?? 0n);
  return cost;
}

type TokenRates = Omit<PriceTier, 'aboveInputTokens'>;

/** The base token prices, or those of the highest tier whose threshold the input passes. */
export function tokenRates(pricing: Pricing, inputTokens: number): TokenRates {
  let rates: TokenRates = pricing;
  for (const tier of pricing.tiers ?? []) if (inputTokens > tier.aboveInputTokens) rates = tier;
  return rates;
}

/**
 * What audio tokens cost beyond the text prices they were counted at above (the input, cached input and output
 * prices): audio input, cached audio input and audio output each at its own price when the model has one. Per million
 * tokens; negative when an audio price is below the text one.
 */
function audioSurcharge(pricing: Pricing, rates: TokenRates, audio: AudioTokens): bigint {
  const input = rates.inputPerMtokNano ?? 0n;
  const audioInput = pricing.inputAudioPerMtokNano ?? input;
  const uncached = BigInt(Math.max(0, audio.input - audio.cacheRead));
  let surcharge = uncached * (audioInput - input);
  surcharge += BigInt(audio.cacheRead) * ((pricing.cachedAudioInputPerMtokNano ?? audioInput) - (rates.cachedInputPerMtokNano ?? input));
  surcharge += BigInt(audio.output) * ((pricing.outputAudioPerMtokNano ?? rates.outputPerMtokNano ?? 0n) - (rates.outputPerMtokNano ?? 0n));
  return surcharge;
}

function ceilDivide(numerator: bigint, denominator: bigint): bigint {
  return numerator <= 0n ? 0n : (numerator + denominator - 1n) / denominator;
}

/** A model that bills nothing whatever it is used for (every price unset or zero). */
export function chargesNothing(pricing: Pricing): boolean {
  const { tiers, perImageBySize, ...prices } = pricing;
  const free = (price: NanoUsd | null): boolean => price === null || price === 0n;
  return Object.values(prices).every(free) && Object.values(perImageBySize ?? {}).every(free) && (tiers ?? []).every((tier) => free(tier.inputPerMtokNano) && free(tier.outputPerMtokNano) && free(tier.cachedInputPerMtokNano) && free(tier.cacheWritePerMtokNano));
}
