import { subscriptionToJson } from '../../http/admin/account-routes.js';
import type { Router } from '../../http/router.js';
import { sendJson } from '../../http/respond.js';
import type { ConsoleDeps } from '../console-deps.js';
import { signedInRoute } from '../console-route.js';

/** The account's subscriptions as the Plans page shows them: plan, current period, quota used and left, overage policy. */
export function addConsolePlanRoutes(router: Router, deps: ConsoleDeps): void {
  const { storage, clock } = deps.services;
  router.add('GET', '/api/console/plans', signedInRoute(deps, 'account:read', async ({ context, active }) => {
    const subscriptions = await storage.subscriptions.listByAccount(active.session.accountId);
    const plans = new Map((await Promise.all([...new Set(subscriptions.map((subscription) => subscription.planId))].map((id) => storage.plans.getById(id))))
      .filter((plan) => plan !== null).map((plan) => [plan.id, plan]));
    const now = clock.now();
    sendJson(context, 200, { object: 'list', data: subscriptions.map((subscription) => subscriptionToJson(subscription, plans.get(subscription.planId) ?? null, now)) });
  }));
}
