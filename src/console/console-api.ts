import { GatewayError } from '../errors/gateway-error.js';
import type { Router } from '../http/router.js';
import { sendJson } from '../http/respond.js';
import type { ConsoleDeps } from './console-deps.js';
import { consoleActorOf, type AnyConsoleRequest } from './console-route.js';
import type { BillingRouteDeps } from '../console-billing/console-actor.js';
import { consoleRoutes, mountConsoleRoutes, type ConsoleRoute } from './console-route-table.js';
import { BILLING_CONSOLE_ROUTES } from '../console-billing/billing-routes.js';
import { REFERRAL_CONSOLE_ROUTES } from '../console-billing/referral-routes.js';
import { SUPPORT_CONSOLE_ROUTES } from '../console-billing/support-routes.js';
import { AUTH_ROUTES } from './routes/auth-routes.js';
import { KEY_ROUTES } from './routes/key-routes.js';
import { GUARDRAIL_OVERRIDE_ROUTES } from './routes/guardrail-override-routes.js';
import { CONSOLE_MCP_SERVER_ROUTES } from './routes/mcp-server-routes.js';
import { MODEL_ROUTES } from './routes/model-routes.js';
import { TRANSACTION_ROUTES } from './transactions/transaction-routes.js';
import { ANNOUNCEMENT_ROUTES } from './routes/announcement-routes.js';
import { DISPLAY_CURRENCY_ROUTES } from './routes/display-currency-routes.js';
import { ME_ROUTES } from './routes/me-routes.js';
import { MEMBER_ROUTES } from './routes/member-routes.js';
import { WALLET_ROUTES } from './routes/wallet-routes.js';
import { CONSOLE_ALERT_ROUTES } from './routes/alert-routes.js';
import { CONSOLE_WEBHOOK_ROUTES } from './routes/webhook-routes.js';
import { CONSOLE_PLAN_ROUTES } from './routes/plan-routes.js';
import { PLAYGROUND_ROUTES } from './routes/playground-route.js';
import { USAGE_ROUTES } from './routes/usage-routes.js';
import { PROJECT_ROUTES } from './routes/project-routes.js';
import { CUSTOMER_ROUTES } from './routes/customer-routes.js';
import { BATCH_CONSOLE_ROUTES } from './routes/batch-routes.js';
// The operator's console (src/console/operator): deployment-wide roles, the audit log, the admin API bridge.
import { ADMIN_BRIDGE_ROUTES } from './operator/admin-bridge.js';
import { OPERATOR_MANAGEMENT_ROUTES } from './operator/operator-management-routes.js';
import { OPERATOR_ROUTES } from './operator/operator-routes.js';
import { OVERVIEW_ROUTES } from './operator/overview-route.js';
import { USAGE_EXPLORER_ROUTES } from './operator/usage-explorer-route.js';
import { USER_ROUTES } from './operator/user-routes.js';
import type { ConsoleConfigJson } from '../contract/account.js';
import { SSO_ROUTES } from './sso/sso-routes.js';

/** GET /api/config: what the web app needs before anything else (URLs, product name, features). */
const CONFIG_ROUTES = consoleRoutes((deps: ConsoleDeps) => deps, [
  { method: 'GET', path: '/api/config', who: 'anyone', handler: ({ services: { config, mailer }, urls }) => async ({ context }) => {
    sendJson(context, 200, {
      api_base_url: urls.apiPublic(),
      console_url: urls.console(),
      product_name: config.keyBrand,
      mail_configured: mailer.kind === 'smtp',
      features: { sign_up: config.consoleSignUp },
    } satisfies ConsoleConfigJson);
  } },
]);

/** Unknown /api/ paths answer JSON 404 with the API's headers, never the web app's page. Mounted last. */
const UNKNOWN_API_ROUTES = consoleRoutes(() => null, (['GET', 'POST', 'PATCH', 'PUT', 'DELETE'] as const).map((method) => ({
  method, path: '/api/*', who: 'anyone' as const, handler: () => async ({ context }: AnyConsoleRequest) => {
    throw new GatewayError('not_found', `No route for ${context.method} ${context.path}.`);
  },
})));

/**
 * The console's JSON API (docs/console-api.md), all under /api/ on the console origin, declared once: one table per
 * feature, one line here each (the catch-all for unknown paths stays last). test/unit/docs/route-lists.test.ts holds
 * docs/console-api.md to this list.
 */
export const CONSOLE_API_ROUTES: readonly ConsoleRoute[] = [
  ...CONFIG_ROUTES,
  ...AUTH_ROUTES,
  ...ME_ROUTES,
  ...KEY_ROUTES,
  ...GUARDRAIL_OVERRIDE_ROUTES,
  ...CONSOLE_MCP_SERVER_ROUTES,
  ...MODEL_ROUTES,
  ...USAGE_ROUTES,
  ...TRANSACTION_ROUTES,
  ...ANNOUNCEMENT_ROUTES,
  ...DISPLAY_CURRENCY_ROUTES,
  ...PLAYGROUND_ROUTES,
  // Members and invitations.
  ...MEMBER_ROUTES,
  // Exchange rates and redemption codes for the billing page.
  ...WALLET_ROUTES,
  ...CONSOLE_ALERT_ROUTES,
  ...CONSOLE_WEBHOOK_ROUTES,
  ...CONSOLE_PLAN_ROUTES,
  ...PROJECT_ROUTES,
  ...CUSTOMER_ROUTES,
  ...BATCH_CONSOLE_ROUTES,
  // Top-up, invoices, referrals and support (src/console-billing): the caller comes from the console's session.
  ...consoleRoutes((deps: ConsoleDeps): BillingRouteDeps => ({ services: deps.services, authenticate: consoleActorOf(deps) }), [
    ...BILLING_CONSOLE_ROUTES,
    ...REFERRAL_CONSOLE_ROUTES,
    ...SUPPORT_CONSOLE_ROUTES,
  ]),
  // Operator pages' API under /api/operator/ (operator role and a second factor required), the admin API bridge last.
  ...OPERATOR_ROUTES,
  ...OPERATOR_MANAGEMENT_ROUTES,
  ...OVERVIEW_ROUTES,
  ...USAGE_EXPLORER_ROUTES,
  ...USER_ROUTES,
  // Single sign-on (src/console/sso): OpenID Connect sign-in, the account's and the operators' settings.
  ...SSO_ROUTES,
  ...ADMIN_BRIDGE_ROUTES,
  ...UNKNOWN_API_ROUTES,
];

/** Mounts the console's JSON API on the console listener's router. */
export function addConsoleApiRoutes(router: Router, deps: ConsoleDeps): void {
  mountConsoleRoutes(router, deps, CONSOLE_API_ROUTES);
}
