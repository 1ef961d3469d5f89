import type { IncomingMessage, ServerResponse } from 'node:http';
import { createListener } from './http/create-listener.js';
import type { AdmissionControl } from './http/admission-control.js';
import { addWebAppRoutes } from './console/static/serve-web-app.js';
import { CorsPolicy } from './http/cors.js';
import { addAccountRoutes } from './http/admin/account-routes.js';
import { addAlertRoutes } from './http/admin/alert-routes.js';
import { addRedemptionRoutes } from './http/admin/redemption-routes.js';
import { addCatalogImportRoutes } from './http/admin/catalog-import-routes.js';
import { addCatalogRoutes } from './http/admin/catalog-routes.js';
import { addHealthRoutes } from './http/admin/health-routes.js';
import { addMoneyRoutes } from './http/admin/money-routes.js';
import { addOperationsRoutes } from './http/admin/operations-routes.js';
import { addTierRoutes } from './http/admin/tier-routes.js';
import { sendJson } from './http/respond.js';
import { Router } from './http/router.js';
import { chatRoute } from './http/routes/chat-endpoint.js';
import { anthropicMessagesEndpoint, geminiEndpoint, openAIChatEndpoint } from './http/routes/chat-endpoints.js';
import { creditGrantsRoute } from './http/routes/credit-grants.js';
import { anthropicCountTokensRoute, geminiCountTokensRoute, responsesInputTokensRoute } from './http/routes/count-tokens.js';
import { geminiEmbeddingsRoute, openAIEmbeddingsRoute } from './http/routes/embeddings.js';
import { responsesRoute, storedResponseRoute } from './http/routes/responses.js';
import { redeemRoute } from './http/routes/redeem.js';
import { speechRoute, transcriptionsRoute, translationsRoute } from './http/routes/audio.js';
import { imageEditsRoute, imageGenerationsRoute, imageVariationsRoute } from './http/routes/images.js';
import { moderationsRoute } from './http/routes/moderations.js';
import { getGeminiModelRoute, getModelRoute, listGeminiModelsRoute, listModelsRoute } from './http/routes/models.js';
import { familyOfPath } from './codecs/families.js';
import { announcementsRoute, fxLatestRoute, statusRoute } from './http/routes/public-metadata.js';
import { addInvoiceAdminRoutes } from './console-billing/admin-invoice-routes.js';
import { addSupportAdminRoutes } from './console-billing/admin-support-routes.js';
import { stripeWebhookRoute } from './console-billing/stripe-webhook-route.js';
import { livenessRoute, readinessRoute } from './http/routes/health.js';
import type { GatewayServices } from './services.js';
import { addConsoleApiRoutes } from './console/console-api.js';
import type { ConsoleUrls } from './console/console-deps.js';

export type RequestListener = (request: IncomingMessage, response: ServerResponse) => void;

/** `/v1beta/models/{model}:{action}` and the same under `/v1/` (the @google/genai SDK uses either). */
function geminiAction(action: string): RegExp {
  return new RegExp(`^/(?:v1beta|v1)/models/(?<model>[^/]+):${action}$`);
}

/**
 * The API listener's handler: /v1/*, /api/*, /admin/*. Built from services; never listens itself. With
 * `admission`, requests beyond what the process can serve are refused 503 `overloaded` before any work.
 */
