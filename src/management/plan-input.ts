import { z } from 'zod';
import type { AdminPlanJson } from '../contract/operator.js';
import { nanoToUsd } from '../billing/money.js';
import { newId } from '../shared/ids.js';
import type { Plan } from '../domain/records.js';
import type { PlanPatch } from '../storage/storage.js';
import { nonNegativeUsdInput } from './money-input.js';
import { isoTime } from './time-input.js';
import { limitInput } from './limit-input.js';

const overageSchema = z.object({
  policy: z.enum(['deny', 'limit', 'payg']),
  limit_usd: nonNegativeUsdInput.optional(),
}).strict().refine((overage) => overage.policy !== 'limit' || overage.limit_usd !== undefined, {
  message: "policy 'limit' needs 'limit_usd'",
  path: ['limit_usd'],
});

/** Nano-USD in one cent: a price is invoiced in cents, so it must be a whole number of them. */
const NANO_PER_CENT = 10_000_000n;

const priceInput = nonNegativeUsdInput.refine((nano) => nano % NANO_PER_CENT === 0n, 'must be a whole number of cents');

const planFields = {
  name: z.string().min(1).max(100),
  period: z.enum(['day', 'week', 'month']),
  quota_usd: nonNegativeUsdInput,
  overage: overageSchema,
  rpm: limitInput,
  tpm: limitInput,
  /** Accounts may choose the plan themselves in the console (paying `price_usd` per period from their balance). */
  self_service: z.boolean(),
  price_usd: priceInput,
};

export const createPlanSchema = z.object({ ...planFields, self_service: planFields.self_service.optional(), price_usd: priceInput.optional() }).strict();
export const updatePlanSchema = z.object(planFields).partial().strict();

export type CreatePlanInput = z.infer<typeof createPlanSchema>;
export type UpdatePlanInput = z.infer<typeof updatePlanSchema>;

export function planFromInput(input: CreatePlanInput, now: number): Plan {
  return {
    id: newId('plan', now),
    name: input.name,
    period: input.period,
    quotaNano: input.quota_usd,
    overagePolicy: input.overage.policy,
    overageLimitNano: input.overage.limit_usd ?? null,
    rpm: input.rpm ?? null,
    tpm: input.tpm ?? null,
    selfService: input.self_service ?? false,
    priceNano: input.price_usd ?? 0n,
    createdAt: now,
    updatedAt: now,
  };
}

export function planPatchFromInput(input: UpdatePlanInput): PlanPatch {
  const patch: PlanPatch = {};
  if (input.name !== undefined) patch.name = input.name;
  if (input.period !== undefined) patch.period = input.period;
  if (input.quota_usd !== undefined) patch.quotaNano = input.quota_usd;
  if (input.overage !== undefined) {
    patch.overagePolicy = input.overage.policy;
    patch.overageLimitNano = input.overage.limit_usd ?? null;
  }
  if (input.rpm !== undefined) patch.rpm = input.rpm;
  if (input.tpm !== undefined) patch.tpm = input.tpm;
  if (input.self_service !== undefined) patch.selfService = input.self_service;
  if (input.price_usd !== undefined) patch.priceNano = input.price_usd;
  return patch;
}

export function planToJson(plan: Plan): AdminPlanJson {
  return {
    id: plan.id,
    object: 'plan',
    name: plan.name,
    period: plan.period,
    quota_usd: nanoToUsd(plan.quotaNano),
    overage: { policy: plan.overagePolicy, limit_usd: plan.overageLimitNano === null ? null : nanoToUsd(plan.overageLimitNano) },
    rpm: plan.rpm,
    tpm: plan.tpm,
    self_service: plan.selfService,
    price_usd: nanoToUsd(plan.priceNano),
    created_at: isoTime(plan.createdAt),
    updated_at: isoTime(plan.updatedAt),
  };
}
