import { GatewayError } from '../../errors/gateway-error.js';
import { pageJson, pageRequestFrom } from '../../management/pagination.js';
import { parseInput } from '../../management/parse-input.js';
import { createTierSchema, tierFromInput, tierPatchFromInput, tierToJson, updateTierSchema } from '../../management/tier-input.js';
import type { GatewayServices } from '../../services.js';
import { DEFAULT_TIER } from '../../domain/records.js';
import { sendJson } from '../respond.js';
import { isUniqueViolation, readAdminBody } from './admin-guard.js';
import { adminRoutes } from './admin-route.js';

function tierNotFound(name: string): GatewayError {
  return new GatewayError('not_found', `No tier named '${name}'.`);
}

/**
 * /admin/tiers: per-account RPM and TPM by tier. A change applies on this instance before the answer and on every
 * other instance within a second (Redis pub/sub, else their periodic re-read).
 */
export const TIER_ROUTES = adminRoutes((services: GatewayServices) => {
  const { storage, clock, tiers, invalidation } = services;
  const changed = async (name: string): Promise<void> => {
    await tiers.reload();
    await invalidation.publish({ kind: 'tier', name });
  };
  return { services, storage, clock, tiers, invalidation, changed };
}, [
  { method: 'POST', path: '/admin/tiers', handler: ({ storage, clock, changed }) => async (context) => {
    const tier = tierFromInput(parseInput(createTierSchema, await readAdminBody(context)), clock.now());
    try {
      await storage.tiers.create(tier);
    } catch (error) {
      if (isUniqueViolation(error)) throw new GatewayError('conflict', `A tier named '${tier.name}' already exists; PATCH it instead.`, { param: 'name' });
      throw error;
    }
    await changed(tier.name);
    sendJson(context, 201, tierToJson(tier));
  } },
  { method: 'GET', path: '/admin/tiers', handler: ({ storage }) => async (context) => {
    sendJson(context, 200, pageJson(await storage.tiers.list(pageRequestFrom(context.query)), tierToJson));
  } },
  { method: 'GET', path: '/admin/tiers/:name', handler: ({ storage }) => async (context) => {
    const name = context.params.name ?? '';
    const tier = await storage.tiers.getByName(name);
    if (tier === null) throw tierNotFound(name);
    sendJson(context, 200, tierToJson(tier));
  } },
  { method: 'PATCH', path: '/admin/tiers/:name', handler: ({ storage, clock, changed }) => async (context) => {
    const name = context.params.name ?? '';
    const patch = tierPatchFromInput(parseInput(updateTierSchema, await readAdminBody(context)));
    const updated = await storage.tiers.update(name, patch, clock.now());
    if (updated === null) throw tierNotFound(name);
    await changed(name);
    sendJson(context, 200, tierToJson(updated));
  } },
  { method: 'DELETE', path: '/admin/tiers/:name', handler: ({ storage, changed }) => async (context) => {
    const name = context.params.name ?? '';
    if (name === DEFAULT_TIER) throw new GatewayError('conflict', `The '${DEFAULT_TIER}' tier is built in and cannot be deleted; PATCH its limits instead.`);
    if (!(await storage.tiers.delete(name))) throw tierNotFound(name);
    await changed(name);
    sendJson(context, 200, { object: 'tier', name, deleted: true });
  } },
]);
