import { z } from 'zod';
import { GatewayError } from '../errors/gateway-error.js';
import type { Tier } from '../domain/records.js';
import type { TierPatch, TierRepository } from '../storage/storage.js';
import { isoTime } from './time-input.js';
import { limitInput } from './limit-input.js';

/** The same shape as an account's `tier`, which names one. */
export const tierName = z.string().min(1).max(50).regex(/^[a-z0-9_-]+$/, 'lowercase letters, digits, _ and - only');

/** A per-minute limit; null (or absent on create) means unlimited. */
const perMinute = limitInput;

export const createTierSchema = z.object({ name: tierName, rpm: perMinute, tpm: perMinute }).strict();
/** The name is the tier's identity (accounts refer to it), so it is not patchable. */
export const updateTierSchema = z.object({ rpm: perMinute, tpm: perMinute }).strict();

/**
 * An account may only name a tier that exists (an unknown name would silently get the `default` tier's limits):
 * 400 naming the tiers there are.
 */
export async function requireKnownTier(tiers: Pick<TierRepository, 'getByName' | 'listAll'>, name: string, param = 'tier'): Promise<void> {
  if (await tiers.getByName(name) !== null) return;
  const known = (await tiers.listAll()).map((tier) => tier.name).sort();
  throw new GatewayError('bad_request', `There is no tier named '${name}'. Tiers: ${known.join(', ')}. Create one with POST /admin/tiers first.`, { param });
}

export type CreateTierInput = z.infer<typeof createTierSchema>;
export type UpdateTierInput = z.infer<typeof updateTierSchema>;

export function tierFromInput(input: CreateTierInput, now: number): Tier {
  return { name: input.name, rpm: input.rpm ?? null, tpm: input.tpm ?? null, createdAt: now, updatedAt: now };
}

export function tierPatchFromInput(input: UpdateTierInput): TierPatch {
  const patch: TierPatch = {};
  if (input.rpm !== undefined) patch.rpm = input.rpm;
  if (input.tpm !== undefined) patch.tpm = input.tpm;
  return patch;
}

/** A declared tier (gateway.yaml) is complete: a limit it leaves out is unlimited. */
export function tierStateFromInput(input: CreateTierInput): TierPatch {
  return { rpm: input.rpm ?? null, tpm: input.tpm ?? null };
}

export function tierToJson(tier: Tier): Record<string, unknown> {
  return {
    object: 'tier',
    name: tier.name,
    rpm: tier.rpm,
    tpm: tier.tpm,
    created_at: isoTime(tier.createdAt),
    updated_at: isoTime(tier.updatedAt),
  };
}
