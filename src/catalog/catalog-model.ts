import type { Model, Pricing } from '../domain/model-records.js';

/** What a request may need of a model; routing sends it only to channels whose model has it. */
export interface ModelCapabilities {
  tools: boolean;
  vision: boolean;
  jsonSchema: boolean;
  reasoning: boolean;
}

export type Modality = 'text' | 'image' | 'audio' | 'video' | 'embedding';

export interface Modalities {
  input: readonly Modality[];
  output: readonly Modality[];
}

/**
 * A model as the gateway serves it: the stored record (or one built from the bundled catalog) plus what the
 * bundled catalog knows of it. `null` facts are unknown and never used to refuse a request.
 */
export interface CatalogModel extends Model {
  /** Other ids that name this model (dated snapshots, `-latest` forms); each resolves to it. */
  aliases: readonly string[];
  contextWindow: number | null;
  maxOutputTokens: number | null;
  modalities: Modalities | null;
  capabilities: ModelCapabilities | null;
  /** Where the prices come from: the bundled data package, or the operator (admin API, gateway.yaml). */
  priceSource: 'bundled' | 'operator';
  /** Provider id in the bundled data (`openai`, `anthropic`, `google`, …); null for operator-only models. */
  provider: string | null;
}

/** A stored model with no bundled facts. */
export function operatorModel(model: Model): CatalogModel {
  return { ...model, aliases: [], contextWindow: null, maxOutputTokens: null, modalities: null, capabilities: null, priceSource: 'operator', provider: null };
}

/** The operator's record over the bundled one: the operator's kind, visibility, upstream and prices; the bundled facts. */
export function overlayOperatorModel(bundled: CatalogModel, model: Model): CatalogModel {
  return { ...bundled, ...model, pricing: operatorPricingOver(bundled.pricing, model.pricing), priceSource: 'operator' };
}

/**
 * The operator's prices over the bundled ones. Hosted tool prices the operator left unset keep the bundled price (a
 * record written for its token prices does not make searches free; 0 does), and the bundled per-image table by size
 * and quality stays unless the operator set a per-image price. A batch price the operator left unset is the bundled
 * one while the record keeps the bundled price it belongs to; a record that sets its own input (or output) price and
 * no batch price bills batch lines at its own normal price.
 */
function operatorPricingOver(bundled: Pricing, operator: Pricing): Pricing {
  const pricing: Pricing = {
    ...operator,
    batchInputPerMtokNano: operator.batchInputPerMtokNano ?? (operator.inputPerMtokNano === bundled.inputPerMtokNano ? bundled.batchInputPerMtokNano : null),
    batchOutputPerMtokNano: operator.batchOutputPerMtokNano ?? (operator.outputPerMtokNano === bundled.outputPerMtokNano ? bundled.batchOutputPerMtokNano : null),
    perWebSearchNano: operator.perWebSearchNano ?? bundled.perWebSearchNano,
    perGroundedPromptNano: operator.perGroundedPromptNano ?? bundled.perGroundedPromptNano,
    perWebFetchNano: operator.perWebFetchNano ?? bundled.perWebFetchNano,
    perFileSearchNano: operator.perFileSearchNano ?? bundled.perFileSearchNano,
  };
  if (operator.perImageNano === null && bundled.perImageBySize !== undefined) pricing.perImageBySize = bundled.perImageBySize;
  return pricing;
}

/** A stored record with a bundled model's id, kind and prices (long-context tiers and per-image tables are the bundled data's alone). */
export function operatorCopy(model: CatalogModel, now: number): Model {
  const { tiers: _tiers, perImageBySize: _sizes, ...pricing } = model.pricing;
  return { id: model.id, kind: model.kind, public: model.public, upstream: model.upstream, ownedBy: model.ownedBy, pricing, rpm: model.rpm, tpm: model.tpm, routingStrategy: model.routingStrategy, cache: model.cache, fallbacks: model.fallbacks, createdAt: now, updatedAt: now };
}
