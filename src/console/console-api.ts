import { GatewayError } from '../errors/gateway-error.js';
import type { Router } from '../http/router.js';
import { sendJson } from '../http/respond.js';
import type { ConsoleDeps } from './console-deps.js';
import { anyoneRoute, consoleActorOf } from './console-route.js';
import { addBillingConsoleRoutes } from '../console-billing/billing-routes.js';
import { addAuthRoutes } from './routes/auth-routes.js';
import { addKeyRoutes } from './routes/key-routes.js';
import { addModelRoutes } from './routes/model-routes.js';
import { addTransactionRoutes } from './transactions/transaction-routes.js';
import { addAnnouncementRoutes } from './routes/announcement-routes.js';
import { addDisplayCurrencyRoutes } from './routes/display-currency-routes.js';
import { addMeRoutes } from './routes/me-routes.js';
import { addMemberRoutes } from './routes/member-routes.js';
import { addWalletRoutes } from './routes/wallet-routes.js';
import { addConsoleAlertRoutes } from './routes/alert-routes.js';
import { addConsoleWebhookRoutes } from './routes/webhook-routes.js';
import { addConsolePlanRoutes } from './routes/plan-routes.js';
import { addPlaygroundRoute } from './routes/playground-route.js';
import { addUsageRoutes } from './routes/usage-routes.js';
import { addProjectRoutes } from './routes/project-routes.js';
// The operator's console (src/console/operator): deployment-wide roles, the audit log, the admin API bridge.
import { addOperatorRoutes } from './operator/operator-routes.js';
import { addSsoRoutes } from './sso/sso-routes.js';

const API_METHODS = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'] as const;

/** The console's JSON API (docs/console-api.md), all under /api/ on the console origin. */
export function addConsoleApiRoutes(router: Router, deps: ConsoleDeps): void {
  const { config, mailer } = deps.services;
  router.add('GET', '/api/config', anyoneRoute(deps, async ({ context }) => {
    sendJson(context, 200, {
      api_base_url: deps.urls.apiPublic(),
      console_url: deps.urls.console(),
      product_name: config.keyBrand,
      mail_configured: mailer.kind === 'smtp',
      features: { sign_up: config.consoleSignUp },
    });
  }));
  addAuthRoutes(router, deps);
  addMeRoutes(router, deps);
  addKeyRoutes(router, deps);
  addModelRoutes(router, deps);
  addUsageRoutes(router, deps);
  addTransactionRoutes(router, deps);
  addAnnouncementRoutes(router, deps);
  addDisplayCurrencyRoutes(router, deps);
  addPlaygroundRoute(router, deps);
  // Members and invitations (money-web branch).
  addMemberRoutes(router, deps);
  // Exchange rates and redemption codes for the billing page (money-web branch).
  addWalletRoutes(router, deps);
  addConsoleAlertRoutes(router, deps);
  addConsoleWebhookRoutes(router, deps);
  addConsolePlanRoutes(router, deps);
  addProjectRoutes(router, deps);
  // Top-up, invoices, referrals and support (src/console-billing), behind the same session and CSRF checks.
  addBillingConsoleRoutes(router, deps.services, consoleActorOf(deps));
  // Operator pages' API under /api/operator/ (operator role and a second factor required).
  addOperatorRoutes(router, deps);
  // Single sign-on (src/console/sso): OpenID Connect sign-in, the account's and the operators' settings.
  addSsoRoutes(router, deps);
  // Unknown /api/ paths answer JSON 404 with the API's headers, never the web app's page.
  const unknown = anyoneRoute(deps, async (request) => {
    throw new GatewayError('not_found', `No route for ${request.context.method} ${request.context.path}.`);
  });
  for (const method of API_METHODS) router.add(method, /^\/api\/.*$/, unknown);
}
