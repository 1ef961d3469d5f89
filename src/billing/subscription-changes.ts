import type { Plan, Subscription } from '../storage/records.js';
import type { SubscriptionPatch } from '../storage/storage.js';
import { currentPeriod } from './subscription-period.js';

export type CancelWhen = 'now' | 'period_end';

/** The subscription as a reader at `now` sees it: rolled to the current period (lazily), cancelled once its end came. */
export function subscriptionAt(subscription: Subscription, plan: Plan, now: number): Subscription {
  let view = subscription;
  if (view.status === 'active' && view.cancelAt !== null && view.cancelAt <= now) view = { ...view, status: 'cancelled' };
  if (view.status === 'active') {
    const period = currentPeriod(view.startsAt, plan.period, now);
    if (period.start !== view.currentPeriodStart) {
      view = { ...view, currentPeriodStart: period.start, currentPeriodEnd: period.end, usedNano: 0n, overageUsedNano: 0n };
    }
  }
  return view;
}

/**
 * A plan change (upgrade or downgrade), effective at once. Same period length: the current period and what it used
 * carry over, counted against the new plan's quota. Another period length: a new period of the new plan starts
 * now with nothing used. A scheduled cancellation stays scheduled.
 */
export function planChange(current: Subscription, from: Plan, to: Plan, now: number): SubscriptionPatch {
  const view = subscriptionAt(current, from, now);
  if (from.period === to.period) {
    return { planId: to.id, currentPeriodStart: view.currentPeriodStart, currentPeriodEnd: view.currentPeriodEnd, resetUsage: view.currentPeriodStart !== current.currentPeriodStart };
  }
  // Usage rows are told apart by their period's start: when the old period began this very millisecond, the new one
  // shares its start, so its usage carries over instead of being zeroed.
  const period = currentPeriod(now, to.period, now);
  return { planId: to.id, startsAt: now, currentPeriodStart: period.start, currentPeriodEnd: period.end, resetUsage: period.start !== view.currentPeriodStart || view.currentPeriodStart !== current.currentPeriodStart };
}

/** Cancellation: `now` ends it at once; `period_end` lets the paid period run out, then it stops renewing. */
export function cancellation(current: Subscription, plan: Plan, when: CancelWhen, now: number): SubscriptionPatch {
  if (when === 'now') return { status: 'cancelled', cancelAt: now, renews: false };
  const view = subscriptionAt(current, plan, now);
  return { cancelAt: view.currentPeriodEnd, renews: false };
}
