import { GatewayError } from '../../errors/gateway-error.js';
import type { GatewayServices } from '../../services.js';
import { WebhookManagement } from '../../webhooks/webhook-management.js';
import { sendJson } from '../respond.js';
import { readAdminBody } from './admin-guard.js';
import { adminRoutes } from './admin-route.js';

/**
 * The operator's own webhook endpoints (deployment-wide events such as channel health), /admin/webhooks: the same
 * operations as an account's in the console; the operator console reaches them through its admin bridge.
 */
export const WEBHOOK_ADMIN_ROUTES = adminRoutes((services: GatewayServices) => {
  const management = new WebhookManagement(services.storage.webhooks, services.clock, services.config.webhooks, services.limiter);
  const operator = null;
  return { services, management, operator };
}, [
  { method: 'GET', path: '/admin/webhooks', handler: ({ management, operator }) => async (context) => sendJson(context, 200, await management.list(operator)) },
  // With `account_id`, the endpoint is the account's (its events; the account manages it in the console afterwards).
  { method: 'POST', path: '/admin/webhooks', handler: ({ services, management, operator }) => async (context) => {
    const body = await readAdminBody(context);
    if (body === null || typeof body !== 'object' || Array.isArray(body) || !('account_id' in body)) {
      sendJson(context, 201, await management.create(operator, body));
      return;
    }
    const { account_id: accountId, ...rest } = body as Record<string, unknown>;
    if (typeof accountId !== 'string' || (await services.storage.accounts.getById(accountId)) === null) {
      throw new GatewayError('not_found', `No account with id '${String(accountId)}'.`, { param: 'account_id' });
    }
    sendJson(context, 201, await management.create(accountId, rest));
  } },
  { method: 'GET', path: '/admin/webhooks/:id', handler: ({ management, operator }) => async (context) => sendJson(context, 200, await management.get(operator, context.params.id ?? '')) },
  { method: 'PATCH', path: '/admin/webhooks/:id', handler: ({ management, operator }) => async (context) => {
    sendJson(context, 200, await management.update(operator, context.params.id ?? '', await readAdminBody(context)));
  } },
  { method: 'DELETE', path: '/admin/webhooks/:id', handler: ({ management, operator }) => async (context) => {
    await management.delete(operator, context.params.id ?? '');
    sendJson(context, 200, { object: 'webhook_endpoint', id: context.params.id, deleted: true });
  } },
  { method: 'POST', path: '/admin/webhooks/:id/rotate-secret', handler: ({ management, operator }) => async (context) => sendJson(context, 200, await management.rotate(operator, context.params.id ?? '')) },
  { method: 'POST', path: '/admin/webhooks/:id/test', handler: ({ management, operator }) => async (context) => sendJson(context, 202, await management.sendTest(operator, context.params.id ?? '')) },
  { method: 'GET', path: '/admin/webhooks/:id/deliveries', handler: ({ management, operator }) => async (context) => sendJson(context, 200, await management.deliveries(operator, context.params.id ?? '')) },
  { method: 'POST', path: '/admin/webhooks/:id/deliveries/:delivery/resend', handler: ({ management, operator }) => async (context) => {
    await management.resend(operator, context.params.id ?? '', context.params.delivery ?? '');
    sendJson(context, 202, { object: 'webhook_delivery', id: context.params.delivery, state: 'pending' });
  } },
]);
