import { z } from 'zod';
import { isoTime, listPageOf } from './common.js';

const usd = z.number().nullable();

/**
 * A model's prices in USD (per million tokens, per request, image, audio minute, million characters, hosted tool
 * call; null: not priced that way), with long-context tiers and per-image prices by size and quality when it has them.
 */
export const modelPricing = z.strictObject({
  input_per_mtok: usd, output_per_mtok: usd, cached_input_per_mtok: usd, cache_write_per_mtok: usd,
  per_request: usd, per_image: usd, per_audio_minute: usd, per_mchar: usd,
  per_web_search: usd, per_grounded_prompt: usd, per_web_fetch: usd, per_file_search: usd, per_search_unit: usd,
  batch_input_per_mtok: usd, batch_output_per_mtok: usd,
  input_audio_per_mtok: usd, cached_input_audio_per_mtok: usd, output_audio_per_mtok: usd,
  per_image_by_size: z.record(z.string(), z.number()).optional(),
  tiers: z.array(z.strictObject({
    above_input_tokens: z.number(), input_per_mtok: usd, output_per_mtok: usd, cached_input_per_mtok: usd, cache_write_per_mtok: usd,
  })).optional(),
});
export type ModelPricingJson = z.infer<typeof modelPricing>;

export const modelKind = z.enum(['chat', 'embedding', 'image', 'audio', 'moderation', 'rerank']);
const modality = z.enum(['text', 'image', 'audio', 'video', 'embedding']);

/** What the catalog knows of a model beyond its stored record (null: unknown). */
export const modelFacts = z.strictObject({
  aliases: z.array(z.string()),
  context_window: z.number().nullable(),
  max_output_tokens: z.number().nullable(),
  modalities: z.strictObject({ input: z.array(modality), output: z.array(modality) }).nullable(),
  capabilities: z.strictObject({ tools: z.boolean(), vision: z.boolean(), json_schema: z.boolean(), reasoning: z.boolean() }).nullable(),
  /** Where the prices come from: the bundled data package, or the operator. */
  price_source: z.enum(['bundled', 'operator']),
  /** Provider id in the bundled data; null for operator-only models. */
  provider: z.string().nullable(),
});
export type ModelFactsJson = z.infer<typeof modelFacts>;

/** A model the console lists; `keys` (the account's keys that may call it) only for roles that read keys. */
export const consoleModel = modelFacts.omit({ price_source: true, provider: true }).extend({
  id: z.string(),
  kind: modelKind,
  owned_by: z.string(),
  pricing: modelPricing,
  keys: z.array(z.strictObject({ id: z.string(), name: z.string() })).optional(),
});
export type ConsoleModelJson = z.infer<typeof consoleModel>;

/** GET /api/models. */
export const consoleModelList = z.strictObject({ data: z.array(consoleModel) });
export type ConsoleModelListJson = z.infer<typeof consoleModelList>;

/** A model's response cache: how long answers are kept, the share of the price a hit costs, and whether accounts share it. */
export const modelCache = z.strictObject({ ttl_seconds: z.number().int(), hit_price: z.number(), shared: z.boolean() });

/**
 * A model as the admin API shows it: the stored record (or the bundled one it would override), with the catalog's
 * facts when the catalog serves it (a stored record read alone has none).
 */
export const adminModel = z.strictObject({
  id: z.string(),
  object: z.literal('model'),
  kind: modelKind,
  public: z.boolean(),
  /** The name sent upstream when a channel maps the model to `''` (null: the model's id). */
  upstream: z.string().nullable(),
  owned_by: z.string(),
  pricing: modelPricing,
  limits: z.strictObject({ rpm: z.number().int().nullable(), tpm: z.number().int().nullable() }),
  routing: z.strictObject({ strategy: z.enum(['weighted', 'least-latency', 'least-in-flight']) }),
  cache: modelCache.nullable(),
  fallbacks: z.array(z.string()),
  ...modelFacts.partial().shape,
  /** The guardrail policies bound to the model: a single model's read and a change that named them say them. */
  guardrails: z.array(z.string()).optional(),
  created_at: isoTime,
  updated_at: isoTime,
});
export type AdminModelJson = z.infer<typeof adminModel>;
export const adminModelPage = listPageOf(adminModel);
export type AdminModelPageJson = z.infer<typeof adminModelPage>;

/** One bundled model at its list prices beside the gateway's own record of it (GET /admin/catalog/models). */
export const catalogEntry = z.strictObject({
  id: z.string(),
  kind: modelKind,
  provider: z.string(),
  list_pricing: modelPricing,
  context_window: z.number().nullable(),
  /** `list`: no record, served at the list prices; `imported`: a record at the list prices; `custom`: its own prices. */
  status: z.enum(['list', 'imported', 'custom']),
  /** The record's prices (null: no record). */
  pricing: modelPricing.nullable(),
});
export type CatalogEntryJson = z.infer<typeof catalogEntry>;
export const catalogList = listPageOf(catalogEntry).extend({ bundled_version: z.string().nullable(), providers: z.array(z.string()) });
export type CatalogListJson = z.infer<typeof catalogList>;

/** POST /admin/catalog/import: each model's prices before (null: no record) and after. */
export const catalogImport = z.strictObject({
  object: z.literal('catalog.import'),
  provider: z.string(),
  bundled_version: z.string().nullable(),
  imported: z.array(z.strictObject({ id: z.string(), created: z.boolean(), before: modelPricing.nullable(), after: modelPricing })),
});
export type CatalogImportJson = z.infer<typeof catalogImport>;
