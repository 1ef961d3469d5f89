import { hasMalformedAuthorization } from '../../auth/extract-api-key.js';
import { anthropicFamily } from '../../codecs/anthropic-messages/family.js';
import { geminiFamily } from '../../codecs/gemini/family.js';
import { anthropicModelObject, encodeAnthropicModelList, type AnthropicModelDescription } from '../../codecs/anthropic-messages/encode-model-list.js';
import { encodeGeminiModel, encodeGeminiModelList } from '../../codecs/gemini/index.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { GatewayServices } from '../../services.js';
import type { CatalogModel } from '../../catalog/catalog-model.js';
import { listedModelJson } from '../../catalog/model-json.js';
import type { ApiKey } from '../../storage/records.js';
import { authenticate } from '../authenticate.js';
import { enforcePublicRateLimit } from '../public-rate-limit.js';
import type { RequestContext, RouteHandler } from '../request-context.js';
import { sendJson, sendRaw } from '../respond.js';

function toAnthropicModel(model: CatalogModel): AnthropicModelDescription {
  return { id: model.id, displayName: model.id, createdAt: model.createdAt };
}

/** Anthropic's clients send `anthropic-version` on every call, the model list included. */
function asksForAnthropicShape(context: RequestContext): boolean {
  const headers = context.request.headers;
  return headers['anthropic-version'] !== undefined || headers['vendorb-version'] !== undefined;
}

async function listAnthropicModels(context: RequestContext, services: GatewayServices): Promise<void> {
  context.family = anthropicFamily;
  const visible = await visibleModels(context, services);
  // Anthropic lists the newest models first.
  const models = services.catalog.models().filter(visible).sort((left, right) => right.createdAt - left.createdAt || left.id.localeCompare(right.id));
  const body = encodeAnthropicModelList(models.map(toAnthropicModel), {
    limit: context.query.get('limit'),
    afterId: context.query.get('after_id'),
    beforeId: context.query.get('before_id'),
  });
  sendRaw(context, 200, body, 'application/json');
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

/**
 * `/v1/models` serves two families: Google's SDK sends its key as `x-goog-api-key` or `?key=` and gets Gemini's
 * list shape; everyone else gets OpenAI's.
 */
function asksForGeminiShape(context: RequestContext): boolean {
  const headers = context.request.headers;
  if (headers.authorization !== undefined || headers['x-api-key'] !== undefined) return false;
  return headers['x-goog-api-key'] !== undefined || context.query.has('key');
}

function allowedFor(key: ApiKey, model: CatalogModel): boolean {
  return key.allowedModels === null || key.allowedModels.includes(model.id) || model.aliases.some((alias) => key.allowedModels?.includes(alias));
}

async function sortedVisibleModels(context: RequestContext, services: GatewayServices): Promise<CatalogModel[]> {
  const visible = await visibleModels(context, services);
  return services.catalog.models().filter(visible).sort((left, right) => left.id.localeCompare(right.id));
}

async function findVisibleModel(context: RequestContext, services: GatewayServices): Promise<CatalogModel> {
  const visible = await visibleModels(context, services);
  const id = (context.params.model ?? '').replace(/^models\//, '');
  const model = services.catalog.model(id);
  if (model === undefined || !visible(model)) throw new GatewayError('not_found', `The model '${id}' does not exist or is not available to you.`);
  return model;
}

/** GET /v1/models: the models a key may use, the public ones without a key; Gemini's or Anthropic's list for their clients. */
export function listModelsRoute(services: GatewayServices): RouteHandler {
  const gemini = listGeminiModelsRoute(services);
  return async (context) => {
    if (asksForGeminiShape(context)) return gemini(context);
    if (asksForAnthropicShape(context)) return listAnthropicModels(context, services);
    const models = await sortedVisibleModels(context, services);
    // Dated snapshots and other aliases are listed under their own ids, as OpenAI lists its snapshots.
    sendJson(context, 200, { object: 'list', data: models.flatMap((model) => [model.id, ...model.aliases].map((name) => listedModelJson(model, name))) });
  };
}

/** GET /v1/models/{model}. */
export function getModelRoute(services: GatewayServices): RouteHandler {
  const gemini = getGeminiModelRoute(services);
  return async (context) => {
    if (asksForGeminiShape(context)) return gemini(context);
    if (asksForAnthropicShape(context)) {
      context.family = anthropicFamily;
      const model = await findVisibleModel(context, services);
      sendRaw(context, 200, JSON.stringify(anthropicModelObject(toAnthropicModel(model))), 'application/json');
      return;
    }
    const id = (context.params.model ?? '').replace(/^models\//, '');
    sendJson(context, 200, listedModelJson(await findVisibleModel(context, services), id));
  };
}

/** GET /v1beta/models: the model list in Gemini's shape. */
export function listGeminiModelsRoute(services: GatewayServices): RouteHandler {
  return async (context) => {
    context.family = geminiFamily;
    const models = await sortedVisibleModels(context, services);
    const body = encodeGeminiModelList(models.map((model) => ({ id: model.id, kind: model.kind })), {
      pageSize: context.query.get('pageSize'),
      pageToken: context.query.get('pageToken'),
    });
    sendRaw(context, 200, body, 'application/json');
  };
}

/** GET /v1beta/models/{model}. */
export function getGeminiModelRoute(services: GatewayServices): RouteHandler {
  return async (context) => {
    context.family = geminiFamily;
    const model = await findVisibleModel(context, services);
    sendRaw(context, 200, encodeGeminiModel({ id: model.id, kind: model.kind }), 'application/json');
  };
}
