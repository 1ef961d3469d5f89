import { deleteRule, listRules, putRule, sendReport } from '../../customers/customer-api.js';
import type { ConsoleDeps } from '../console-deps.js';
import { readConsoleBody } from '../console-route.js';
import { consoleRoutes } from '../console-route-table.js';

/**
 * The session's account: its end-customer rules (read with usage:read, changed with keys:write, like key budgets)
 * and its reports by customer, tag and key per day (`/api/reports/:name`, `format=csv`).
 */
export const CUSTOMER_ROUTES = consoleRoutes((deps: ConsoleDeps) => deps.services, [
  { method: 'GET', path: '/api/customer-rules', who: 'member', permission: 'usage:read', handler: (services) => ({ context, active }) => listRules(services, context, active.session.accountId) },
  { method: 'PUT', path: '/api/customer-rules', who: 'member', permission: 'keys:write', handler: (services) => async ({ context, active }) => putRule(services, context, active.session.accountId, await readConsoleBody(context)) },
  { method: 'DELETE', path: '/api/customer-rules', who: 'member', permission: 'keys:write', handler: (services) => ({ context, active }) => deleteRule(services, context, active.session.accountId) },
  { method: 'GET', path: '/api/reports/:name', who: 'member', permission: 'usage:read', handler: (services) => ({ context, active }) => (
    sendReport(services, context, context.params.name ?? '', active.session.accountId, context.query.get('format') === 'csv')
  ) },
]);
