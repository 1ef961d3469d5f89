import { deleteRule, listRules, putRule, sendReport } from '../../http/admin/customer-api.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { ActiveSession } from '../session-store.js';
import type { ConsoleDeps } from '../console-deps.js';
import { readConsoleBody } from '../console-route.js';
import { consoleRoutes } from '../console-route-table.js';

/**
 * End-customer rules and reports are the whole account's (every project's customers, tags and keys): a member scoped
 * to projects reaches none of them.
 */
function requireWholeAccount(active: ActiveSession): string {
  if (active.projects !== null) throw new GatewayError('forbidden', 'Your project roles on this account do not allow this: end customers and reports are the whole account\'s.');
  return active.session.accountId;
}

/**
 * The session's account: its end-customer rules (read with usage:read, changed with keys:write, like key budgets)
 * and its reports by customer, tag and key per day (`/api/reports/:name`, `format=csv`).
 */
export const CUSTOMER_ROUTES = consoleRoutes((deps: ConsoleDeps) => deps.services, [
  { method: 'GET', path: '/api/customer-rules', who: 'member', permission: 'usage:read', handler: (services) => ({ context, active }) => listRules(services, context, requireWholeAccount(active)) },
  { method: 'PUT', path: '/api/customer-rules', who: 'member', permission: 'keys:write', handler: (services) => async ({ context, active }) => putRule(services, context, requireWholeAccount(active), await readConsoleBody(context)) },
  { method: 'DELETE', path: '/api/customer-rules', who: 'member', permission: 'keys:write', handler: (services) => ({ context, active }) => deleteRule(services, context, requireWholeAccount(active)) },
  { method: 'GET', path: '/api/reports/:name', who: 'member', permission: 'usage:read', handler: (services) => ({ context, active }) => (
    sendReport(services, context, context.params.name ?? '', requireWholeAccount(active), context.query.get('format') === 'csv')
  ) },
]);
