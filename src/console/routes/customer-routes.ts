import { deleteRule, listRules, putRule, sendReport } from '../../customers/customer-api.js';
import type { Router } from '../../http/router.js';
import type { ConsoleDeps } from '../console-deps.js';
import { readConsoleBody, signedInRoute } from '../console-route.js';

/**
 * The session's account: its end-customer rules (read with usage:read, changed with keys:write, like key budgets)
 * and its reports by customer, tag and key per day (`/api/reports/:name`, `format=csv`).
 */
export function addCustomerRoutes(router: Router, deps: ConsoleDeps): void {
  const { services } = deps;
  router.add('GET', '/api/customer-rules', signedInRoute(deps, 'usage:read', ({ context, active }) => listRules(services, context, active.session.accountId)));
  router.add('PUT', '/api/customer-rules', signedInRoute(deps, 'keys:write', async ({ context, active }) => putRule(services, context, active.session.accountId, await readConsoleBody(context))));
  router.add('DELETE', '/api/customer-rules', signedInRoute(deps, 'keys:write', ({ context, active }) => deleteRule(services, context, active.session.accountId)));
  router.add('GET', '/api/reports/:name', signedInRoute(deps, 'usage:read', ({ context, active }) => (
    sendReport(services, context, context.params.name ?? '', active.session.accountId, context.query.get('format') === 'csv')
  )));
}
