import type { AlertState } from '../storage/repositories/alert-repository.js';
import { webhookEvent, type WebhookEventDraft } from '../domain/webhook-events.js';
import { moneyFields } from '../webhooks/webhook-money.js';
import { budgetPeriodAt } from '../domain/budget-period.js';
import type { AlertMailContext } from './alert-mail.js';
import { customerOfSubject } from '../domain/customer-records.js';

/**
 * The webhook event of an alert's crossing: one per crossing (its id comes from the subject and the crossing time);
 * a key paused by its budget is one event per budget period (its id comes from the key and the period's start), so a
 * retried delivery or a second instance claiming the same pause records it once. A project's or end customer's budget
 * threshold is one event per period and threshold (its id comes from the subject, the period's start and the
 * threshold), however often the alert re-arms within the period.
 */
export function alertEvent(alert: AlertState, context: AlertMailContext, now: number): WebhookEventDraft {
  const fact = alert.kind === 'key_budget_paused'
    ? `${alert.kind}:${alert.subjectId}:${alert.periodStart}`
    : alert.kind === 'project_budget' || alert.kind === 'customer_budget'
      ? `${alert.kind}:${alert.subjectId}:${alert.periodStart}:${alert.thresholdNano}`
      : `${alert.kind}:${alert.subjectId}:${alert.periodStart}:${alert.crossedAt}`;
  const crossedAt = new Date(alert.crossedAt).toISOString();
  switch (alert.kind) {
    case 'balance':
      return webhookEvent('account.balance_low', fact, alert.accountId, {
        account_id: alert.accountId, crossed_at: crossedAt, ...moneyFields('funds_left', alert.valueNano), ...moneyFields('threshold', alert.thresholdNano),
      }, now);
    case 'key_quota':
      return webhookEvent('key.quota_threshold_crossed', fact, alert.accountId, {
        key_id: alert.subjectId, key_name: context.key?.name ?? null, key_hint: context.key?.hint ?? null, percent: alert.percent, crossed_at: crossedAt,
        ...moneyFields('spent', alert.valueNano), ...moneyFields('quota', alert.limitNano ?? 0n), ...moneyFields('threshold', alert.thresholdNano),
      }, now);
    case 'key_paused':
      return webhookEvent('key.paused', fact, alert.accountId, {
        key_id: alert.subjectId, key_name: context.key?.name ?? null, key_hint: context.key?.hint ?? null, reason: 'quota_cap', paused_at: crossedAt,
        ...moneyFields('spent', alert.valueNano), ...moneyFields('quota', alert.limitNano ?? 0n),
      }, now);
    case 'key_budget_paused': {
      const period = context.key?.budgetPeriod ?? null;
      return webhookEvent('key.paused', fact, alert.accountId, {
        key_id: alert.subjectId, key_name: context.key?.name ?? null, key_hint: context.key?.hint ?? null, reason: 'budget', paused_at: crossedAt,
        budget_period: period,
        period_start: new Date(alert.periodStart).toISOString(),
        resets_at: period === null ? null : new Date(budgetPeriodAt(period, alert.periodStart).end).toISOString(),
        ...moneyFields('spent', alert.valueNano), ...moneyFields('budget', alert.limitNano ?? 0n),
      }, now);
    }
    case 'subscription_quota':
      return webhookEvent('subscription.quota_threshold_crossed', fact, alert.accountId, {
        subscription_id: alert.subjectId, plan_name: context.subscription?.planName ?? null, percent: alert.percent, crossed_at: crossedAt,
        period_start: context.subscription === undefined ? null : new Date(context.subscription.periodStart).toISOString(),
        period_end: context.subscription === undefined ? null : new Date(context.subscription.periodEnd).toISOString(),
        ...moneyFields('used', alert.valueNano), ...moneyFields('quota', alert.limitNano ?? 0n), ...moneyFields('threshold', alert.thresholdNano),
      }, now);
    case 'project_budget':
    case 'customer_budget': {
      const period = context.budgetPeriod ?? null;
      const budget = {
        budget_period: period,
        period_start: new Date(alert.periodStart).toISOString(),
        resets_at: period === null ? null : new Date(budgetPeriodAt(period, alert.periodStart).end).toISOString(),
        percent: alert.percent,
        crossed_at: crossedAt,
        ...moneyFields('spent', alert.valueNano), ...moneyFields('budget', alert.limitNano ?? 0n), ...moneyFields('threshold', alert.thresholdNano),
      };
      return alert.kind === 'project_budget'
        ? webhookEvent('project.budget_threshold_crossed', fact, alert.accountId, { account_id: alert.accountId, project_id: alert.subjectId, project_name: context.project?.name ?? null, ...budget }, now)
        : webhookEvent('customer.budget_threshold_crossed', fact, alert.accountId, { account_id: alert.accountId, customer: context.customer ?? customerOfSubject(alert.subjectId).customer, ...budget }, now);
    }
    default: {
      const unknown: never = alert.kind;
      throw new TypeError(`unknown alert kind ${String(unknown)}`);
    }
  }
}
