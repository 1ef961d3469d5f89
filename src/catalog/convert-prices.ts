import type { ConditionalPrice, ModelInfo, ModelPrice } from '@pydantic/genai-prices';
import type { ModelKind, NanoUsd, PriceTier, Pricing } from '../domain/records.js';

const NANO_PER_USD = 1_000_000_000;

interface Tiered {
  base: number;
  tiers: ReadonlyArray<{ start: number; price: number }>;
}

type PriceValue = number | Tiered | undefined;

const isTiered = (value: unknown): value is Tiered => typeof value === 'object' && value !== null && 'base' in value && 'tiers' in value;

/** USD (a decimal number from the data) to integer nano-USD, rounded to the nearest nano. */
export function usdToNano(usd: number): NanoUsd {
  return BigInt(Math.round(usd * NANO_PER_USD));
}

function base(value: PriceValue): number | undefined {
  return isTiered(value) ? value.base : value;
}

function nano(value: number | undefined, divisor = 1): NanoUsd | null {
  return value === undefined ? null : BigInt(Math.round((value * NANO_PER_USD) / divisor));
}

/**
 * The price set in force at `now`: models whose price changed over time list dated sets; one that varies by time of
 * day (off-peak discounts) is billed at its all-day price.
 */
export function currentPrices(model: ModelInfo, now: number): ModelPrice {
  if (!Array.isArray(model.prices)) return model.prices;
  let chosen: ConditionalPrice | undefined;
  for (const entry of model.prices as ConditionalPrice[]) {
    const constraint = entry.constraint;
    if (constraint === undefined) chosen ??= entry;
    else if (constraint.type === 'start_date' && Date.parse(constraint.start_date) <= now) chosen = entry;
  }
  return (chosen ?? (model.prices[0] as ConditionalPrice)).prices;
}

type TokenKey = 'input_mtok' | 'output_mtok' | 'cache_read_mtok' | 'cache_write_mtok';

/**
 * The data's per-unit prices in the gateway's price fields. Token prices are per million tokens (`_mtok`), request
 * prices per thousand (`_kcount`: requests, web searches, file searches, the data's `storage_searches`), characters
 * per million (`_mchars`), audio per hour (`_hours`). Image models bill their output at the image-token rate,
 * transcription models their input at the audio-token rate, where the data gives those.
 */
export function toPricing(prices: ModelPrice, kind: ModelKind): Pricing {
  const price = (key: string): PriceValue => prices[key] as PriceValue;
  const inputKey = kind === 'audio' && price('input_audio_mtok') !== undefined && price('audio_hours') === undefined ? 'input_audio_mtok' : 'input_mtok';
  const outputKey = kind === 'image' && price('output_image_mtok') !== undefined ? 'output_image_mtok' : 'output_mtok';
  const keys: Record<TokenKey, string> = { input_mtok: inputKey, output_mtok: outputKey, cache_read_mtok: 'cache_read_mtok', cache_write_mtok: 'cache_write_mtok' };
  const audioHours = base(price('audio_hours') ?? price('input_audio_hours'));
  const pricing: Pricing = {
    inputPerMtokNano: nano(base(price(keys.input_mtok))),
    outputPerMtokNano: nano(base(price(keys.output_mtok))),
    cachedInputPerMtokNano: nano(base(price(keys.cache_read_mtok))),
    cacheWritePerMtokNano: nano(base(price(keys.cache_write_mtok))),
    perRequestNano: nano(base(price('requests_kcount')), 1000),
    perImageNano: null,
    perAudioMinuteNano: nano(audioHours, 60),
    perMcharNano: nano(base(price('input_mchars'))),
    perWebSearchNano: nano(base(price('web_searches_kcount')), 1000),
    perGroundedPromptNano: null,
    perWebFetchNano: null,
    perFileSearchNano: nano(base(price('storage_searches_kcount')), 1000),
    perSearchUnitNano: null,
    // The price data carries no batch prices: batch lines cost the normal price unless the operator sets them.
    batchInputPerMtokNano: null,
    batchOutputPerMtokNano: null,
    inputAudioPerMtokNano: nano(base(price('input_audio_mtok'))),
    cachedAudioInputPerMtokNano: nano(base(price('cache_audio_read_mtok'))),
    outputAudioPerMtokNano: nano(base(price('output_audio_mtok'))),
  };
  const tiers = tiersOf(keys, price);
  if (tiers.length > 0) pricing.tiers = tiers;
  return pricing;
}

/** One tier per distinct threshold; a price without a tier at that threshold keeps its base (or lower tier) rate. */
function tiersOf(keys: Record<TokenKey, string>, price: (key: string) => PriceValue): PriceTier[] {
  const starts = new Set<number>();
  for (const key of Object.values(keys)) {
    const value = price(key);
    if (isTiered(value)) for (const tier of value.tiers) starts.add(tier.start);
  }
  const rateAt = (key: string, inputTokens: number): NanoUsd | null => {
    const value = price(key);
    if (!isTiered(value)) return nano(value);
    let rate = value.base;
    for (const tier of value.tiers) if (inputTokens > tier.start) rate = tier.price;
    return nano(rate);
  };
  return [...starts].sort((left, right) => left - right).map((start) => ({
    aboveInputTokens: start,
    inputPerMtokNano: rateAt(keys.input_mtok, start + 1),
    outputPerMtokNano: rateAt(keys.output_mtok, start + 1),
    cachedInputPerMtokNano: rateAt(keys.cache_read_mtok, start + 1),
    cacheWritePerMtokNano: rateAt(keys.cache_write_mtok, start + 1),
  }));
}
