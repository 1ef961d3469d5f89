import { z } from 'zod';
import { GatewayError } from '../../errors/gateway-error.js';
import { settingsToJson } from '../../http/admin/alert-routes.js';
import type { Router } from '../../http/router.js';
import { sendJson } from '../../http/respond.js';
import { nonNegativeUsdInput } from '../../management/money-input.js';
import { parseInput } from '../../management/parse-input.js';
import type { AlertSettings } from '../../storage/repositories/alert-repository.js';
import type { ConsoleDeps } from '../console-deps.js';
import { readConsoleBody, signedInRoute } from '../console-route.js';

const alertSettingsSchema = z.object({
  alert_balance_usd: nonNegativeUsdInput.nullable().optional(),
  alert_quota_percent: z.number().int().min(1).max(100).nullable().optional(),
}).strict();

/**
 * The account's alert thresholds as the owner sets them in the console: funds left in USD, and the percent of its
 * quota at which each key (and subscription) alerts. The same settings and checker as the admin API's; the mails go
 * to the account's email once per crossing.
 */
export function addConsoleAlertRoutes(router: Router, deps: ConsoleDeps): void {
  const { storage, clock, keys } = deps.services;

  router.add('GET', '/api/console/alerts', signedInRoute(deps, 'account:read', async ({ context, active }) => {
    const accountId = active.session.accountId;
    const settings = await storage.alerts.getSettings(accountId);
    if (settings === null) throw new GatewayError('not_found', 'The account no longer exists.');
    sendJson(context, 200, settingsToJson(accountId, settings, await storage.alerts.listByAccount(accountId)));
  }));

  router.add('PUT', '/api/console/alerts', signedInRoute(deps, 'alerts:write', async ({ context, active }) => {
    const accountId = active.session.accountId;
    const input = parseInput(alertSettingsSchema, await readConsoleBody(context));
    const patch: Partial<AlertSettings> = {};
    if (input.alert_balance_usd !== undefined) patch.balanceNano = input.alert_balance_usd;
    if (input.alert_quota_percent !== undefined) patch.quotaPercent = input.alert_quota_percent;
    const settings = await storage.alerts.setSettings(accountId, patch, clock.now());
    if (settings === null) throw new GatewayError('not_found', 'The account no longer exists.');
    // Cached key records carry the account's thresholds.
    await keys.invalidateAccount(accountId);
    sendJson(context, 200, settingsToJson(accountId, settings, await storage.alerts.listByAccount(accountId)));
  }));
}
