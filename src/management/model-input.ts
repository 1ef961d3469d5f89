import { z } from 'zod';
import type { CatalogModel } from '../catalog/catalog-model.js';
import { catalogFactsToJson, pricingToJson } from '../catalog/model-json.js';
import { BALANCING_STRATEGIES, DEFAULT_BALANCING_STRATEGY } from '../routing/balancing-strategy.js';
import { NO_PRICES, type Model, type ModelCachePolicy, type ModelKind, type Pricing } from '../domain/model-records.js';
import type { ModelPatch } from '../storage/storage.js';
import { nonNegativeUsdInput } from './money-input.js';
import { isoTime } from './time-input.js';
import { limitInput } from './limit-input.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { AdminModelJson } from '../contract/models.js';
import { MAX_FALLBACK_MODELS } from '../routing/fallback-models.js';

const MODEL_KINDS = ['chat', 'embedding', 'image', 'audio', 'moderation', 'rerank'] as const satisfies readonly ModelKind[];

/** Prices in USD; per-token prices are per million tokens. `null` clears a price. */
const price = nonNegativeUsdInput.nullable().optional();
const pricingSchema = z.object({
  input_per_mtok: price,
  output_per_mtok: price,
  cached_input_per_mtok: price,
  cache_write_per_mtok: price,
  per_request: price,
  per_image: price,
  per_audio_minute: price,
  per_mchar: price,
  /** Hosted tools the upstream bills per call; unset on a record over a bundled model: the bundled price. */
  per_web_search: price,
  per_grounded_prompt: price,
  per_web_fetch: price,
  per_file_search: price,
  /** Rerank models: each search unit (one query over up to 100 documents). */
  per_search_unit: price,
  /** Lines of a batch, per million tokens; unset: the normal price. */
  batch_input_per_mtok: price,
  batch_output_per_mtok: price,
  /** Realtime sessions: audio tokens in, cached and out. */
  input_audio_per_mtok: price,
  cached_input_audio_per_mtok: price,
  output_audio_per_mtok: price,
}).strict();

const limitsSchema = z.object({
  rpm: limitInput,
  tpm: limitInput,
}).strict();

/** How routing treats the model's channels; `strategy` orders them within a priority tier. */
const routingSchema = z.object({
  strategy: z.enum(BALANCING_STRATEGIES).optional(),
}).strict();

/** Longest time an answer may stay in the response cache (a week). */
export const MAX_CACHE_TTL_SECONDS = 604_800;
/** Basis points in one whole: a hit price of 1 bills a hit as much as the original answer. */
const BASIS_POINTS = 10_000;

/**
 * The response cache of a model: `ttl_seconds`, `hit_price` (the fraction of the original answer's cost a hit is
 * billed, 0 to 1 with at most four decimals, default 0) and `shared` (hits cross accounts, default false).
 * `null` switches the model's cache off.
 */
const cacheSchema = z.object({
  ttl_seconds: z.number().int().min(1).max(MAX_CACHE_TTL_SECONDS).optional(),
  hit_price: z.number().min(0).max(1)
    .refine((value) => Math.abs(value * BASIS_POINTS - Math.round(value * BASIS_POINTS)) < 1e-6, 'may have at most four decimals')
    .optional(),
  shared: z.boolean().optional(),
}).strict().nullable();

type CacheInput = z.infer<typeof cacheSchema>;
const modelId = z.string().min(1).max(200).regex(/^[A-Za-z0-9][A-Za-z0-9._:/@-]*$/, 'may hold letters, digits and . _ : / @ -');

const modelFields = {
  id: modelId,
  kind: z.enum(MODEL_KINDS).optional(),
  public: z.boolean().optional(),
  upstream: z.string().min(1).nullable().optional(),
  owned_by: z.string().min(1).max(100).optional(),
  pricing: pricingSchema,
  limits: limitsSchema.optional(),
  routing: routingSchema.optional(),
  cache: cacheSchema.optional(),
  /** Models tried in order when this one cannot answer (ids or aliases); `[]` clears them. */
  fallbacks: z.array(modelId).max(MAX_FALLBACK_MODELS).optional(),
};

export const createModelSchema = z.object(modelFields).strict();
export const updateModelSchema = z.object({ ...modelFields, pricing: pricingSchema.optional() }).omit({ id: true }).partial().strict();

export type CreateModelInput = z.infer<typeof createModelSchema>;
export type UpdateModelInput = z.infer<typeof updateModelSchema>;

type PricingInput = z.infer<typeof pricingSchema>;

