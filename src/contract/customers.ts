import { z } from 'zod';
import { isoTime } from './common.js';
import { budgetPeriod } from './keys.js';
import { budgetInput } from './projects.js';

/**
 * An end-customer rule: the default for every customer (`every_customer`, `customer` null) or one customer's
 * override. A customer's own budget shows its spend in the current period.
 */
export const customerRule = z.strictObject({
  object: z.literal('customer_rule'),
  customer: z.string().nullable(),
  every_customer: z.boolean(),
  budget: z.strictObject({
    period: budgetPeriod,
    limit_usd: z.number(),
    resets_at: isoTime,
    spent_usd: z.number().optional(),
    remaining_usd: z.number().optional(),
  }).nullable(),
  rpm: z.number().nullable(),
  tpm: z.number().nullable(),
  concurrency: z.number().nullable(),
  created_at: isoTime,
  updated_at: isoTime,
});
export type CustomerRuleJson = z.infer<typeof customerRule>;

/** PUT /api/customer-rules: one customer's rule (`customer` null: every customer's); null is no such limit. */
export const customerRuleInput = z.strictObject({
  customer: z.string().nullable(),
  budget: budgetInput.nullable(),
  rpm: z.number().nullable(),
  tpm: z.number().nullable(),
  concurrency: z.number().nullable(),
});
export type CustomerRuleInputJson = z.infer<typeof customerRuleInput>;

/** GET /api/customer-rules. */
export const customerRuleList = z.strictObject({ object: z.literal('list'), data: z.array(customerRule) });
export type CustomerRuleListJson = z.infer<typeof customerRuleList>;

/** DELETE /api/customer-rules. */
export const deletedCustomerRule = z.strictObject({ object: z.literal('customer_rule'), customer: z.string().nullable(), deleted: z.literal(true) });
export type DeletedCustomerRuleJson = z.infer<typeof deletedCustomerRule>;

/** A report's figures for one value: in one day (rows) or over the range (totals). */
const reportFigures = {
  requests: z.number(),
  errors: z.number(),
  input_tokens: z.number(),
  output_tokens: z.number(),
  cost_usd: z.number(),
};
/** The value a report row is about: the field is the report's (`customers`: customer, `tags`: tag, `keys`: key_id). */
const reportValue = { customer: z.string().optional(), tag: z.string().optional(), key_id: z.string().optional() };

export const usageReportTotal = z.strictObject({ ...reportValue, ...reportFigures });
export type UsageReportTotalJson = z.infer<typeof usageReportTotal>;
/** One value's figures on one UTC day; `account_id` in the admin API's reports across accounts. */
export const usageReportDay = z.strictObject({ date: z.string(), account_id: z.string().optional(), ...reportValue, ...reportFigures });
export type UsageReportDayJson = z.infer<typeof usageReportDay>;

/** GET /api/reports/:name (and the admin API's): rows per day and value, and each value's totals, dearest first. */
export const usageReport = z.strictObject({
  object: z.literal('usage_report'),
  dimension: z.enum(['customer', 'tag', 'key']),
  from: z.string(),
  to: z.string(),
  data: z.array(usageReportDay),
  totals: z.array(usageReportTotal),
});
export type UsageReportJson = z.infer<typeof usageReport>;
