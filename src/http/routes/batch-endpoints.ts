import type { BatchRoute } from '../../batches/batch-runner.js';
import { BATCH_ENDPOINTS, type BatchEndpoint } from '../../domain/batches.js';
import type { GatewayServices } from '../../services.js';
import type { RouteHandler } from '../request-context.js';
import { API_ROUTES } from './api-routes.js';

/** The API's own route for each endpoint a batch line may call, built once for the batch runner. */
export function batchRoutes(services: GatewayServices): Map<BatchEndpoint, BatchRoute> {
  const routes = new Map<BatchEndpoint, BatchRoute>();
  for (const endpoint of BATCH_ENDPOINTS) {
    // A patterned route (a Gemini action) is found by its path template.
    const route = API_ROUTES.find((entry) => entry.method === 'POST' && (entry.path === endpoint || entry.templates?.includes(endpoint) === true));
    if (route === undefined || typeof route.family === 'string') throw new Error(`The API serves no POST ${endpoint} for batch lines.`);
    routes.set(endpoint, { handler: route.handler(services), family: route.family });
  }
  return routes;
}

/** The API's own `POST /v1/responses` route (for the Responses API's WebSocket mode, which runs each response through it). */
export function responsesRouteHandler(services: GatewayServices): RouteHandler {
  const route = API_ROUTES.find((entry) => entry.method === 'POST' && entry.path === '/v1/responses');
  if (route === undefined) throw new Error('The API serves no POST /v1/responses.');
  return route.handler(services);
}
