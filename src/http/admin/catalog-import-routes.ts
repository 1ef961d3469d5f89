import { z } from 'zod';
import { operatorCopy, type CatalogModel } from '../../catalog/catalog-model.js';
import { PRICE_FIELDS, pricingToJson } from '../../catalog/model-json.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { parseInput } from '../../management/parse-input.js';
import type { GatewayServices } from '../../services.js';
import type { Model, Pricing } from '../../domain/model-records.js';
import { sendJson } from '../respond.js';
import { isUniqueViolation, readAdminBody } from './admin-guard.js';
import { catalogChanged } from './catalog-routes.js';
import { adminRoutes } from './admin-route.js';
import type { CatalogEntryJson, CatalogImportJson, CatalogListJson } from '../../contract/models.js';

const importSchema = z.object({
  provider: z.string().trim().min(1).max(100),
  /** Ids of the provider's bundled models; omitted: every model of the provider. */
  models: z.array(z.string().trim().min(1).max(200)).min(1).max(1000).optional(),
}).strict();

/** Whether the record's flat prices are the bundled list prices (long-context tiers are the bundled data's alone). */
function samePrices(stored: Pricing, list: Pricing): boolean {
  // An optional price left out (the audio ones) is unset, as null is; an unset batch price is served at the list one.
  const batch = (field: keyof Pricing): boolean => field === 'batchInputPerMtokNano' || field === 'batchOutputPerMtokNano';
  return PRICE_FIELDS.every(([, field]) => ((batch(field) ? stored[field] ?? list[field] : stored[field]) ?? null) === (list[field] ?? null));
}

function catalogEntryJson(provider: string, model: CatalogModel, stored: Model | undefined): CatalogEntryJson {
  return {
    id: model.id,
    kind: model.kind,
    provider,
    list_pricing: pricingToJson(model.pricing),
    context_window: model.contextWindow,
    // `list`: no record, served at the list prices; `imported`: a record at the list prices; `custom`: its own prices.
    status: stored === undefined ? 'list' : samePrices(stored.pricing, model.pricing) ? 'imported' : 'custom',
    pricing: stored === undefined ? null : pricingToJson(stored.pricing),
  };
}

/**
 * Stores each bundled model's list prices as the gateway's own model record: a new record as a PATCH of a bundled
 * model makes it, or, for a model that has one, only its prices replaced (visibility, upstream, limits and a batch
 * price the record already has stay).
 */
async function importListPrices(services: GatewayServices, models: readonly CatalogModel[]): Promise<CatalogImportJson['imported']> {
  const { storage, clock } = services;
  const results: CatalogImportJson['imported'] = [];
  for (const model of models) {
    const now = clock.now();
    const copy = operatorCopy(model, now);
    let before = await storage.models.getById(model.id);
    if (before === null) {
      try {
        await storage.models.create(copy);
        results.push({ id: model.id, created: true, before: null, after: pricingToJson(copy.pricing) });
        continue;
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
        before = await storage.models.getById(model.id);
        if (before === null) throw error;
      }
    }
    // A batch price the operator set stays: the import brings list prices, never over the operator's batch price.
    const pricing: Pricing = {
      ...copy.pricing,
      batchInputPerMtokNano: before.pricing.batchInputPerMtokNano ?? copy.pricing.batchInputPerMtokNano,
      batchOutputPerMtokNano: before.pricing.batchOutputPerMtokNano ?? copy.pricing.batchOutputPerMtokNano,
    };
    const updated = await storage.models.update(model.id, { pricing }, now);
    results.push({ id: model.id, created: false, before: pricingToJson(before.pricing), after: pricingToJson((updated ?? { pricing }).pricing) });
  }
  return results;
}

/**
 * /admin/catalog: the bundled catalog with its list prices beside the gateway's own records, and the bulk import of
 * list prices into model records.
 */
export const CATALOG_IMPORT_ROUTES = adminRoutes((services: GatewayServices) => {
  const { storage, catalog } = services;
  return { services, storage, catalog };
}, [
  { method: 'GET', path: '/admin/catalog/models', handler: ({ storage, catalog }) => async (context) => {
    const provider = context.query.get('provider');
    const search = (context.query.get('q') ?? '').trim().toLowerCase();
    const byProvider = catalog.bundledByProvider();
    if (provider !== null && provider !== '' && !byProvider.has(provider)) {
      throw new GatewayError('bad_request', `'provider' must be one of ${[...byProvider.keys()].join(', ')}.`, { param: 'provider' });
    }
    const stored = new Map((await storage.models.listAll()).map((model) => [model.id, model]));
    const chosen = [...byProvider].filter(([name]) => provider === null || provider === '' || name === provider)
      .flatMap(([name, models]) => models.map((model) => ({ provider: name, model })))
      .filter(({ model }) => search === '' || model.id.toLowerCase().includes(search))
      .sort((left, right) => left.model.id.localeCompare(right.model.id));
    const list: CatalogListJson = {
      object: 'list', bundled_version: catalog.bundledVersion(), providers: [...byProvider.keys()],
      data: chosen.map(({ provider: name, model }) => catalogEntryJson(name, model, stored.get(model.id))), has_more: false, next_cursor: null,
    };
    sendJson(context, 200, list);
  } },

  { method: 'POST', path: '/admin/catalog/import', handler: ({ services, catalog }) => async (context) => {
    const input = parseInput(importSchema, await readAdminBody(context));
    const offered = catalog.bundledByProvider().get(input.provider);
    if (offered === undefined) throw new GatewayError('bad_request', `No bundled provider '${input.provider}'.`, { param: 'provider' });
    let chosen: CatalogModel[] = offered;
    if (input.models !== undefined) {
      const byId = new Map(offered.map((model) => [model.id, model]));
      const unknown = input.models.filter((id) => !byId.has(id));
      if (unknown.length > 0) throw new GatewayError('bad_request', `Not bundled models of ${input.provider}: ${unknown.slice(0, 10).join(', ')}.`, { param: 'models' });
      chosen = [...new Set(input.models)].map((id) => byId.get(id) as CatalogModel);
    }
    const imported = await importListPrices(services, chosen);
    await catalogChanged(services);
    const answer: CatalogImportJson = { object: 'catalog.import', provider: input.provider, bundled_version: catalog.bundledVersion(), imported };
    sendJson(context, 200, answer);
  } },
]);
