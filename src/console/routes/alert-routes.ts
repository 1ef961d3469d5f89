import { z } from 'zod';
import type { ConsoleAlertsJson, KeyAlertThresholdJson } from '../../contract/alerts.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { settingsToJson } from '../../http/admin/alert-routes.js';
import { sendJson } from '../../http/respond.js';
import { nonNegativeUsdInput } from '../../management/money-input.js';
import { parseInput } from '../../management/parse-input.js';
import { nanoToUsd } from '../../billing/money.js';
import type { AlertSettings } from '../../storage/repositories/alert-repository.js';
import type { ConsoleDeps } from '../console-deps.js';
import { readConsoleBody } from '../console-route.js';
import { roleAllows } from '../roles.js';
import type { ActiveSession } from '../session-store.js';
import { keyInScope } from '../project-scope.js';
import { consoleRoutes } from '../console-route-table.js';

const alertSettingsSchema = z.object({
  alert_balance_usd: nonNegativeUsdInput.nullable().optional(),
  alert_quota_percent: z.number().int().min(1).max(100).nullable().optional(),
  /** false: alerts go only to the account's webhook and Slack endpoints subscribed to them. */
  alert_mail: z.boolean().optional(),
}).strict();

const keyAlertSchema = z.object({ alert_quota_percent: z.number().int().min(1).max(100).nullable() }).strict();

/** Keys listed with their own quota alert threshold: at most this many (the newest first pages of the key list). */
const KEYS_LISTED = 200;

/**
 * The account's alert thresholds as the owner sets them in the console: funds left in USD, and the percent of its
 * quota at which each key (and subscription) alerts. The same settings and checker as the admin API's; the mails go
 * to the account's email once per crossing.
 */
export const CONSOLE_ALERT_ROUTES = consoleRoutes((deps: ConsoleDeps) => {
  const { storage, clock, keys } = deps.services;

  /**
   * The keys with a quota cap and their alert threshold (their own, or the account's), for roles that read keys.
   */
  const keyThresholds = async (active: ActiveSession, accountPercent: number | null): Promise<KeyAlertThresholdJson[]> => {
    if (!roleAllows(active.role, 'keys:read')) return [];
    const accountId = active.session.accountId;
    const [page, own] = await Promise.all([
      storage.keys.listByAccount(accountId, { limit: KEYS_LISTED }, { playground: false }),
      storage.alerts.keyQuotaPercents(accountId),
    ]);
    return page.data.filter((key) => key.status !== 'revoked' && key.quotaNano !== null && keyInScope(active.projects, key)).map((key) => ({
      key_id: key.id,
      name: key.name,
      hint: key.displayHint,
      quota_usd: nanoToUsd(key.quotaNano ?? 0n),
      alert_quota_percent: own.get(key.id) ?? null,
      effective_percent: own.get(key.id) ?? accountPercent,
    }));
  };

  const answer = async (active: ActiveSession): Promise<ConsoleAlertsJson> => {
    const accountId = active.session.accountId;
    const settings = await storage.alerts.getSettings(accountId);
    if (settings === null) throw new GatewayError('not_found', 'The account no longer exists.');
    return {
      ...settingsToJson(accountId, settings, await storage.alerts.listByAccount(accountId)),
      alert_mail: await storage.webhooks.alertMail(accountId),
      keys: await keyThresholds(active, settings.quotaPercent),
    };
  };
  return { deps, storage, clock, keys, keyThresholds, answer };
}, [
  { method: 'GET', path: '/api/console/alerts', who: 'member', permission: 'account:read', handler: ({ answer }) => async ({ context, active }) => {
    sendJson(context, 200, await answer(active));
  } },

  // One key's own quota alert threshold, set by the account's owners and admins (null: the account's again).
  { method: 'PUT', path: '/api/console/alerts/keys/:id', who: 'member', permission: 'alerts:write', handler: ({ storage, clock, answer }) => async ({ context, active }) => {
    const input = parseInput(keyAlertSchema, await readConsoleBody(context));
    const keyId = context.params.id ?? '';
    if (!(await storage.alerts.setKeyQuotaPercent(active.session.accountId, keyId, input.alert_quota_percent, clock.now()))) {
      throw new GatewayError('not_found', `No key with id '${keyId}' on this account.`);
    }
    sendJson(context, 200, await answer(active));
  } },

  { method: 'PUT', path: '/api/console/alerts', who: 'member', permission: 'alerts:write', handler: ({ storage, clock, keys, answer }) => async ({ context, active }) => {
    const accountId = active.session.accountId;
    const input = parseInput(alertSettingsSchema, await readConsoleBody(context));
    const patch: Partial<AlertSettings> = {};
    if (input.alert_balance_usd !== undefined) patch.balanceNano = input.alert_balance_usd;
    if (input.alert_quota_percent !== undefined) patch.quotaPercent = input.alert_quota_percent;
    const settings = await storage.alerts.setSettings(accountId, patch, clock.now());
    if (settings === null) throw new GatewayError('not_found', 'The account no longer exists.');
    if (input.alert_mail !== undefined) await storage.webhooks.setAlertMail(accountId, input.alert_mail, clock.now());
    // Cached key records carry the account's thresholds.
    await keys.invalidateAccount(accountId);
    sendJson(context, 200, await answer(active));
  } },
]);
