import { z } from 'zod';
import { GatewayError } from '../errors/gateway-error.js';
import { readJsonObject } from '../http/read-body.js';
import { sendJson } from '../http/respond.js';
import { pageJson, pageRequestFrom } from '../management/pagination.js';
import { parseInput } from '../management/parse-input.js';
import { SUPPORT_CATEGORIES } from '../support/support-desk.js';
import type { BillingRouteDeps, ConsoleActor } from './console-actor.js';
import { countSupportRequest } from '../console/mail-limits.js';
import { ticketJson } from './json.js';
import { consoleRoutes } from '../console/console-route-table.js';
import type { SupportTicketPageJson } from '../contract/billing.js';

const ticketSchema = z.object({
  subject: z.string().trim().min(1).max(200),
  category: z.enum(SUPPORT_CATEGORIES),
  message: z.string().trim().min(1).max(20_000),
  // A request id as the gateway issues them (the x-request-id of an answer, the usage log's request_id).
  request_id: z.string().trim().regex(/^[A-Za-z0-9_.:-]{1,200}$/, 'must be a request id from the usage log').nullable().optional(),
}).strict();

/** Owners and admins see every ticket of the account; other members see their own. */
function seesAll(actor: ConsoleActor): boolean {
  return actor.role === 'owner' || actor.role === 'admin';
}

/**
 * The support form and the user's tickets with the operator's replies. Every member may write to support once the
 * account's email is confirmed, a few requests an hour.
 */
export const SUPPORT_CONSOLE_ROUTES = consoleRoutes(({ services, authenticate }: BillingRouteDeps) => {
  const { storage } = services;
  const desk = services.commerce.support;
  return { services, authenticate, storage, desk };
}, [
  { method: 'POST', path: '/api/console/support/tickets', who: 'caller', handler: ({ services, authenticate, desk }) => async (context) => {
    const actor = await authenticate(context);
    const input = parseInput(ticketSchema, await readJsonObject(context, 64 * 1024));
    await actor.requireProvenMailbox();
    await countSupportRequest(services, actor.userId, context.clientIp);
    const ticket = await desk.open({
      accountId: actor.accountId,
      userId: actor.userId,
      email: actor.email,
      subject: input.subject,
      category: input.category,
      message: input.message,
      requestId: input.request_id ?? null,
    });
    sendJson(context, 201, ticketJson(ticket));
  } },

  { method: 'GET', path: '/api/console/support/tickets', who: 'caller', handler: ({ authenticate, storage }) => async (context) => {
    const actor = await authenticate(context);
    const page = await storage.support.listByAccount(actor.accountId, seesAll(actor) ? null : actor.userId, pageRequestFrom(context.query));
    sendJson(context, 200, pageJson(page, ticketJson) satisfies SupportTicketPageJson);
  } },

  { method: 'GET', path: '/api/console/support/tickets/:id', who: 'caller', handler: ({ authenticate, storage }) => async (context) => {
    const actor = await authenticate(context);
    const ticket = await storage.support.get(context.params.id ?? '');
    if (ticket === null || ticket.accountId !== actor.accountId || (!seesAll(actor) && ticket.userId !== actor.userId)) {
      throw new GatewayError('not_found', 'No such support ticket.');
    }
    sendJson(context, 200, ticketJson(ticket));
  } },
]);
