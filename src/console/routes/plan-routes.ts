import { nanoToUsd } from '../../billing/money.js';
import type { ConsolePlansJson, OfferedPlanJson, PlanChoiceJson } from '../../contract/plans.js';
import { subscriptionToJson } from '../../http/admin/account-routes.js';
import { sendJson } from '../../http/respond.js';
import type { Plan } from '../../domain/records.js';
import type { ConsoleDeps } from '../console-deps.js';
import { roleAllows } from '../roles.js';
import { consoleRoutes } from '../console-route-table.js';

/** A plan the console offers, as the Plans page lists it. */
function offeredPlanJson(plan: Plan, currentPlanId: string | null): OfferedPlanJson {
  return {
    id: plan.id,
    object: 'plan',
    name: plan.name,
    period: plan.period,
    price_usd: nanoToUsd(plan.priceNano),
    quota_usd: nanoToUsd(plan.quotaNano),
    overage: { policy: plan.overagePolicy, limit_usd: plan.overageLimitNano === null ? null : nanoToUsd(plan.overageLimitNano) },
    rpm: plan.rpm,
    tpm: plan.tpm,
    current: plan.id === currentPlanId,
  };
}

/**
 * The Plans page: the account's subscriptions (plan, current period, quota used and left, overage policy), the
 * self-service plans the operator offers, and choosing one (owner, admin and billing members only; paid from the
 * balance).
 */
export const CONSOLE_PLAN_ROUTES = consoleRoutes((deps: ConsoleDeps) => {
  const { storage, clock, ledger } = deps.services;
  const purchases = deps.services.commerce.plans;
  return { deps, storage, clock, ledger, purchases };
}, [
  { method: 'GET', path: '/api/console/plans', who: 'member', permission: 'account:read', handler: ({ storage, clock, purchases }) => async ({ context, active }) => {
    const subscriptions = await storage.subscriptions.listByAccount(active.session.accountId);
    const plans = new Map((await Promise.all([...new Set(subscriptions.map((subscription) => subscription.planId))].map((id) => storage.plans.getById(id))))
      .filter((plan) => plan !== null).map((plan) => [plan.id, plan]));
    const now = clock.now();
    const bought = subscriptions.find((subscription) => subscription.paidThrough !== null && subscription.status === 'active' && (subscription.cancelAt === null || subscription.cancelAt > now));
    sendJson(context, 200, {
      object: 'list' as const,
      data: subscriptions.map((subscription) => subscriptionToJson(subscription, plans.get(subscription.planId) ?? null, now)),
      offered: (await purchases.offered()).map((plan) => offeredPlanJson(plan, bought?.planId ?? null)),
      can_choose: roleAllows(active.role, 'billing:write'),
    } satisfies ConsolePlansJson);
  } },

  { method: 'POST', path: '/api/console/plans/:id/choose', who: 'member', permission: 'billing:write', handler: ({ clock, ledger, purchases }) => async ({ context, active }) => {
    const accountId = active.session.accountId;
    const result = await purchases.choose(accountId, context.params.id ?? '');
    sendJson(context, 200, {
      object: 'plan_choice',
      subscription: subscriptionToJson(result.subscription, result.plan, clock.now()),
      charged_usd: nanoToUsd(result.chargedNano),
      invoice_id: result.invoiceId,
      balance_usd: nanoToUsd(await ledger.availableBalance(accountId)),
    } satisfies PlanChoiceJson);
  } },
]);
