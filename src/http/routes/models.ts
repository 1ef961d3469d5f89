import { extractApiKey, hasMalformedAuthorization } from '../../auth/extract-api-key.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { GatewayServices } from '../../services.js';
import type { ApiKey, Model } from '../../storage/records.js';
import { authenticate } from '../authenticate.js';
import { enforcePublicRateLimit } from '../public-rate-limit.js';
import type { RequestContext, RouteHandler } from '../request-context.js';
import { sendJson } from '../respond.js';

function toOpenAIModel(model: Model): Record<string, unknown> {
  return { id: model.id, object: 'model', created: Math.floor(model.createdAt / 1000), owned_by: model.ownedBy };
}

/** With a key: the models that key may use. Without: the publicly visible ones, limited per IP. */
async function visibleModels(context: RequestContext, services: GatewayServices): Promise<(model: Model) => boolean> {
  const headers = context.request.headers;
  const presentsKey = extractApiKey(headers, context.query, 'openai') !== null || hasMalformedAuthorization(headers);
  if (!presentsKey) {
    await enforcePublicRateLimit(context, services);
    return (model) => model.public && services.catalog.hasRoute(model.id);
  }
  const { key } = await authenticate(context, services, 'openai');
  return (model) => services.catalog.hasRoute(model.id) && allowedFor(key, model);
}

function allowedFor(key: ApiKey, model: Model): boolean {
  return key.allowedModels === null || key.allowedModels.includes(model.id);
}

/** GET /v1/models (spec 4.1, 4.4). */
export function listModelsRoute(services: GatewayServices): RouteHandler {
  return async (context) => {
    const visible = await visibleModels(context, services);
    const data = services.catalog.models().filter(visible).sort((left, right) => left.id.localeCompare(right.id)).map(toOpenAIModel);
    sendJson(context, 200, { object: 'list', data });
  };
}

/** GET /v1/models/{model}. */
export function getModelRoute(services: GatewayServices): RouteHandler {
  return async (context) => {
    const visible = await visibleModels(context, services);
    const model = services.catalog.model(context.params.model ?? '');
    if (model === undefined || !visible(model)) {
      throw new GatewayError('not_found', `The model '${context.params.model ?? ''}' does not exist or is not available to you.`);
    }
    sendJson(context, 200, toOpenAIModel(model));
  };
}
