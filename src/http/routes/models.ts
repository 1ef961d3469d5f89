import { hasMalformedAuthorization } from '../../auth/extract-api-key.js';
import { CLIENT_FAMILIES, type ClientFamily } from '../../codecs/families.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { GatewayServices } from '../../services.js';
import type { CatalogModel } from '../../catalog/catalog-model.js';
import type { ApiKey } from '../../domain/records.js';
import { authenticate } from '../authenticate.js';
import { enforcePublicRateLimit } from '../public-rate-limit.js';
import type { RequestContext, RouteHandler } from '../request-context.js';
import { sendRaw } from '../respond.js';

/**
 * The family whose listing answers: the route's own, unless its listing recognises no one (OpenAI's `/v1/models`,
 * which every SDK calls) and another family's listing recognises the caller. Errors then take that family's shape.
 */
function listingFamily(context: RequestContext, own: ClientFamily): ClientFamily {
  if (own.models.recognises !== undefined) return own;
  const headers = context.request.headers;
  return CLIENT_FAMILIES.find((family) => family.models.recognises?.(headers, context.query) === true) ?? own;
}

/**
 * With a key (as the caller's family sends it): the models that key may use. Without: the publicly visible ones,
 * limited per IP.
 */
async function visibleModels(context: RequestContext, services: GatewayServices): Promise<(model: CatalogModel) => boolean> {
  const headers = context.request.headers;
  const presentsKey = context.family.readApiKey(headers, context.query) !== null || hasMalformedAuthorization(headers);
  if (!presentsKey) {
    await enforcePublicRateLimit(context, services);
    return (model) => model.public && services.catalog.hasRoute(model.id);
  }
  const { key } = await authenticate(context, services);
  return (model) => services.catalog.hasRoute(model.id) && allowedFor(key, model);
}

function allowedFor(key: ApiKey, model: CatalogModel): boolean {
  return key.allowedModels === null || key.allowedModels.includes(model.id) || model.aliases.some((alias) => key.allowedModels?.includes(alias));
}

/** The listModels operation: the models a key may use, the public ones without a key, in the caller's family's shape. */
export function listModelsRoute(services: GatewayServices, family: ClientFamily): RouteHandler {
  return async (context) => {
    context.family = listingFamily(context, family);
    const visible = await visibleModels(context, services);
    const models = services.catalog.models().filter(visible).sort((left, right) => left.id.localeCompare(right.id));
    sendRaw(context, 200, context.family.models.encodeList(models, context.query), 'application/json');
  };
}

/** The getModel operation: one model the caller may see (by id or alias, `models/` prefix allowed). */
export function getModelRoute(services: GatewayServices, family: ClientFamily): RouteHandler {
  return async (context) => {
    context.family = listingFamily(context, family);
    const visible = await visibleModels(context, services);
    const id = (context.params.model ?? '').replace(/^models\//, '');
    const model = services.catalog.model(id);
    if (model === undefined || !visible(model)) throw new GatewayError('not_found', `The model '${id}' does not exist or is not available to you.`);
    sendRaw(context, 200, context.family.models.encodeModel(model, id), 'application/json');
  };
}
