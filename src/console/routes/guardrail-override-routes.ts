import { accountGuardrails, clearAccountOverride, setAccountOverride, type AccountOverrideDeps } from '../../guardrail-policies/account-overrides.js';
import { sendJson } from '../../http/respond.js';
import type { ConsoleDeps } from '../console-deps.js';
import { readConsoleBody, sendNoContent } from '../console-route.js';
import { consoleRoutes } from '../console-route-table.js';

/**
 * The operator's guardrail policies that apply to the account, and the account's overrides of them (docs/console-api.md,
 * "Guardrail overrides"): every member who reads keys sees them (a member scoped to projects: those of their
 * projects); owners and admins turn off or relax, for the account, a project or a key, the policies the operator lets
 * accounts change. Targets are looked up within the session's account (another account's project or key is 404).
 */
export const GUARDRAIL_OVERRIDE_ROUTES = consoleRoutes((deps: ConsoleDeps): { overrides: AccountOverrideDeps } => ({
  overrides: { storage: deps.services.storage, invalidation: deps.services.invalidation, now: () => deps.services.clock.now() },
}), [
  { method: 'GET', path: '/api/guardrail-overrides', who: 'member', permission: 'keys:read', handler: ({ overrides }) => async ({ context, active }) => {
    const visible = active.projects === null ? null : new Set(active.projects.roles.keys());
    sendJson(context, 200, await accountGuardrails(overrides, active.session.accountId, visible));
  } },
  { method: 'PUT', path: '/api/guardrail-overrides/:name', who: 'member', permission: 'guardrails:manage', handler: ({ overrides }) => async ({ context, active }) => {
    sendJson(context, 200, await setAccountOverride(overrides, active.session.accountId, active.user.id, context.params.name ?? '', await readConsoleBody(context)));
  } },
  { method: 'DELETE', path: '/api/guardrail-overrides/:name', who: 'member', permission: 'guardrails:manage', handler: ({ overrides }) => async ({ context, active }) => {
    await clearAccountOverride(overrides, active.session.accountId, context.params.name ?? '', { scope: context.query.get('scope'), targetId: context.query.get('target_id') });
    sendNoContent(context);
  } },
]);
