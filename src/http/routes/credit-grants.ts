import { nanoToUsd } from '../../billing/money.js';
import { subscriptionAt } from '../../billing/subscription-changes.js';
import type { GatewayServices } from '../../services.js';
import type { NanoUsd, Plan, Subscription } from '../../domain/records.js';
import { authenticate } from '../authenticate.js';
import type { RouteHandler } from '../request-context.js';
import { sendJson } from '../respond.js';

interface Grant {
  id: string;
  granted: NanoUsd;
  used: NanoUsd;
  available: NanoUsd;
  effectiveAt: number;
  expiresAt: number | null;
}

const seconds = (ms: number): number => Math.floor(ms / 1000);

/**
 * What of the balance the account can spend now: all of it without a subscription or under `payg`; nothing while the
 * subscription that governs its overflow has policy `deny` (its quota is all the account may spend this period); at
 * most the overage left under `limit`. The governing subscription is the one admission charges past its quota: the
 * first (oldest) with quota left, else the first.
 */
function walletAvailable(balance: NanoUsd, subscriptions: ReadonlyArray<{ view: Subscription; plan: Plan }>): NanoUsd {
  const spendable = balance > 0n ? balance : 0n;
  const governing = subscriptions.find(({ view, plan }) => view.usedNano < plan.quotaNano) ?? subscriptions[0];
  if (governing === undefined) return spendable;
  const { view, plan } = governing;
  switch (plan.overagePolicy) {
    case 'payg':
      return spendable;
    case 'deny':
      return 0n;
    case 'limit': {
      const overageLeft = (plan.overageLimitNano ?? 0n) - view.overageUsedNano;
      return overageLeft <= 0n ? 0n : overageLeft < spendable ? overageLeft : spendable;
    }
    default: {
      const unknown: never = plan.overagePolicy;
      throw new Error(`unhandled overage policy ${String(unknown)}`);
    }
  }
}

/**
 * GET /v1/dashboard/billing/credit_grants: the legacy balance query many clients still call, in its shape
 * (`credit_summary` with USD numbers and a list of `credit_grant`s). Grants: the wallet (granted = every credit
 * in the ledger, used = every charge and negative correction, available = what the account may spend of the balance
 * under its subscriptions' overage policies, never below 0), then one per active subscription for its current period
 * (granted = the plan's quota, expires at the period's end).
 */
export function creditGrantsRoute(services: GatewayServices): RouteHandler {
  return async (context) => {
    const { account } = await authenticate(context, services);
    const now = services.clock.now();
    const totals = await services.storage.money.creditTotals(account.id);
    const balance = await services.ledger.availableBalance(account.id);
    const active: Array<{ view: Subscription; plan: Plan }> = [];
    for (const subscription of await services.storage.subscriptions.listByAccount(account.id)) {
      const plan = await services.storage.plans.getById(subscription.planId);
      if (plan === null) continue;
      const view = subscriptionAt(subscription, plan, now);
      if (view.status !== 'active' || view.startsAt > now) continue;
      active.push({ view, plan });
    }
    const grants: Grant[] = [{
      id: `wallet_${account.id}`,
      granted: totals.creditedNano,
      used: totals.debitedNano,
      available: walletAvailable(balance, active),
      effectiveAt: account.createdAt,
      expiresAt: null,
    }];
    for (const { view, plan } of active) {
      const used = view.usedNano > plan.quotaNano ? plan.quotaNano : view.usedNano;
      grants.push({
        id: view.id,
        granted: plan.quotaNano,
        used,
        available: plan.quotaNano - used,
        effectiveAt: view.currentPeriodStart,
        expiresAt: view.cancelAt !== null && view.cancelAt < view.currentPeriodEnd ? view.cancelAt : view.currentPeriodEnd,
      });
    }
    const sum = (pick: (grant: Grant) => NanoUsd): number => nanoToUsd(grants.reduce((total, grant) => total + pick(grant), 0n));
    sendJson(context, 200, {
      object: 'credit_summary',
      total_granted: sum((grant) => grant.granted),
      total_used: sum((grant) => grant.used),
      total_available: sum((grant) => grant.available),
      grants: {
        object: 'list',
        data: grants.map((grant) => ({
          object: 'credit_grant',
          id: grant.id,
          grant_amount: nanoToUsd(grant.granted),
          used_amount: nanoToUsd(grant.used),
          effective_at: seconds(grant.effectiveAt),
          expires_at: grant.expiresAt === null ? null : seconds(grant.expiresAt),
        })),
      },
    });
  };
}
