import { atBatchPrices } from '../billing/batch-pricing.js';
import type { CatalogModel } from '../catalog/catalog-model.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { ApiKey } from '../domain/records.js';
import type { Model } from '../domain/model-records.js';
import { keyMayUse, modelNotAllowed } from '../relay/admission.js';
import { fallsBack, type ModelStep } from '../relay/relay-fallback.js';
import type { RequestMeter } from '../relay/request-meter.js';
import type { ChannelRoute } from '../routing/catalog.js';
import { fallbackModelNames } from '../routing/fallback-models.js';
import { fitRoutes, type RouteDemand } from '../routing/fit-routes.js';
import type { ProviderPreference } from '../routing/provider-preference.js';
import type { GatewayServices } from '../services.js';
import type { AdapterRegistry } from '../upstreams/adapter-registry.js';
import { routesByPreference } from './caller-preference.js';
import { findModel, noChannel } from './resolve-model.js';

/** What choosing a chat request's models needs to know of it. */
export interface ChainRequest {
  key: ApiKey;
  meter: RequestMeter;
  /** The model the request names. */
  model: string;
  /** The caller's own fallback list (`models`, `x-gateway-models`), or null. */
  requested: readonly string[] | null;
  preference: ProviderPreference | null;
  /** The channels that can take this request at all, when only some can (see ChatEnvelope.nativeOnly). */
  narrowRoutes?: (routes: readonly ChannelRoute[], adapters: AdapterRegistry) => readonly ChannelRoute[];
  demand: RouteDemand;
}

/** The models a chat request may be answered by: the first (for admission and limits), all of them in order, and the others (for the money hold). */
export interface ModelChain {
  model: Model;
  steps: ModelStep[];
  fallbackModels: Model[];
}

/**
 * The model the request names, or a 400 when the caller listed a model the catalog lacks or that does not chat; a
 * 403 when the key may not use it. An operator's fallback that is gone, of another kind or outside the key's
 * allowlist is left out instead: the caller did not ask for it.
 */
function chainModel(services: GatewayServices, key: ApiKey, name: string, requested: boolean): CatalogModel | null {
  const model = services.catalog.model(name);
  if (model === undefined || model.kind !== 'chat') {
    if (!requested) return null;
    const why = model === undefined ? 'does not exist' : `is a ${model.kind} model`;
    throw new GatewayError(model === undefined ? 'model_not_found' : 'bad_request', `The model '${name}' in the fallback models ${why}. GET /v1/models lists the available models.`, { param: 'models' });
  }
  if (keyMayUse(key, model, name)) return model;
  if (requested) throw modelNotAllowed(model);
  return null;
}

/** The answer when every channel of a chat model is a rerank-only upstream's: the model is set up wrong. */
function rerankOnly(model: Model, routes: readonly ChannelRoute[]): GatewayError {
  const types = [...new Set(routes.map((route) => route.channel.type))].join(', ');
  return new GatewayError('bad_request', `Model '${model.id}' is served only by ${types} channels, which answer rerank requests only (POST /v1/rerank).`, { param: 'model' });
}

/**
 * A model's channels able to take this request: its routes, less those of rerank-only upstreams, narrowed to the
 * channels that can take it, ordered by the caller's preference and fitted (fitRoutes); a promise only when the
 * tokenizer must count the prompt.
 */
function modelRoutes(services: GatewayServices, request: ChainRequest, name: string, stepModel: Model): readonly ChannelRoute[] | Promise<readonly ChannelRoute[]> {
  const listed = services.catalog.routes(name);
  if (listed.length === 0) throw noChannel(stepModel);
  const served = listed.filter((route) => services.adapters.get(route.channel.type)?.servesChat !== false);
  if (served.length === 0) throw rerankOnly(stepModel, listed);
  const routes = request.narrowRoutes?.(served, services.adapters) ?? served;
  return fitRoutes(name, routesByPreference(services, request.preference, stepModel, routes), request.demand);
}

/** The chain once its first model's routes are fitted (or, as a function, its refusal kept for the relay loop). */
function chainOf(model: Model, name: string, fallbacks: readonly ModelStep[], routes: ModelStep['routes']): ModelChain {
  return { model, steps: [{ name, model, routes }, ...fallbacks], fallbackModels: fallbacks.map((step) => step.model) };
}

/** The chain when its first model cannot take the request: the refusal is the answer unless a fallback may follow it. */
function refusedChain(model: Model, name: string, fallbacks: readonly ModelStep[], error: unknown): ModelChain {
  if (fallbacks.length === 0 || !fallsBack(error)) throw error;
  return chainOf(model, name, fallbacks, () => {
    throw error;
  });
}

/**
 * A chat request's model chain (routing/fallback-models.ts). The named model's routes are fitted now, so a request
 * no fallback could take is refused before admission as it always was; when a fallback can follow, the first
 * model's fallback-worthy refusal (context window, no channel) is kept for the relay loop to pass over. Channels
 * of rerank-only upstreams are passed over: they answer no chat. The chain is returned at once; it is a promise only
 * when the tokenizer must count the prompt near the first model's context window, and then the same steps finish it.
 */
export function modelChain(services: GatewayServices, request: ChainRequest): ModelChain | Promise<ModelChain> {
  const { catalog } = services;
  const model = findModel(services, request.meter, request.model);
  // A model named without the caller's list and without fallbacks of its own is a chain of one.
  const names = request.requested === null && model.fallbacks.length === 0 ? [request.model] : fallbackModelNames(request.model, request.requested, (name) => catalog.model(name)?.fallbacks ?? [], (name) => catalog.model(name)?.id);
  const fallbacks: ModelStep[] = [];
  for (let index = 1; index < names.length; index += 1) {
    const name = names[index] as string;
    const fallback = chainModel(services, request.key, name, request.requested !== null);
    if (fallback === null) continue;
    const stepModel = request.meter.batch ? atBatchPrices(fallback) : fallback;
    fallbacks.push({ name, model: stepModel, routes: () => modelRoutes(services, request, name, stepModel) });
  }
  let routes: readonly ChannelRoute[] | Promise<readonly ChannelRoute[]>;
  try {
    routes = modelRoutes(services, request, request.model, model);
  } catch (error) {
    return refusedChain(model, request.model, fallbacks, error);
  }
  if (!(routes instanceof Promise)) return chainOf(model, request.model, fallbacks, routes);
  return routes.then(
    (fitted) => chainOf(model, request.model, fallbacks, fitted),
    (error: unknown) => refusedChain(model, request.model, fallbacks, error),
  );
}
