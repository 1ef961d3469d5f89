import { z } from 'zod';
import type { TierJson } from '../contract/operator.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Tier } from '../domain/records.js';
import type { TierPatch, TierRepository } from '../storage/storage.js';
import { isoTime } from './time-input.js';
import { limitInput } from './limit-input.js';
import { nonNegativeUsdInput } from './money-input.js';
import { nanoToUsd } from '../billing/money.js';

/**
 * The tier's own sign-up credit (USD, 0 turns it off for the tier) and how many days it lasts before its unused part
 * is taken back; null or absent: the gateway's SIGNUP_CREDIT_USD and SIGNUP_CREDIT_DAYS.
 */
const signUpCreditFields = {
  signup_credit_usd: nonNegativeUsdInput.nullable().optional(),
  signup_credit_days: z.number().int().min(1).max(3650).nullable().optional(),
};

/** The same shape as an account's `tier`, which names one. */
export const tierName = z.string().min(1).max(50).regex(/^[a-z0-9_-]+$/, 'lowercase letters, digits, _ and - only');

/** A per-minute limit; null (or absent on create) means unlimited. */
const perMinute = limitInput;

export const createTierSchema = z.object({ name: tierName, rpm: perMinute, tpm: perMinute, ...signUpCreditFields }).strict();
/** The name is the tier's identity (accounts refer to it), so it is not patchable. */
export const updateTierSchema = z.object({ rpm: perMinute, tpm: perMinute, ...signUpCreditFields }).strict();

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
  return { name: input.name, rpm: input.rpm ?? null, tpm: input.tpm ?? null, signupCreditNano: input.signup_credit_usd ?? null, signupCreditDays: input.signup_credit_days ?? null, createdAt: now, updatedAt: now };
}

export function tierPatchFromInput(input: UpdateTierInput): TierPatch {
  const patch: TierPatch = {};
  if (input.rpm !== undefined) patch.rpm = input.rpm;
  if (input.tpm !== undefined) patch.tpm = input.tpm;
  if (input.signup_credit_usd !== undefined) patch.signupCreditNano = input.signup_credit_usd;
  if (input.signup_credit_days !== undefined) patch.signupCreditDays = input.signup_credit_days;
  return patch;
}

/** A declared tier (gateway.yaml) is complete: a limit it leaves out is unlimited. */
export function tierStateFromInput(input: CreateTierInput): TierPatch {
  return { rpm: input.rpm ?? null, tpm: input.tpm ?? null, signupCreditNano: input.signup_credit_usd ?? null, signupCreditDays: input.signup_credit_days ?? null };
}

export function tierToJson(tier: Tier): TierJson {
  return {
    object: 'tier',
    name: tier.name,
    rpm: tier.rpm,
    tpm: tier.tpm,
    signup_credit_usd: tier.signupCreditNano === null ? null : nanoToUsd(tier.signupCreditNano),
    signup_credit_days: tier.signupCreditDays,
    created_at: isoTime(tier.createdAt),
    updated_at: isoTime(tier.updatedAt),
  };
}
