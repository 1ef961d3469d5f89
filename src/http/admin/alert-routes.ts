import { z } from 'zod';
import { nanoToUsd } from '../../billing/money.js';
import type { AccountAlertsJson, AlertStateJson } from '../../contract/alerts.js';
import { nonNegativeUsdInput } from '../../management/money-input.js';
import { parseInput } from '../../management/parse-input.js';
import { isoTime } from '../../management/time-input.js';
import type { GatewayServices } from '../../services.js';
import type { AlertSettings, AlertState } from '../../storage/repositories/alert-repository.js';
import { sendJson } from '../respond.js';
import { notFound, readAdminBody } from './admin-guard.js';
import { adminRoutes } from './admin-route.js';

const alertSettingsSchema = z.object({
  alert_balance_usd: nonNegativeUsdInput.nullable().optional(),
  alert_quota_percent: z.number().int().min(1).max(100).nullable().optional(),
}).strict();

function alertToJson(alert: AlertState): AlertStateJson {
  return {
    kind: alert.kind,
    subject_id: alert.subjectId,
    state: alert.state,
    value_usd: nanoToUsd(alert.valueNano),
    threshold_usd: nanoToUsd(alert.thresholdNano),
    quota_usd: alert.limitNano === null ? null : nanoToUsd(alert.limitNano),
    percent: alert.percent,
    period_start: alert.kind === 'subscription_quota' || alert.kind === 'project_budget' || alert.kind === 'customer_budget' ? isoTime(alert.periodStart) : null,
    crossed_at: isoTime(alert.crossedAt),
    notified_at: isoTime(alert.notifiedAt),
    attempts: alert.attempts,
    next_attempt_at: alert.state === 'pending' ? isoTime(alert.nextAttemptAt) : null,
    last_error: alert.lastError,
  };
}

export function settingsToJson(accountId: string, settings: AlertSettings, alerts: AlertState[]): AccountAlertsJson {
  return {
    object: 'account_alerts',
    account_id: accountId,
    alert_balance_usd: settings.balanceNano === null ? null : nanoToUsd(settings.balanceNano),
    alert_quota_percent: settings.quotaPercent,
    alerts: alerts.map(alertToJson),
  };
}

/**
 * GET/PUT /admin/accounts/:id/alerts: the account's alert thresholds (funds left in USD, quota use in percent) and
 * the state of every alert that has fired. `alert_balance_usd` is the same field PATCH
 * /admin/accounts/:id sets.
 */
export const ALERT_ROUTES = adminRoutes((services: GatewayServices) => {
  const { storage, clock } = services;
  return { services, storage, clock };
}, [
  { method: 'GET', path: '/admin/accounts/:id/alerts', handler: ({ storage }) => async (context) => {
    const id = context.params.id ?? '';
    const settings = await storage.alerts.getSettings(id);
    if (settings === null) throw notFound('account', id);
    sendJson(context, 200, settingsToJson(id, settings, await storage.alerts.listByAccount(id)));
  } },

  { method: 'PUT', path: '/admin/accounts/:id/alerts', handler: ({ services, storage, clock }) => async (context) => {
    const id = context.params.id ?? '';
    const input = parseInput(alertSettingsSchema, await readAdminBody(context));
    const patch: Partial<AlertSettings> = {};
    if (input.alert_balance_usd !== undefined) patch.balanceNano = input.alert_balance_usd;
    if (input.alert_quota_percent !== undefined) patch.quotaPercent = input.alert_quota_percent;
    const settings = await storage.alerts.setSettings(id, patch, clock.now());
    if (settings === null) throw notFound('account', id);
    await services.keys.invalidateAccount(id);
    sendJson(context, 200, settingsToJson(id, settings, await storage.alerts.listByAccount(id)));
  } },
]);
