import type { AlertState } from '../storage/repositories/alert-repository.js';
import { webhookEvent, type WebhookEventDraft } from '../domain/webhook-events.js';
import { moneyFields } from '../webhooks/webhook-money.js';
import type { AlertMailContext } from './alert-mail.js';

/** The webhook event of an alert's crossing: one per crossing (its id comes from the subject and the crossing time). */
export function alertEvent(alert: AlertState, context: AlertMailContext, now: number): WebhookEventDraft {
  const fact = `${alert.kind}:${alert.subjectId}:${alert.periodStart}:${alert.crossedAt}`;
  const crossedAt = new Date(alert.crossedAt).toISOString();
  switch (alert.kind) {
    case 'balance':
      return webhookEvent('balance.threshold_crossed', fact, alert.accountId, {
        account_id: alert.accountId, crossed_at: crossedAt, ...moneyFields('funds_left', alert.valueNano), ...moneyFields('threshold', alert.thresholdNano),
      }, now);
    case 'key_quota':
      return webhookEvent('key.quota_threshold_crossed', fact, alert.accountId, {
        key_id: alert.subjectId, key_name: context.key?.name ?? null, key_hint: context.key?.hint ?? null, percent: alert.percent, crossed_at: crossedAt,
        ...moneyFields('spent', alert.valueNano), ...moneyFields('quota', alert.limitNano ?? 0n), ...moneyFields('threshold', alert.thresholdNano),
      }, now);
    case 'key_paused':
      return webhookEvent('key.paused', fact, alert.accountId, {
        key_id: alert.subjectId, key_name: context.key?.name ?? null, key_hint: context.key?.hint ?? null, reason: 'quota', paused_at: crossedAt,
        ...moneyFields('spent', alert.valueNano), ...moneyFields('quota', alert.limitNano ?? 0n),
      }, now);
    case 'subscription_quota':
      return webhookEvent('subscription.quota_threshold_crossed', fact, alert.accountId, {
        subscription_id: alert.subjectId, plan_name: context.subscription?.planName ?? null, percent: alert.percent, crossed_at: crossedAt,
        period_start: context.subscription === undefined ? null : new Date(context.subscription.periodStart).toISOString(),
        period_end: context.subscription === undefined ? null : new Date(context.subscription.periodEnd).toISOString(),
        ...moneyFields('used', alert.valueNano), ...moneyFields('quota', alert.limitNano ?? 0n), ...moneyFields('threshold', alert.thresholdNano),
      }, now);
    default: {
      const unknown: never = alert.kind;
      throw new TypeError(`unknown alert kind ${String(unknown)}`);
    }
  }
}
