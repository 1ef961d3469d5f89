import type { ConditionalPrice, ModelInfo, ModelPrice } from '@pydantic/genai-prices';
import type { ModelKind, PriceTier, Pricing } from '../domain/model-records.js';
import type { NanoUsd } from '../domain/records.js';

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
export function currentPrices(model: Pick<ModelInfo, 'prices'>, now: number): ModelPrice {
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
    // The price data carries no batch prices; withProviderBatchPrices adds those the provider publishes.
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

/** Half of a non-negative nano-USD price, rounded half up to the nano (3 → 2, 4 → 2). */
export function halfPrice(nanoUsd: NanoUsd): NanoUsd {
  return (nanoUsd + 1n) / 2n;
}

/**
 * Whether the provider's own batch API takes the model and bills it at half its input and output token prices:
 * OpenAI's Batch API (chat, responses and embedding models; not its audio, realtime or search-preview models, the
 * ChatGPT `chat-latest` aliases or the open-weight gpt-oss models it does not serve), Anthropic's Message Batches
 * (every Claude model) and Gemini's batch mode (Gemini chat and embedding models; not Gemma, not native audio or live
 * models). Every other provider and model publishes no batch price.
 */
export function hasHalfPriceBatch(provider: string, id: string, kind: ModelKind): boolean {
  const name = id.toLowerCase();
  switch (provider) {
    case 'openai':
      if (kind !== 'chat' && kind !== 'embedding') return false;
      return !/(audio|realtime|search|chat-latest|chatgpt-|gpt-oss)/.test(name);
    case 'anthropic':
      return kind === 'chat' && name.startsWith('claude-');
    case 'google':
      return (kind === 'chat' || kind === 'embedding') && name.startsWith('gemini-') && !/(live|native-audio|tts)/.test(name);
    default:
      return false;
  }
}

/**
 * `pricing` with the provider's published batch prices where its batch API takes the model and the data has no
 * batch price: half the input and half the output price per million tokens, in integer nano-USD rounded half up
 * (cached input, cache writes and long-context tiers follow by the same ratio when a line is billed). A price the
 * model lacks stays without a batch price (a line pays the normal one).
 */
export function withProviderBatchPrices(provider: string, id: string, kind: ModelKind, pricing: Pricing): Pricing {
  if (!hasHalfPriceBatch(provider, id, kind)) return pricing;
  const half = (price: NanoUsd | null): NanoUsd | null => (price === null ? null : halfPrice(price));
  return {
    ...pricing,
    batchInputPerMtokNano: pricing.batchInputPerMtokNano ?? half(pricing.inputPerMtokNano),
    batchOutputPerMtokNano: pricing.batchOutputPerMtokNano ?? half(pricing.outputPerMtokNano),
  };
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
