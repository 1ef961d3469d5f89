import { atBatchPrices } from '../billing/batch-pricing.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { RequestMeter } from '../relay/request-meter.js';
import type { ChannelRoute } from '../routing/catalog.js';
import type { GatewayServices } from '../services.js';
import type { Model, ModelKind } from '../domain/model-records.js';

/** The public model a request names, its name recorded on its meter; 400 `model_not_found` when the catalog has no such model. */
export function findModel(services: GatewayServices, meter: RequestMeter, modelId: string): Model {
  meter.named(modelId);
  const model = services.catalog.model(modelId);
  if (model === undefined) {
    throw new GatewayError('model_not_found', `The model '${modelId}' does not exist. GET /v1/models lists the available models.`, { param: 'model' });
  }
  return meter.batch ? atBatchPrices(model) : model;
}

/** The one kind of model an endpoint serves, and how the refusal names the endpoint. */
export interface ExpectedKind {
  kind: ModelKind;
  endpoint: string;
}

/**
 * The public model a request names (by id, alias or dated snapshot id), recorded on its meter (the usage row keeps
 * the name asked for), with the channels that serve it under that name: 400 `model_not_found`
 * when the catalog has no such model (or, for an endpoint of one kind, a model of another kind), 503
 * `upstream_unavailable` when no channel serves it.
 */
export function resolveModel(services: GatewayServices, meter: RequestMeter, modelId: string, expected?: ExpectedKind): { model: Model; routes: readonly ChannelRoute[] } {
  const model = findModel(services, meter, modelId);
  if (expected !== undefined) requireModelKind(model, modelId, expected.kind, expected.endpoint);
  const routes = services.catalog.routes(modelId);
  if (routes.length === 0) throw noChannel(model);
  return { model, routes };
}

/** The 503 for a model no channel serves. */
export function noChannel(model: Model): GatewayError {
  return new GatewayError('upstream_unavailable', `No upstream channel currently serves model '${model.id}'.`);
}

/** `a chat`, `an embedding`, `an image`, `an audio`, `a moderation`. */
function withArticle(kind: ModelKind): string {
  return `${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind}`;
}

/**
 * The model of an endpoint that serves one kind (embeddings, images, audio, moderations): a model of another kind is
 * not found for this endpoint, 400 `model_not_found` naming both kinds.
 */
function requireModelKind(model: Model, modelId: string, kind: ModelKind, endpoint: string): void {
  if (model.kind === kind) return;
  throw new GatewayError(
    'model_not_found',
    `The model '${modelId}' is ${withArticle(model.kind)} model; ${endpoint} takes ${withArticle(kind)} model. GET /v1/models lists the models with their kind.`,
    { param: 'model' },
  );
}
