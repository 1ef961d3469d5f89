import { z } from 'zod';
import { isoTime } from './common.js';

export const planPeriod = z.enum(['day', 'week', 'month']);
export const overagePolicy = z.enum(['deny', 'limit', 'payg']);

/** A subscription read at the time of asking: a period that has ended shows the new one with nothing used. */
export const subscription = z.strictObject({
  id: z.string(),
  object: z.literal('subscription'),
  account_id: z.string(),
  plan_id: z.string(),
  plan_name: z.string().nullable(),
  status: z.enum(['active', 'cancelled']),
  starts_at: isoTime,
  current_period: z.strictObject({ start: isoTime, end: isoTime }).nullable(),
  cancel_at: isoTime.nullable(),
  /** Bought in the console: paid until this time, and whether the next period is bought from the balance then. */
  paid_through: isoTime.nullable(),
  renews: z.boolean(),
  price_usd: z.number().nullable(),
  quota_usd: z.number().nullable(),
  used_usd: z.number(),
  remaining_usd: z.number(),
  overage: z.strictObject({ policy: overagePolicy, limit_usd: z.number().nullable(), used_usd: z.number() }).nullable(),
  created_at: isoTime,
});
export type SubscriptionJson = z.infer<typeof subscription>;

/** A self-service plan the console offers; `current`: the one the account has bought. */
export const offeredPlan = z.strictObject({
  id: z.string(),
  object: z.literal('plan'),
  name: z.string(),
  period: planPeriod,
  price_usd: z.number(),
  quota_usd: z.number(),
  overage: z.strictObject({ policy: overagePolicy, limit_usd: z.number().nullable() }),
  rpm: z.number().nullable(),
  tpm: z.number().nullable(),
  current: z.boolean(),
});
export type OfferedPlanJson = z.infer<typeof offeredPlan>;

/** GET /api/console/plans. */
export const consolePlans = z.strictObject({ object: z.literal('list'), data: z.array(subscription), offered: z.array(offeredPlan), can_choose: z.boolean() });
export type ConsolePlansJson = z.infer<typeof consolePlans>;

/** POST /api/console/plans/:id/choose: paid from the balance. */
export const planChoice = z.strictObject({
  object: z.literal('plan_choice'),
  subscription,
  charged_usd: z.number(),
  invoice_id: z.string().nullable(),
  balance_usd: z.number(),
});
export type PlanChoiceJson = z.infer<typeof planChoice>;
