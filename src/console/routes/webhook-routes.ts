import type { Router } from '../../http/router.js';
import { sendJson } from '../../http/respond.js';
import { WebhookManagement } from '../../webhooks/webhook-management.js';
import type { ConsoleDeps } from '../console-deps.js';
import { readConsoleBody, sendNoContent, signedInRoute } from '../console-route.js';

/**
 * The account's webhook endpoints (docs/console-api.md, "Webhooks"), for its owners and admins only: other roles
 * are refused, and every id is looked up within the session's account (another account's endpoint answers 404).
 */
export function addConsoleWebhookRoutes(router: Router, deps: ConsoleDeps): void {
  const { storage, clock, config } = deps.services;
  const management = new WebhookManagement(storage.webhooks, clock, config.webhooks, deps.services.limiter);
  const route = (handler: Parameters<typeof signedInRoute>[2]) => signedInRoute(deps, 'webhooks:manage', handler);

  router.add('GET', '/api/console/webhooks', route(async ({ context, active }) => {
    sendJson(context, 200, await management.list(active.session.accountId));
  }));
  router.add('POST', '/api/console/webhooks', route(async ({ context, active }) => {
    sendJson(context, 201, await management.create(active.session.accountId, await readConsoleBody(context)));
  }));
  router.add('GET', '/api/console/webhooks/:id', route(async ({ context, active }) => {
    sendJson(context, 200, await management.get(active.session.accountId, context.params.id ?? ''));
  }));
  router.add('PATCH', '/api/console/webhooks/:id', route(async ({ context, active }) => {
    sendJson(context, 200, await management.update(active.session.accountId, context.params.id ?? '', await readConsoleBody(context)));
  }));
  router.add('DELETE', '/api/console/webhooks/:id', route(async ({ context, active }) => {
    await management.delete(active.session.accountId, context.params.id ?? '');
    sendNoContent(context);
  }));
  router.add('POST', '/api/console/webhooks/:id/rotate-secret', route(async ({ context, active }) => {
    sendJson(context, 200, await management.rotate(active.session.accountId, context.params.id ?? ''));
  }));
  router.add('POST', '/api/console/webhooks/:id/test', route(async ({ context, active }) => {
    sendJson(context, 202, await management.sendTest(active.session.accountId, context.params.id ?? ''));
  }));
  router.add('GET', '/api/console/webhooks/:id/deliveries', route(async ({ context, active }) => {
    sendJson(context, 200, await management.deliveries(active.session.accountId, context.params.id ?? ''));
  }));
  router.add('POST', '/api/console/webhooks/:id/deliveries/:delivery/resend', route(async ({ context, active }) => {
    await management.resend(active.session.accountId, context.params.id ?? '', context.params.delivery ?? '');
    sendJson(context, 202, { object: 'webhook_delivery', id: context.params.delivery, state: 'pending' });
  }));
}
