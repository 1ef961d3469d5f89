import { z } from 'zod';
import { GatewayError } from '../../errors/gateway-error.js';
import { pageJson, pageRequestFrom } from '../../management/pagination.js';
import { parseInput } from '../../management/parse-input.js';
import { createPlanSchema, planFromInput, planPatchFromInput, planToJson, updatePlanSchema } from '../../management/plan-input.js';
import { announcementJson } from '../../management/announcement-json.js';
import { isoTime, timeInput } from '../../management/time-input.js';
import type { GatewayServices } from '../../services.js';
import { newId } from '../../shared/ids.js';
import type { Announcement } from '../../domain/records.js';
import { InvalidCursorError } from '../../storage/usage-cursor.js';
import { usageQueryFrom, usageRowToJson } from '../../management/usage-input.js';
import { sendJson } from '../respond.js';
import { isUniqueViolation, notFound, readAdminBody } from './admin-guard.js';
import { adminRoutes } from './admin-route.js';

const announcementSchema = z.object({
  title: z.string().min(1).max(200),
  body: z.string().max(10_000).default(''),
  level: z.enum(['info', 'warning', 'critical']).default('info'),
  published_at: timeInput.optional(),
  expires_at: timeInput.nullable().optional(),
}).strict();

const rate = z.union([z.number().positive(), z.string().regex(/^\d+(\.\d+)?$/)]).transform((value) => String(value));
const fxSchema = z.object({
  rates: z.object({ JPY: rate, CNY: rate, EUR: rate }).catchall(rate),
  as_of: timeInput.optional(),
  source: z.string().max(200).optional(),
}).strict();

/** The admin API's /admin/plans, /admin/usage, /admin/announcements and /admin/fx, guarded by the admin token. */
export const OPERATIONS_ROUTES = adminRoutes((services: GatewayServices) => {
  const { storage, clock } = services;
  return { services, storage, clock };
}, [
  { method: 'POST', path: '/admin/plans', handler: ({ storage, clock }) => async (context) => {
    const plan = planFromInput(parseInput(createPlanSchema, await readAdminBody(context)), clock.now());
    try {
      await storage.plans.create(plan);
    } catch (error) {
      if (isUniqueViolation(error)) throw new GatewayError('conflict', `A plan named '${plan.name}' already exists.`, { param: 'name' });
      throw error;
    }
    sendJson(context, 201, planToJson(plan));
  } },
  { method: 'GET', path: '/admin/plans', handler: ({ storage }) => async (context) => {
    sendJson(context, 200, pageJson(await storage.plans.list(pageRequestFrom(context.query)), planToJson));
  } },
  { method: 'GET', path: '/admin/plans/:id', handler: ({ storage }) => async (context) => {
    const id = context.params.id ?? '';
    const plan = await storage.plans.getById(id);
    if (plan === null) throw notFound('plan', id);
    sendJson(context, 200, planToJson(plan));
  } },
  { method: 'PATCH', path: '/admin/plans/:id', handler: ({ storage, clock }) => async (context) => {
    const id = context.params.id ?? '';
    const patch = planPatchFromInput(parseInput(updatePlanSchema, await readAdminBody(context)));
    let updated;
    try {
      updated = await storage.plans.update(id, patch, clock.now());
    } catch (error) {
      if (isUniqueViolation(error)) throw new GatewayError('conflict', 'Another plan already has that name.', { param: 'name' });
      throw error;
    }
    if (updated === null) throw notFound('plan', id);
    sendJson(context, 200, planToJson(updated));
  } },

  { method: 'GET', path: '/admin/usage', handler: ({ services, storage }) => async (context) => {
    await services.usageLog.flush();
    try {
      const page = await storage.usage.query(usageQueryFrom(context.query), pageRequestFrom(context.query));
      sendJson(context, 200, pageJson(page, usageRowToJson));
    } catch (error) {
      if (error instanceof InvalidCursorError) throw new GatewayError('bad_request', "'cursor' is not a cursor this endpoint returned.", { param: 'cursor' });
      throw error;
    }
  } },

  { method: 'POST', path: '/admin/announcements', handler: ({ storage, clock }) => async (context) => {
    const input = parseInput(announcementSchema, await readAdminBody(context));
    const now = clock.now();
    const announcement: Announcement = {
      id: newId('ann', now),
      title: input.title,
      body: input.body,
      level: input.level,
      publishedAt: input.published_at ?? now,
      expiresAt: input.expires_at ?? null,
      createdAt: now,
    };
    await storage.announcements.create(announcement);
    sendJson(context, 201, { object: 'announcement', ...announcementJson(announcement) });
  } },
  { method: 'GET', path: '/admin/announcements', handler: ({ storage }) => async (context) => {
    const page = await storage.announcements.list(pageRequestFrom(context.query));
    sendJson(context, 200, pageJson(page, announcementJson));
  } },
  { method: 'DELETE', path: '/admin/announcements/:id', handler: ({ storage }) => async (context) => {
    const id = context.params.id ?? '';
    if (!(await storage.announcements.delete(id))) throw notFound('announcement', id);
    sendJson(context, 200, { id, object: 'announcement', deleted: true });
  } },

  { method: 'PUT', path: '/admin/fx', handler: ({ storage, clock }) => async (context) => {
    const input = parseInput(fxSchema, await readAdminBody(context));
    const now = clock.now();
    await storage.fx.set({ base: 'USD', rates: input.rates, asOf: input.as_of ?? now, source: input.source ?? 'admin', updatedAt: now });
    sendJson(context, 200, { base: 'USD', rates: Object.fromEntries(Object.entries(input.rates).map(([code, value]) => [code, Number(value)])), as_of: isoTime(input.as_of ?? now), source: input.source ?? 'admin' });
  } },
]);
