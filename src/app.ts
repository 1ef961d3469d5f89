import type { IncomingMessage, ServerResponse } from 'node:http';
import { createListener, type FrameListener } from './http/create-listener.js';
import type { AdmissionControl } from './http/admission-control.js';
import { addWebAppRoutes } from './console/static/serve-web-app.js';
import { CorsPolicy } from './http/cors.js';
import { sendJson } from './http/respond.js';
import { Router } from './http/router.js';
import { lazyRouteGroup } from './http/lazy-route-group.js';
import { API_ROUTES, apiRouteLabels } from './http/routes/api-routes.js';
import { familyOfPath } from './codecs/families.js';
import { stripeWebhookRoute } from './console-billing/stripe-webhook-route.js';
import type { GatewayServices } from './services.js';
import type { ConsoleUrls } from './console/console-deps.js';
import { consoleHostCheck } from './console/console-hosts.js';

export type RequestListener = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * The API listener's handler: /v1/*, /api/*, /admin/*, with the request metrics by route. Built from services; never
 * listens itself. With `admission`, requests beyond what the process can serve are refused 503 `overloaded` before
 * any work.
 */
export function createApiApp(services: GatewayServices, admission?: AdmissionControl): FrameListener {
  const router = new Router();
  for (const route of API_ROUTES) router.add(route.method, route.path, route.handler(services));
  // The admin API and SCIM are loaded at their first request: a gateway that only relays never holds their modules.
  const adminRoutes = lazyRouteGroup(async () => {
    const [{ mountAdminRoutes }, { ADMIN_ROUTES }] = await Promise.all([import('./http/admin/admin-route.js'), import('./admin-routes.js')]);
    return mountAdminRoutes(new Router(), services, ADMIN_ROUTES);
  });
  router.mount('/admin', adminRoutes);
  // The admin's Prometheus scrape is one admin route outside /admin/.
  router.add('GET', '/metrics', adminRoutes);
  // SCIM 2.0 provisioning of accounts' members from their directories (src/scim), with each account's SCIM token.
  router.mount('/scim', lazyRouteGroup(async () => {
    const { addScimRoutes } = await import('./scim/scim-routes.js');
    const scim = new Router();
    addScimRoutes(scim, services);
    return scim;
  }));
  const cors = new CorsPolicy((origin) => services.storage.keys.anyAllowsOrigin(origin));
  services.invalidation.subscribe((message) => {
    if (message.kind === 'key' || message.kind === 'account' || message.kind === 'all') cors.forget();
  });
  return createListener({
    router,
    logger: services.logger,
    clientIp: services.clientIp,
    familyOfPath,
    cors,
    telemetry: services.telemetry,
    metrics: { metrics: services.metrics, routeLabels: apiRouteLabels },
    ...(admission === undefined ? {} : { admission }),
  });
}

/** The console listener (separate origin from the API): its health check, and the web console. */
export function createConsoleApp(services: GatewayServices, urls: ConsoleUrls): FrameListener {
  const router = new Router()
    .add('GET', '/healthz', async (context) => sendJson(context, 200, { status: 'ok' }))
    // Stripe's webhook (card top-ups, refunds, disputes): authenticated by its signature, not by a console session.
    .add('POST', '/api/webhooks/stripe', stripeWebhookRoute(services));
  // The console's JSON API (src/console/, docs/console-api.md): everything under /api/, loaded at its first request.
  router.mount('/api', lazyRouteGroup(async () => {
    const { addConsoleApiRoutes } = await import('./console/console-api.js');
    const api = new Router();
    addConsoleApiRoutes(api, { services, urls });
    return api;
  }));
  // Web console (src/console/static): the built browser app for every GET outside /api/ and /healthz. Keep last.
  addWebAppRoutes(router, services.logger);
  const hostCheck = consoleHostCheck(services.config.consoleUrl, services.config.host, urls.console);
  return createListener({ router, logger: services.logger, clientIp: services.clientIp, ...(hostCheck === null ? {} : { beforeRoute: hostCheck }) });
}
