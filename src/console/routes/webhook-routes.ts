import { sendJson } from '../../http/respond.js';
import { WebhookManagement } from '../../webhooks/webhook-management.js';
import type { ConsoleDeps } from '../console-deps.js';
import { readConsoleBody, sendNoContent } from '../console-route.js';
import { consoleRoutes } from '../console-route-table.js';

/**
 * The account's webhook endpoints (docs/console-api.md, "Webhooks"), for its owners and admins only: other roles
 * are refused, and every id is looked up within the session's account (another account's endpoint answers 404).
 */
export const CONSOLE_WEBHOOK_ROUTES = consoleRoutes((deps: ConsoleDeps) => {
  const { storage, clock, config } = deps.services;
  const management = new WebhookManagement(storage.webhooks, clock, config.webhooks, deps.services.limiter);
  return { deps, storage, clock, config, management };
}, [
  { method: 'GET', path: '/api/console/webhooks', who: 'member', permission: 'webhooks:manage', handler: ({ management }) => async ({ context, active }) => {
    sendJson(context, 200, await management.list(active.session.accountId));
  } },
  { method: 'POST', path: '/api/console/webhooks', who: 'member', permission: 'webhooks:manage', handler: ({ management }) => async ({ context, active }) => {
    sendJson(context, 201, await management.create(active.session.accountId, await readConsoleBody(context)));
  } },
  { method: 'GET', path: '/api/console/webhooks/:id', who: 'member', permission: 'webhooks:manage', handler: ({ management }) => async ({ context, active }) => {
    sendJson(context, 200, await management.get(active.session.accountId, context.params.id ?? ''));
  } },
  { method: 'PATCH', path: '/api/console/webhooks/:id', who: 'member', permission: 'webhooks:manage', handler: ({ management }) => async ({ context, active }) => {
    sendJson(context, 200, await management.update(active.session.accountId, context.params.id ?? '', await readConsoleBody(context)));
  } },
  { method: 'DELETE', path: '/api/console/webhooks/:id', who: 'member', permission: 'webhooks:manage', handler: ({ management }) => async ({ context, active }) => {
    await management.delete(active.session.accountId, context.params.id ?? '');
    sendNoContent(context);
  } },
  { method: 'POST', path: '/api/console/webhooks/:id/rotate-secret', who: 'member', permission: 'webhooks:manage', handler: ({ management }) => async ({ context, active }) => {
    sendJson(context, 200, await management.rotate(active.session.accountId, context.params.id ?? ''));
  } },
  { method: 'POST', path: '/api/console/webhooks/:id/test', who: 'member', permission: 'webhooks:manage', handler: ({ management }) => async ({ context, active }) => {
    sendJson(context, 202, await management.sendTest(active.session.accountId, context.params.id ?? ''));
  } },
  { method: 'GET', path: '/api/console/webhooks/:id/deliveries', who: 'member', permission: 'webhooks:manage', handler: ({ management }) => async ({ context, active }) => {
    sendJson(context, 200, await management.deliveries(active.session.accountId, context.params.id ?? ''));
  } },
  { method: 'POST', path: '/api/console/webhooks/:id/deliveries/:delivery/resend', who: 'member', permission: 'webhooks:manage', handler: ({ management }) => async ({ context, active }) => {
    await management.resend(active.session.accountId, context.params.id ?? '', context.params.delivery ?? '');
    sendJson(context, 202, { object: 'webhook_delivery', id: context.params.delivery, state: 'pending' });
  } },
]);
