import { z } from 'zod';
import { readAdminBody } from '../http/admin/admin-guard.js';
import { sendJson } from '../http/respond.js';
import { GatewayError } from '../errors/gateway-error.js';
import { pageJson, pageRequestFrom } from '../management/pagination.js';
import { parseInput } from '../management/parse-input.js';
import type { GatewayServices } from '../services.js';
import { ticketJson } from './json.js';
import { adminRoutes } from '../http/admin/admin-route.js';

const STATUSES = ['open', 'answered', 'closed'] as const;
const replySchema = z.object({ body: z.string().trim().min(1).max(20_000), status: z.enum(STATUSES).optional() }).strict();

/** The operator's support queue on the admin API: every ticket, and replies that reach the user by mail and console. */
export const SUPPORT_ADMIN_ROUTES = adminRoutes((services: GatewayServices) => {
  const { storage } = services;
  return { services, storage };
}, [
  { method: 'GET', path: '/admin/support/tickets', handler: ({ storage }) => async (context) => {
    const status = context.query.get('status');
    if (status !== null && !STATUSES.some((known) => known === status)) throw new GatewayError('bad_request', `'status' must be one of ${STATUSES.join(', ')}.`, { param: 'status' });
    const page = await storage.support.list(status as (typeof STATUSES)[number] | null, pageRequestFrom(context.query));
    sendJson(context, 200, pageJson(page, ticketJson));
  } },
  { method: 'GET', path: '/admin/support/tickets/:id', handler: ({ storage }) => async (context) => {
    const ticket = await storage.support.get(context.params.id ?? '');
    if (ticket === null) throw new GatewayError('not_found', `No support ticket with id '${context.params.id ?? ''}'.`);
    sendJson(context, 200, ticketJson(ticket));
  } },
  { method: 'POST', path: '/admin/support/tickets/:id/replies', permission: 'support:reply', handler: ({ services }) => async (context) => {
    const input = parseInput(replySchema, await readAdminBody(context));
    const ticket = await services.commerce.support.reply(context.params.id ?? '', input.body, input.status ?? 'answered');
    sendJson(context, 201, ticketJson(ticket));
  } },
]);
