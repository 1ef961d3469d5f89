import { GatewayError } from '../errors/gateway-error.js';
import type { ChannelRoute } from '../routing/catalog.js';
import { applyProviderPreference, type ProviderPreference } from '../routing/provider-preference.js';
import type { GatewayServices } from '../services.js';
import type { Model } from '../domain/model-records.js';
import type { RequestContext } from '../http/request-context.js';
import type { ClientWire } from '../wire/wire.js';
import { loadOnce } from '../shared/load-once.js';

/** The extension header holding the provider preference (the only way for families whose body has no room for it). */
export const PROVIDER_PREFERENCE_HEADER = 'x-gateway-provider';

/** The preference's parser (and the validation library it is written in), loaded by the first request giving one. */
const parser = loadOnce(() => import('../routing/parse-provider-preference.js'));

/**
 * The caller's provider preference: the body's `provider` field where its wire has room for it (OpenAI chat and Responses) (taken out of the body, so no upstream
 * ever sees it, pass-through or translated), else the `x-gateway-provider` header. Read once per request: null at
 * once when the caller gave none, else the parsed preference (rejected with a 400 when it is malformed).
 */
export function callerPreference(context: RequestContext, wire: ClientWire, body: Record<string, unknown>): Promise<ProviderPreference | null> | null {
  if (wire.gatewayFields.includes('provider') && 'provider' in body) {
    const raw = body.provider;
    delete body.provider;
    if (raw !== null) return parser.get().then((parse) => parse.parseProviderPreference(raw, 'provider'));
  }
  const header = context.request.headers[PROVIDER_PREFERENCE_HEADER];
  if (typeof header !== 'string' || header.trim() === '') return null;
  return parser.get().then((parse) => parse.parseProviderPreferenceHeader(header, PROVIDER_PREFERENCE_HEADER));
}

/**
 * The routes of a chat request narrowed and ranked by the caller's provider preference, when it gave one: a 400
 * when the preference is malformed or leaves no channel of the model. The price a route costs is the model's
 * (the gateway bills per model, whichever channel answers); latency is the channel-model's recent time to first byte.
 */
export async function routesByCallerPreference(
  services: GatewayServices,
  context: RequestContext,
  wire: ClientWire,
  body: Record<string, unknown>,
  model: Model,
  routes: readonly ChannelRoute[],
): Promise<readonly ChannelRoute[]> {
  return routesByPreference(services, await callerPreference(context, wire, body), model, routes);
}

/** A model's routes narrowed and ranked by a preference read with `callerPreference` (see `routesByCallerPreference`). */
export function routesByPreference(services: GatewayServices, preference: ProviderPreference | null, model: Model, routes: readonly ChannelRoute[]): readonly ChannelRoute[] {
  if (preference === null) return routes;
  const price = { promptPerMtokNano: model.pricing.inputPerMtokNano, completionPerMtokNano: model.pricing.outputPerMtokNano };
  const preferred = applyProviderPreference(routes, preference, {
    latencyMs: (route) => services.health.load.latencyMs(route.channel.id, model.id),
    priceOf: () => price,
  });
  if (preferred.length === 0) {
    throw new GatewayError('bad_request', `No channel of model '${model.id}' matches the provider preference (only, ignore, max_price, allow_fallbacks).`, { param: 'provider' });
  }
  return preferred;
}