export function createApiApp(services: GatewayServices, admission?: AdmissionControl): RequestListener {
  const router = new Router()
    .add('POST', '/v1/chat/completions', chatRoute(services, openAIChatEndpoint))
    .add('POST', '/v1/embeddings', openAIEmbeddingsRoute(services))
    // OpenAI Responses API: POST relays; stored-response operations answer 404 (no response bodies are kept).
    .add('POST', '/v1/responses', responsesRoute(services))
    .add('POST', '/v1/responses/input_tokens', responsesInputTokensRoute(services))
    .add('GET', '/v1/responses/:id', storedResponseRoute(services))
    .add('DELETE', '/v1/responses/:id', storedResponseRoute(services))
    .add('POST', '/v1/responses/:id/cancel', storedResponseRoute(services))
    .add('GET', '/v1/responses/:id/input_items', storedResponseRoute(services))
    // Media (images, audio, moderations): OpenAI's wire; multipart uploads are spooled to disk, never held whole.
    .add('POST', '/v1/images/generations', imageGenerationsRoute(services))
    .add('POST', '/v1/images/edits', imageEditsRoute(services))
    .add('POST', '/v1/images/variations', imageVariationsRoute(services))
    .add('POST', '/v1/audio/transcriptions', transcriptionsRoute(services))
    .add('POST', '/v1/audio/translations', translationsRoute(services))
    .add('POST', '/v1/audio/speech', speechRoute(services))
    .add('POST', '/v1/moderations', moderationsRoute(services))
    .add('POST', '/v1/messages', chatRoute(services, anthropicMessagesEndpoint))
    .add('POST', '/v1/messages/count_tokens', anthropicCountTokensRoute(services))
    .add('POST', geminiAction('generateContent'), chatRoute(services, geminiEndpoint(false)))
    .add('POST', geminiAction('streamGenerateContent'), chatRoute(services, geminiEndpoint(true)))
    .add('POST', geminiAction('countTokens'), geminiCountTokensRoute(services))
    .add('POST', geminiAction('embedContent'), geminiEmbeddingsRoute(services, false))
    .add('POST', geminiAction('batchEmbedContents'), geminiEmbeddingsRoute(services, true))
    .add('GET', '/v1beta/models', listGeminiModelsRoute(services))
    .add('GET', '/v1beta/models/:model', getGeminiModelRoute(services))
    .add('GET', '/v1/models', listModelsRoute(services))
    .add('GET', '/v1/models/:model', getModelRoute(services))
    .add('GET', '/v1/dashboard/billing/credit_grants', creditGrantsRoute(services))
    .add('GET', '/healthz', livenessRoute())
    .add('GET', '/readyz', readinessRoute(services))
    .add('GET', '/api/status', statusRoute(services))
    .add('GET', '/api/public/announcements', announcementsRoute(services))
    .add('GET', '/api/fx/latest', fxLatestRoute(services))
    .add('POST', '/v1/dashboard/billing/redeem', redeemRoute(services));
  addCatalogRoutes(router, services);
  addCatalogImportRoutes(router, services);
  addAccountRoutes(router, services);
  addOperationsRoutes(router, services);
  addTierRoutes(router, services);
  addMoneyRoutes(router, services);
  addHealthRoutes(router, services);
  addAlertRoutes(router, services);
  addRedemptionRoutes(router, services);
  addSupportAdminRoutes(router, services);
  addInvoiceAdminRoutes(router, services);
  const cors = new CorsPolicy((origin) => services.storage.keys.anyAllowsOrigin(origin));
  services.invalidation.subscribe((message) => {
    if (message.kind === 'key' || message.kind === 'account' || message.kind === 'all') cors.forget();
  });
  return createListener({ router, logger: services.logger, clientIp: services.clientIp, familyOfPath, cors, telemetry: services.telemetry, ...(admission === undefined ? {} : { admission }) });
}

/** The console listener (separate origin from the API): its health check, and the web console. */
export function createConsoleApp(services: GatewayServices, urls: ConsoleUrls): RequestListener {
  const router = new Router()
    .add('GET', '/healthz', async (context) => sendJson(context, 200, { status: 'ok' }))
    // Stripe's webhook (card top-ups, refunds, disputes): authenticated by its signature, not by a console session.
    .add('POST', '/api/webhooks/stripe', stripeWebhookRoute(services));
  // The console's JSON API (src/console/, docs/console-api.md): everything under /api/.
  addConsoleApiRoutes(router, { services, urls });
  // Web console (src/console/static): the built browser app for every GET outside /api/ and /healthz. Keep last.
  addWebAppRoutes(router, services.logger);
  return createListener({ router, logger: services.logger, clientIp: services.clientIp });
}
