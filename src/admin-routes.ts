import type { AdminRoute } from './http/admin/admin-route.js';
import { ACCOUNT_ROUTES } from './http/admin/account-routes.js';
import { ALERT_ROUTES } from './http/admin/alert-routes.js';
import { CATALOG_IMPORT_ROUTES } from './http/admin/catalog-import-routes.js';
import { CATALOG_ROUTES } from './http/admin/catalog-routes.js';
import { HEALTH_ROUTES } from './http/admin/health-routes.js';
import { MONEY_ROUTES } from './http/admin/money-routes.js';
import { OPERATIONS_ROUTES } from './http/admin/operations-routes.js';
import { REDEMPTION_ROUTES } from './http/admin/redemption-routes.js';
import { TIER_ROUTES } from './http/admin/tier-routes.js';
import { WEBHOOK_ADMIN_ROUTES } from './http/admin/webhook-routes.js';
import { PROJECT_ADMIN_ROUTES } from './http/admin/project-routes.js';
import { BATCH_ADMIN_ROUTES } from './http/admin/batch-routes.js';
import { MCP_ADMIN_ROUTES } from './http/admin/mcp-routes.js';
import { CUSTOMER_ADMIN_ROUTES } from './http/admin/customer-routes.js';
import { INVOICE_ADMIN_ROUTES } from './console-billing/admin-invoice-routes.js';
import { SUPPORT_ADMIN_ROUTES } from './console-billing/admin-support-routes.js';

/**
 * Every admin API route, declared once: one table per feature, one line here each. The API listener mounts them under
 * /admin/ behind the admin token, the console's operator bridge serves the same handlers to operators (the permission
 * each needs comes from its entry), and test/unit/docs/route-lists.test.ts holds docs/operators.md to this list.
 */
export const ADMIN_ROUTES: readonly AdminRoute[] = [
  ...CATALOG_ROUTES,
  ...CATALOG_IMPORT_ROUTES,
  ...ACCOUNT_ROUTES,
  ...OPERATIONS_ROUTES,
  ...TIER_ROUTES,
  ...CUSTOMER_ADMIN_ROUTES,
  ...MONEY_ROUTES,
  ...HEALTH_ROUTES,
  ...ALERT_ROUTES,
  ...REDEMPTION_ROUTES,
  ...SUPPORT_ADMIN_ROUTES,
  ...INVOICE_ADMIN_ROUTES,
  ...WEBHOOK_ADMIN_ROUTES,
  ...PROJECT_ADMIN_ROUTES,
  ...BATCH_ADMIN_ROUTES,
  ...MCP_ADMIN_ROUTES,
];
