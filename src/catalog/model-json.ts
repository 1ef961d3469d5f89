import { nanoToDecimalString, nanoToUsd } from '../billing/money.js';
import type { NanoUsd } from '../domain/records.js';
import type { Pricing } from '../domain/model-records.js';
import type { CatalogModel } from './catalog-model.js';
import type { ModelFactsJson, ModelPricingJson } from '../contract/models.js';

const usd = (nano: NanoUsd | null | undefined): number | null => (nano == null ? null : nanoToUsd(nano));

/** USD per token as a decimal string, from nano-USD per million tokens (exact: 10^15 nano-USD-per-Mtok in a USD). */
function usdPerToken(perMtokNano: bigint): string {
  const digits = perMtokNano.toString().padStart(16, '0');
  const whole = digits.slice(0, -15).replace(/^0+(?=\d)/, '');
  const fraction = digits.slice(-15).replace(/0+$/, '');
  return fraction === '' ? whole : `${whole}.${fraction}`;
}

/**
 * OpenRouter's price fields on the same object, for clients written against its model list: USD per token
 * (`prompt`, `completion`, `input_cache_read`, `input_cache_write`) and per request, image or web search, as decimal
 * strings.
 */
function openRouterPricing(pricing: Pricing): Record<string, string> {
  const fields: Record<string, string> = {};
  if (pricing.inputPerMtokNano !== null) fields.prompt = usdPerToken(pricing.inputPerMtokNano);
  if (pricing.outputPerMtokNano !== null) fields.completion = usdPerToken(pricing.outputPerMtokNano);
  if (pricing.cachedInputPerMtokNano !== null) fields.input_cache_read = usdPerToken(pricing.cachedInputPerMtokNano);
  if (pricing.cacheWritePerMtokNano !== null) fields.input_cache_write = usdPerToken(pricing.cacheWritePerMtokNano);
  if (pricing.perRequestNano !== null) fields.request = nanoToDecimalString(pricing.perRequestNano);
  if (pricing.perImageNano !== null) fields.image = nanoToDecimalString(pricing.perImageNano);
  if (pricing.perWebSearchNano !== null) fields.web_search = nanoToDecimalString(pricing.perWebSearchNano);
  return fields;
}

/** Every flat price: its name in the admin API, gateway.yaml and the model JSON, and its pricing field. */
export const PRICE_FIELDS = [
  ['input_per_mtok', 'inputPerMtokNano'], ['output_per_mtok', 'outputPerMtokNano'], ['cached_input_per_mtok', 'cachedInputPerMtokNano'], ['cache_write_per_mtok', 'cacheWritePerMtokNano'],
  ['per_request', 'perRequestNano'], ['per_image', 'perImageNano'], ['per_audio_minute', 'perAudioMinuteNano'], ['per_mchar', 'perMcharNano'],
  ['per_web_search', 'perWebSearchNano'], ['per_grounded_prompt', 'perGroundedPromptNano'], ['per_web_fetch', 'perWebFetchNano'], ['per_file_search', 'perFileSearchNano'],
  ['per_search_unit', 'perSearchUnitNano'], ['batch_input_per_mtok', 'batchInputPerMtokNano'], ['batch_output_per_mtok', 'batchOutputPerMtokNano'],
  ['input_audio_per_mtok', 'inputAudioPerMtokNano'], ['cached_input_audio_per_mtok', 'cachedAudioInputPerMtokNano'], ['output_audio_per_mtok', 'outputAudioPerMtokNano'],
] as const satisfies ReadonlyArray<readonly [string, Exclude<keyof Pricing, 'tiers' | 'perImageBySize'>]>;

/**
 * Prices in USD (per million tokens, per request, image, audio minute, million characters, hosted tool call), with
 * long-context tiers and the per-image prices by size and quality.
 */
export function pricingToJson(pricing: Pricing): ModelPricingJson {
  // Object.fromEntries loses the names: every one of PRICE_FIELDS is there.
  const flat = Object.fromEntries(PRICE_FIELDS.map(([name, field]) => [name, usd(pricing[field])])) as Record<(typeof PRICE_FIELDS)[number][0], number | null>;
  const json: ModelPricingJson = { ...flat };
  if (pricing.perImageBySize !== undefined) {
    json.per_image_by_size = Object.fromEntries(Object.entries(pricing.perImageBySize).map(([variant, price]) => [variant, nanoToUsd(price)]));
  }
  if (pricing.tiers !== undefined && pricing.tiers.length > 0) {
    json.tiers = pricing.tiers.map((tier) => ({
      above_input_tokens: tier.aboveInputTokens,
      input_per_mtok: usd(tier.inputPerMtokNano),
      output_per_mtok: usd(tier.outputPerMtokNano),
      cached_input_per_mtok: usd(tier.cachedInputPerMtokNano),
      cache_write_per_mtok: usd(tier.cacheWritePerMtokNano),
    }));
  }
  return json;
}

/** What the catalog knows of a model beyond its stored record: limits, capabilities, modalities, aliases. */
export function catalogFactsToJson(model: CatalogModel): ModelFactsJson {
  const { capabilities, modalities } = model;
  return {
    aliases: [...model.aliases],
    context_window: model.contextWindow,
    max_output_tokens: model.maxOutputTokens,
    modalities: modalities === null ? null : { input: [...modalities.input], output: [...modalities.output] },
    capabilities: capabilities === null ? null : { tools: capabilities.tools, vision: capabilities.vision, json_schema: capabilities.jsonSchema, reasoning: capabilities.reasoning },
    price_source: model.priceSource,
    provider: model.provider,
  };
}

/**
 * A model of GET /v1/models: OpenAI's fields (`id`, `object`, `created`, `owned_by`) and the catalog's — kind,
 * limits, capabilities, modalities and prices in USD. An alias is listed under its own id with `alias_of`.
 */
export function listedModelJson(model: CatalogModel, name: string = model.id): Record<string, unknown> {
  return {
    id: name,
    object: 'model',
    created: Math.floor(model.createdAt / 1000),
    owned_by: model.ownedBy,
    ...(name === model.id ? {} : { alias_of: model.id }),
    kind: model.kind,
    ...catalogFactsToJson(model),
    // OpenRouter's name for the context window.
    context_length: model.contextWindow,
    pricing: { ...pricingToJson(model.pricing), ...openRouterPricing(model.pricing) },
  };
}
