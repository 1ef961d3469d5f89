import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import { fromBoolean, toBoolean, toNullableBigInt, toNullableNumber, toNumber, toOneOf } from '../convert.js';
import type { Database, ModelsTable } from '../database-schema.js';
import { tableAccess, type TableMapping } from './table-access.js';
import type { BalancingStrategy, Model, ModelCachePolicy, ModelKind, Pricing } from '../../domain/model-records.js';
import type { ModelPatch, ModelRepository } from '../storage.js';

const MODEL_KINDS: readonly ModelKind[] = ['chat', 'embedding', 'image', 'audio', 'moderation', 'rerank'];
const BALANCING_STRATEGIES: readonly BalancingStrategy[] = ['weighted', 'least-latency', 'least-in-flight'];

type PricingColumns = Pick<Insertable<ModelsTable>,
  | 'input_per_mtok_nano' | 'output_per_mtok_nano' | 'cached_input_per_mtok_nano' | 'cache_write_per_mtok_nano' | 'per_request_nano'
  | 'per_image_nano' | 'per_audio_minute_nano' | 'per_mchar_nano' | 'per_web_search_nano' | 'per_grounded_prompt_nano' | 'per_web_fetch_nano' | 'per_file_search_nano' | 'per_search_unit_nano'
  | 'batch_input_per_mtok_nano' | 'batch_output_per_mtok_nano'
  | 'input_audio_per_mtok_nano' | 'cached_audio_input_per_mtok_nano' | 'output_audio_per_mtok_nano'>;

function optionalPrice(field: 'inputAudioPerMtokNano' | 'cachedAudioInputPerMtokNano' | 'outputAudioPerMtokNano', column: Selectable<ModelsTable>['input_audio_per_mtok_nano']): Partial<Pricing> {
  const price = toNullableBigInt(column);
  return price === null ? {} : { [field]: price };
}

function toPricing(row: Selectable<ModelsTable>): Pricing {
  return {
    inputPerMtokNano: toNullableBigInt(row.input_per_mtok_nano),
    outputPerMtokNano: toNullableBigInt(row.output_per_mtok_nano),
    cachedInputPerMtokNano: toNullableBigInt(row.cached_input_per_mtok_nano),
    cacheWritePerMtokNano: toNullableBigInt(row.cache_write_per_mtok_nano),
    perRequestNano: toNullableBigInt(row.per_request_nano),
    perImageNano: toNullableBigInt(row.per_image_nano),
    perAudioMinuteNano: toNullableBigInt(row.per_audio_minute_nano),
    perMcharNano: toNullableBigInt(row.per_mchar_nano),
    perWebSearchNano: toNullableBigInt(row.per_web_search_nano),
    perGroundedPromptNano: toNullableBigInt(row.per_grounded_prompt_nano),
    perWebFetchNano: toNullableBigInt(row.per_web_fetch_nano),
    perFileSearchNano: toNullableBigInt(row.per_file_search_nano),
    perSearchUnitNano: toNullableBigInt(row.per_search_unit_nano),
    batchInputPerMtokNano: toNullableBigInt(row.batch_input_per_mtok_nano),
    batchOutputPerMtokNano: toNullableBigInt(row.batch_output_per_mtok_nano),
    // Audio prices are optional fields: set only on models that have them.
    ...optionalPrice('inputAudioPerMtokNano', row.input_audio_per_mtok_nano),
    ...optionalPrice('cachedAudioInputPerMtokNano', row.cached_audio_input_per_mtok_nano),
    ...optionalPrice('outputAudioPerMtokNano', row.output_audio_per_mtok_nano),
  };
}

function fromPricing(pricing: Pricing): PricingColumns {
  return {
    input_per_mtok_nano: pricing.inputPerMtokNano,
    output_per_mtok_nano: pricing.outputPerMtokNano,
    cached_input_per_mtok_nano: pricing.cachedInputPerMtokNano,
    cache_write_per_mtok_nano: pricing.cacheWritePerMtokNano,
    per_request_nano: pricing.perRequestNano,
    per_image_nano: pricing.perImageNano,
    per_audio_minute_nano: pricing.perAudioMinuteNano,
    per_mchar_nano: pricing.perMcharNano,
    per_web_search_nano: pricing.perWebSearchNano,
    per_grounded_prompt_nano: pricing.perGroundedPromptNano,
    per_web_fetch_nano: pricing.perWebFetchNano,
    per_file_search_nano: pricing.perFileSearchNano,
    per_search_unit_nano: pricing.perSearchUnitNano,
    batch_input_per_mtok_nano: pricing.batchInputPerMtokNano,
    batch_output_per_mtok_nano: pricing.batchOutputPerMtokNano,
    input_audio_per_mtok_nano: pricing.inputAudioPerMtokNano ?? null,
    cached_audio_input_per_mtok_nano: pricing.cachedAudioInputPerMtokNano ?? null,
    output_audio_per_mtok_nano: pricing.outputAudioPerMtokNano ?? null,
  };
}

