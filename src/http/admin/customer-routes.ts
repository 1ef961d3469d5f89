import { GatewayError } from '../../errors/gateway-error.js';
import { deleteRule, listRules, putRule, sendReport } from '../../customers/customer-api.js';
import type { GatewayServices } from '../../services.js';
import type { RequestContext } from '../request-context.js';
import type { Router } from '../router.js';
import { adminOnly, readAdminBody } from './admin-guard.js';

/**
 * The operator's end-customer rules of any account (/admin/accounts/:id/customer-rules) and the reports by customer,
 * tag and key per day of one account or all (/admin/reports/:name, `?account_id=`, `format=csv`).
 */
export function addCustomerRoutes(router: Router, services: GatewayServices): void {
  const guard = (handler: Parameters<typeof adminOnly>[1]) => adminOnly(services, handler);
  const account = async (context: RequestContext): Promise<string> => {
    const id = context.params.id ?? '';
    if ((await services.storage.accounts.getById(id)) === null) throw new GatewayError('not_found', `No account with id '${id}'.`);
    return id;
  };
  router.add('GET', '/admin/accounts/:id/customer-rules', guard(async (context) => listRules(services, context, await account(context))));
  router.add('PUT', '/admin/accounts/:id/customer-rules', guard(async (context) => putRule(services, context, await account(context), await readAdminBody(context))));
  router.add('DELETE', '/admin/accounts/:id/customer-rules', guard(async (context) => deleteRule(services, context, await account(context))));
  router.add('GET', '/admin/reports/:name', guard(async (context) => {
    const accountId = context.query.get('account_id');
    await sendReport(services, context, context.params.name ?? '', accountId === null || accountId === '' ? null : accountId, context.query.get('format') === 'csv');
  }));
}
