import { z } from 'zod';
import { checkLedger } from '../../billing/ledger-check.js';
import { nanoToUsd } from '../../billing/money.js';
import { cancellation, planChange } from '../../billing/subscription-changes.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { parseInput } from '../../management/parse-input.js';
import type { GatewayServices } from '../../services.js';
import type { Plan, Subscription } from '../../domain/records.js';
import { sendJson } from '../respond.js';
import { subscriptionToJson } from './account-routes.js';
import { notFound, readAdminBody } from './admin-guard.js';
import { adminRoutes } from './admin-route.js';

const changePlanSchema = z.object({ plan_id: z.string().min(1) }).strict();
const cancelSchema = z.object({ at: z.enum(['now', 'period_end']).optional() }).strict();
const accountIdQuery = z.string().min(1).max(200);

/**
 * Money administration: the ledger check, the holds in flight, and subscription changes (plan change, cancellation).
 * Subscription changes run under the account's money lock, so no settlement interleaves with them.
 */
export const MONEY_ROUTES = adminRoutes((services: GatewayServices) => {
  const { storage, clock, ledger } = services;

  const requireSubscription = async (id: string): Promise<{ subscription: Subscription; plan: Plan }> => {
    const subscription = await storage.subscriptions.getById(id);
    if (subscription === null) throw notFound('subscription', id);
    const plan = await storage.plans.getById(subscription.planId);
    if (plan === null) throw new GatewayError('conflict', `The plan '${subscription.planId}' of this subscription no longer exists.`);
    return { subscription, plan };
  };
  const changed = (subscription: Subscription): void => {
    ledger.forgetSubscription(subscription.id);
    services.subscriptions.forget(subscription.accountId);
  };
  const applyUnderLock = async (subscription: Subscription, patch: Parameters<typeof storage.subscriptions.update>[1]): Promise<Subscription> => {
    const now = clock.now();
    const updated = await storage.money.transact([subscription.accountId], (transaction) => transaction.updateSubscription(subscription.id, patch, now));
    if (updated === null) throw notFound('subscription', subscription.id);
    changed(updated);
    return updated;
  };
  return { services, storage, clock, ledger, requireSubscription, changed, applyUnderLock };
}, [
  { method: 'GET', path: '/admin/ledger/check', handler: ({ storage, ledger }) => async (context) => {
    const accountId = context.query.get('account_id');
    if (accountId !== null && !accountIdQuery.safeParse(accountId).success) throw new GatewayError('bad_request', 'account_id is not valid.', { param: 'account_id' });
    if (accountId !== null && (await storage.accounts.getById(accountId)) === null) throw notFound('account', accountId);
    // Settlements still queued on this instance are written first, so the check sees them.
    await ledger.flush();
    const report = await checkLedger(storage, accountId ?? undefined);
    sendJson(context, 200, { object: 'ledger_check', ok: report.ok, checked: report.checked, problems: report.problems });
  } },

  { method: 'GET', path: '/admin/money/holds', handler: ({ storage }) => async (context) => {
    const accountId = context.query.get('account_id') ?? undefined;
    const holds = await storage.money.listHolds(accountId);
    sendJson(context, 200, {
      object: 'list',
      data: holds.map((hold) => ({ instance_id: hold.instanceId, pool: hold.pool, account_id: hold.accountId, held_usd: nanoToUsd(hold.heldNano) })),
    });
  } },

  { method: 'GET', path: '/admin/subscriptions/:id', handler: ({ clock, requireSubscription }) => async (context) => {
    const { subscription, plan } = await requireSubscription(context.params.id ?? '');
    sendJson(context, 200, subscriptionToJson(subscription, plan, clock.now()));
  } },

  { method: 'PATCH', path: '/admin/subscriptions/:id', handler: ({ storage, clock, requireSubscription, applyUnderLock }) => async (context) => {
    const { subscription, plan } = await requireSubscription(context.params.id ?? '');
    const input = parseInput(changePlanSchema, await readAdminBody(context));
    const next = await storage.plans.getById(input.plan_id);
    if (next === null) throw new GatewayError('bad_request', `No plan with id '${input.plan_id}'.`, { param: 'plan_id' });
    const now = clock.now();
    if (subscription.status !== 'active' || (subscription.cancelAt !== null && subscription.cancelAt <= now)) {
      throw new GatewayError('conflict', 'A cancelled subscription cannot change plan; create a new subscription.');
    }
    const updated = await applyUnderLock(subscription, planChange(subscription, plan, next, now));
    sendJson(context, 200, subscriptionToJson(updated, next, clock.now()));
  } },

  { method: 'POST', path: '/admin/subscriptions/:id/cancel', handler: ({ clock, requireSubscription, applyUnderLock }) => async (context) => {
    const { subscription, plan } = await requireSubscription(context.params.id ?? '');
    const headers = context.request.headers;
    const bodiless = headers['content-length'] === '0' || (headers['content-length'] === undefined && headers['transfer-encoding'] === undefined);
    const input = parseInput(cancelSchema, bodiless ? {} : await readAdminBody(context));
    const now = clock.now();
    if (subscription.status !== 'active' || (subscription.cancelAt !== null && subscription.cancelAt <= now)) {
      throw new GatewayError('conflict', 'The subscription is already cancelled.');
    }
    const updated = await applyUnderLock(subscription, cancellation(subscription, plan, input.at ?? 'now', now));
    sendJson(context, 200, subscriptionToJson(updated, plan, clock.now()));
  } },
]);