/** Prices given in the input replace those of `base`; absent ones keep it. */
function pricingFromInput(input: PricingInput, base: Pricing = NO_PRICES): Pricing {
  const pick = (given: bigint | null | undefined, current: bigint | null): bigint | null => (given === undefined ? current : given);
  return {
    inputPerMtokNano: pick(input.input_per_mtok, base.inputPerMtokNano),
    outputPerMtokNano: pick(input.output_per_mtok, base.outputPerMtokNano),
    cachedInputPerMtokNano: pick(input.cached_input_per_mtok, base.cachedInputPerMtokNano),
    cacheWritePerMtokNano: pick(input.cache_write_per_mtok, base.cacheWritePerMtokNano),
    perRequestNano: pick(input.per_request, base.perRequestNano),
    perImageNano: pick(input.per_image, base.perImageNano),
    perAudioMinuteNano: pick(input.per_audio_minute, base.perAudioMinuteNano),
    perMcharNano: pick(input.per_mchar, base.perMcharNano),
    perWebSearchNano: pick(input.per_web_search, base.perWebSearchNano),
    perGroundedPromptNano: pick(input.per_grounded_prompt, base.perGroundedPromptNano),
    perWebFetchNano: pick(input.per_web_fetch, base.perWebFetchNano),
    perFileSearchNano: pick(input.per_file_search, base.perFileSearchNano),
    perSearchUnitNano: pick(input.per_search_unit, base.perSearchUnitNano),
    batchInputPerMtokNano: pick(input.batch_input_per_mtok, base.batchInputPerMtokNano),
    batchOutputPerMtokNano: pick(input.batch_output_per_mtok, base.batchOutputPerMtokNano),
    inputAudioPerMtokNano: pick(input.input_audio_per_mtok, base.inputAudioPerMtokNano ?? null),
    cachedAudioInputPerMtokNano: pick(input.cached_input_audio_per_mtok, base.cachedAudioInputPerMtokNano ?? null),
    outputAudioPerMtokNano: pick(input.output_audio_per_mtok, base.outputAudioPerMtokNano ?? null),
  };
}

/** Fields given replace those of `base`; a new policy needs `ttl_seconds`. */
function cacheFromInput(input: CacheInput, base: ModelCachePolicy | null): ModelCachePolicy | null {
  if (input === null) return null;
  const ttlSeconds = input.ttl_seconds ?? base?.ttlSeconds;
  if (ttlSeconds === undefined) throw new GatewayError('bad_request', "'cache.ttl_seconds' is required to switch the model's response cache on.", { param: 'cache.ttl_seconds' });
  return {
    ttlSeconds,
    hitPriceBasisPoints: input.hit_price === undefined ? (base?.hitPriceBasisPoints ?? 0) : Math.round(input.hit_price * BASIS_POINTS),
    shared: input.shared ?? base?.shared ?? false,
  };
}

export function cacheToJson(cache: ModelCachePolicy | null): AdminModelJson['cache'] {
  return cache === null ? null : { ttl_seconds: cache.ttlSeconds, hit_price: cache.hitPriceBasisPoints / BASIS_POINTS, shared: cache.shared };
}

export function modelFromInput(input: CreateModelInput, now: number): Model {
  return {
    id: input.id,
    kind: input.kind ?? 'chat',
    public: input.public ?? true,
    upstream: input.upstream ?? null,
    ownedBy: input.owned_by ?? 'gateway',
    pricing: pricingFromInput(input.pricing),
    rpm: input.limits?.rpm ?? null,
    tpm: input.limits?.tpm ?? null,
    routingStrategy: input.routing?.strategy ?? DEFAULT_BALANCING_STRATEGY,
    cache: input.cache === undefined ? null : cacheFromInput(input.cache, null),
    fallbacks: input.fallbacks ?? [],
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * With `existing`, a PATCH: prices not named keep their value. Without it (gateway.yaml, which declares the whole
 * model), the given prices replace all of them.
 */
export function modelPatchFromInput(input: UpdateModelInput, existing: Model | null): ModelPatch {
  const patch: ModelPatch = {};
  if (input.kind !== undefined) patch.kind = input.kind;
  if (input.public !== undefined) patch.public = input.public;
  if (input.upstream !== undefined) patch.upstream = input.upstream;
  if (input.owned_by !== undefined) patch.ownedBy = input.owned_by;
  if (input.pricing !== undefined) patch.pricing = pricingFromInput(input.pricing, existing?.pricing);
  if (input.limits?.rpm !== undefined) patch.rpm = input.limits.rpm;
  if (input.limits?.tpm !== undefined) patch.tpm = input.limits.tpm;
  if (input.routing?.strategy !== undefined) patch.routingStrategy = input.routing.strategy;
  // gateway.yaml declares the whole model: a model without `cache` there has none.
  if (input.cache !== undefined) patch.cache = cacheFromInput(input.cache, existing?.cache ?? null);
  else if (existing === null) patch.cache = null;
  if (input.fallbacks !== undefined) patch.fallbacks = input.fallbacks;
  return patch;
}

export function modelToJson(model: Model | CatalogModel): AdminModelJson {
  return {
    id: model.id,
    object: 'model',
    kind: model.kind,
    public: model.public,
    upstream: model.upstream,
    owned_by: model.ownedBy,
    pricing: pricingToJson(model.pricing),
    limits: { rpm: model.rpm, tpm: model.tpm },
    routing: { strategy: model.routingStrategy },
    cache: cacheToJson(model.cache),
    fallbacks: [...model.fallbacks],
    ...('priceSource' in model ? catalogFactsToJson(model) : {}),
    created_at: isoTime(model.createdAt),
    updated_at: isoTime(model.updatedAt),
  };
}
