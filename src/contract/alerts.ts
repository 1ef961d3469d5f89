import { z } from 'zod';
import { isoTime } from './common.js';

export const alertKind = z.enum(['balance', 'key_quota', 'subscription_quota', 'key_paused', 'key_budget_paused', 'project_budget', 'customer_budget']);

/** One alert that has fired (or is armed again): what crossed which threshold, and whether it was told. */
export const alertState = z.strictObject({
  kind: alertKind,
  subject_id: z.string(),
  state: z.enum(['armed', 'pending', 'notified']),
  value_usd: z.number(),
  threshold_usd: z.number(),
  /** The quota (quota kinds only). */
  quota_usd: z.number().nullable(),
  percent: z.number().nullable(),
  period_start: isoTime.nullable(),
  crossed_at: isoTime,
  notified_at: isoTime.nullable(),
  attempts: z.number(),
  next_attempt_at: isoTime.nullable(),
  last_error: z.string().nullable(),
});
export type AlertStateJson = z.infer<typeof alertState>;

/** GET/PUT /admin/accounts/:id/alerts: the account's thresholds and its alerts. */
export const accountAlerts = z.strictObject({
  object: z.literal('account_alerts'),
  account_id: z.string(),
  alert_balance_usd: z.number().nullable(),
  alert_quota_percent: z.number().nullable(),
  alerts: z.array(alertState),
});
export type AccountAlertsJson = z.infer<typeof accountAlerts>;

/** A key with a quota cap and its alert threshold: its own, or the account's (`effective_percent`). */
export const keyAlertThreshold = z.strictObject({
  key_id: z.string(),
  name: z.string(),
  hint: z.string(),
  quota_usd: z.number(),
  alert_quota_percent: z.number().nullable(),
  effective_percent: z.number().nullable(),
});
export type KeyAlertThresholdJson = z.infer<typeof keyAlertThreshold>;

/** GET/PUT /api/console/alerts and PUT …/keys/:id; `alert_mail` false: alerts go only to webhook and Slack endpoints. */
export const consoleAlerts = accountAlerts.extend({ alert_mail: z.boolean(), keys: z.array(keyAlertThreshold) });
export type ConsoleAlertsJson = z.infer<typeof consoleAlerts>;
