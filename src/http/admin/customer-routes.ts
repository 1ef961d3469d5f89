import { GatewayError } from '../../errors/gateway-error.js';
import { deleteRule, listRules, putFlatRule, putRule, sendReport } from './customer-api.js';
import type { GatewayServices } from '../../services.js';
import type { RequestContext } from '../request-context.js';
import { readAdminBody } from './admin-guard.js';
import { adminRoutes } from './admin-route.js';

/**
 * The operator's end-customer rules of any account (/admin/accounts/:id/customer-rules) and the reports by customer,
 * tag and key per day of one account or all (/admin/reports/:name, `?account_id=`, `format=csv`).
 */
export const CUSTOMER_ADMIN_ROUTES = adminRoutes((services: GatewayServices) => {
  const account = async (context: RequestContext): Promise<string> => {
    const id = context.params.id ?? '';
    if ((await services.storage.accounts.getById(id)) === null) throw new GatewayError('not_found', `No account with id '${id}'.`);
    return id;
  };
  return { services, account };
}, [
  { method: 'GET', path: '/admin/accounts/:id/customer-rules', handler: ({ services, account }) => async (context) => listRules(services, context, await account(context)) },
  { method: 'PUT', path: '/admin/accounts/:id/customer-rules', handler: ({ services, account }) => async (context) => putRule(services, context, await account(context), await readAdminBody(context)) },
  { method: 'PUT', path: '/admin/accounts/:id/customers/:customer', handler: ({ services, account }) => async (context) => putFlatRule(services, context, await account(context), context.params.customer ?? '', await readAdminBody(context)) },
  { method: 'DELETE', path: '/admin/accounts/:id/customer-rules', handler: ({ services, account }) => async (context) => deleteRule(services, context, await account(context)) },
  { method: 'GET', path: '/admin/reports/:name', handler: ({ services }) => async (context) => {
    const accountId = context.query.get('account_id');
    await sendReport(services, context, context.params.name ?? '', accountId === null || accountId === '' ? null : accountId, context.query.get('format') === 'csv');
  } },
]);