function toCachePolicy(row: Selectable<ModelsTable>): ModelCachePolicy | null {
  const ttlSeconds = toNullableNumber(row.cache_ttl_seconds);
  return ttlSeconds === null ? null : { ttlSeconds, hitPriceBasisPoints: toNumber(row.cache_hit_price_bp), shared: toBoolean(row.cache_shared) };
}

type CacheColumns = Pick<Insertable<ModelsTable>, 'cache_ttl_seconds' | 'cache_hit_price_bp' | 'cache_shared'>;

function fromCachePolicy(cache: ModelCachePolicy | null): CacheColumns {
  return cache === null
    ? { cache_ttl_seconds: null, cache_hit_price_bp: 0, cache_shared: 0 }
    : { cache_ttl_seconds: cache.ttlSeconds, cache_hit_price_bp: cache.hitPriceBasisPoints, cache_shared: fromBoolean(cache.shared) };
}

/** The stored JSON list of fallback model ids. */
function toModelIds(value: string): string[] {
  const parsed: unknown = JSON.parse(value);
  if (!Array.isArray(parsed) || !parsed.every((id): id is string => typeof id === 'string')) throw new Error('fallback_models is not a JSON array of model ids');
  return parsed;
}

function toRecord(row: Selectable<ModelsTable>): Model {
  return {
    id: row.id,
    kind: toOneOf(row.kind, MODEL_KINDS, 'model kind'),
    public: toBoolean(row.public),
    upstream: row.upstream,
    ownedBy: row.owned_by,
    pricing: toPricing(row),
    rpm: toNullableNumber(row.rpm),
    tpm: toNullableNumber(row.tpm),
    routingStrategy: toOneOf(row.routing_strategy, BALANCING_STRATEGIES, 'routing strategy'),
    cache: toCachePolicy(row),
    fallbacks: toModelIds(row.fallback_models),
    createdAt: toNumber(row.created_at),
    updatedAt: toNumber(row.updated_at),
  };
}

function toRow(model: Model): Insertable<ModelsTable> {
  return {
    id: model.id,
    kind: model.kind,
    public: fromBoolean(model.public),
    upstream: model.upstream,
    owned_by: model.ownedBy,
    ...fromPricing(model.pricing),
    rpm: model.rpm,
    tpm: model.tpm,
    routing_strategy: model.routingStrategy,
    ...fromCachePolicy(model.cache),
    fallback_models: JSON.stringify(model.fallbacks),
    created_at: model.createdAt,
    updated_at: model.updatedAt,
  };
}

/** `pricing`, when present, replaces all eight price columns. */
function toChanges(patch: ModelPatch, now: number): Updateable<ModelsTable> {
  const changes: Updateable<ModelsTable> = { updated_at: now };
  if (patch.kind !== undefined) changes.kind = patch.kind;
  if (patch.public !== undefined) changes.public = fromBoolean(patch.public);
  if (patch.upstream !== undefined) changes.upstream = patch.upstream;
  if (patch.ownedBy !== undefined) changes.owned_by = patch.ownedBy;
  if (patch.pricing !== undefined) Object.assign(changes, fromPricing(patch.pricing));
  if (patch.rpm !== undefined) changes.rpm = patch.rpm;
  if (patch.tpm !== undefined) changes.tpm = patch.tpm;
  if (patch.routingStrategy !== undefined) changes.routing_strategy = patch.routingStrategy;
  if (patch.cache !== undefined) Object.assign(changes, fromCachePolicy(patch.cache));
  if (patch.fallbacks !== undefined) changes.fallback_models = JSON.stringify(patch.fallbacks);
  return changes;
}

const MODELS: TableMapping<'models', Model, ModelPatch> = {
  table: 'models', key: 'id', keyOf: (model) => model.id, toRecord, toRow, toChanges,
};

export function createModelRepository(db: Kysely<Database>): ModelRepository {
  const models = tableAccess(db, MODELS);
  return {
    create: models.insert,
    getById: models.get,
    list: (page) => models.page(page),
    listAll: () => models.listAll(),
    update: models.update,
    delete: models.delete,
  };
}
