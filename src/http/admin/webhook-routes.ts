import type { GatewayServices } from '../../services.js';
import { WebhookManagement } from '../../webhooks/webhook-management.js';
import type { Router } from '../router.js';
import { sendJson } from '../respond.js';
import { adminOnly, readAdminBody } from './admin-guard.js';

/**
 * The operator's own webhook endpoints (deployment-wide events such as channel health), /admin/webhooks: the same
 * operations as an account's in the console; the operator console reaches them through its admin bridge.
 */
export function addWebhookAdminRoutes(router: Router, services: GatewayServices): void {
  const management = new WebhookManagement(services.storage.webhooks, services.clock, services.config.webhooks, services.limiter);
  const guard = (handler: Parameters<typeof adminOnly>[1]) => adminOnly(services, handler);
  const operator = null;

  router.add('GET', '/admin/webhooks', guard(async (context) => sendJson(context, 200, await management.list(operator))));
  router.add('POST', '/admin/webhooks', guard(async (context) => sendJson(context, 201, await management.create(operator, await readAdminBody(context)))));
  router.add('GET', '/admin/webhooks/:id', guard(async (context) => sendJson(context, 200, await management.get(operator, context.params.id ?? ''))));
  router.add('PATCH', '/admin/webhooks/:id', guard(async (context) => {
    sendJson(context, 200, await management.update(operator, context.params.id ?? '', await readAdminBody(context)));
  }));
  router.add('DELETE', '/admin/webhooks/:id', guard(async (context) => {
    await management.delete(operator, context.params.id ?? '');
    sendJson(context, 200, { object: 'webhook_endpoint', id: context.params.id, deleted: true });
  }));
  router.add('POST', '/admin/webhooks/:id/rotate-secret', guard(async (context) => sendJson(context, 200, await management.rotate(operator, context.params.id ?? ''))));
  router.add('POST', '/admin/webhooks/:id/test', guard(async (context) => sendJson(context, 202, await management.sendTest(operator, context.params.id ?? ''))));
  router.add('GET', '/admin/webhooks/:id/deliveries', guard(async (context) => sendJson(context, 200, await management.deliveries(operator, context.params.id ?? ''))));
  router.add('POST', '/admin/webhooks/:id/deliveries/:delivery/resend', guard(async (context) => {
    await management.resend(operator, context.params.id ?? '', context.params.delivery ?? '');
    sendJson(context, 202, { object: 'webhook_delivery', id: context.params.delivery, state: 'pending' });
  }));
}
