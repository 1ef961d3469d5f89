import { bindGuardrails, boundGuardrails, takeGuardrailNames } from '../../guardrail-policies/guardrail-admin.js';
import { guardrailAdminOf } from './guardrail-routes.js';
import { keyStatusEvent } from '../../webhooks/key-events.js';
import { hashPassword } from '../../auth/password-hash.js';
import { MAX_BALANCE_NANO, nanoToUsd } from '../../billing/money.js';
import { currentPeriod } from '../../billing/subscription-period.js';
import { subscriptionAt } from '../../billing/subscription-changes.js';
import { GatewayError } from '../../errors/gateway-error.js';
import {
  accountPatchFromInput, accountToJson, createAccountSchema, createKeySchema, creditSchema, FRESH_KEY_STANDING, keyPatchFromInput, keyToJson,
  newAccountRecord, updateAccountSchema, updateKeySchema,
} from '../../management/account-input.js';
import { effectiveAccountLimits } from '../../limits/account-limits.js';
import { keyViewOf } from '../../management/key-view.js';
import { createKey } from '../../management/create-key.js';
import { pageJson, pageRequestFrom } from '../../management/pagination.js';
import { parseInput } from '../../management/parse-input.js';
import { isoTime, timeInput } from '../../management/time-input.js';
import { requireKnownTier } from '../../management/tier-input.js';
import type { GatewayServices } from '../../services.js';
import { newId } from '../../shared/ids.js';
import type { Account, ApiKey, Plan, Subscription } from '../../domain/records.js';
import { BalanceLimitError } from '../../storage/storage.js';
import { sendJson } from '../respond.js';
import { isUniqueViolation, notFound, readAdminBody } from './admin-guard.js';
import { guardOperatorsOfAccount } from './operator-accounts.js';
import { describeEntry } from '../../billing/ledger-meaning.js';
import { ledgerFilterFrom } from '../../management/ledger-filter.js';
import { signUpCreditView } from '../../sign-up-credit/grant-sign-up-credit.js';
import { z } from 'zod';
import { keyProjectFromInput } from '../../projects/project-management.js';
import { adminRoutes } from './admin-route.js';
import type { ApiKeyJson } from '../../contract/keys.js';
import type { SubscriptionJson } from '../../contract/plans.js';
import type { AdminAccountDetailJson, AdminLedgerEntryJson } from '../../contract/operator.js';

const createSubscriptionSchema = z.object({ plan_id: z.string().min(1), starts_at: timeInput.optional() }).strict();

export function subscriptionToJson(subscription: Subscription, plan: Plan | null, now: number): SubscriptionJson {
  // Read lazily at `now`: a period that has ended shows the new one with nothing used, a due cancellation as cancelled.
  const view = plan === null ? subscription : subscriptionAt(subscription, plan, now);
  const active = view.status === 'active';
  const used = view.usedNano;
  return {
    id: view.id,
    object: 'subscription',
    account_id: view.accountId,
    plan_id: view.planId,
    plan_name: plan?.name ?? null,
    status: view.status,
    starts_at: isoTime(view.startsAt),
    current_period: plan === null || !active ? null : { start: isoTime(view.currentPeriodStart), end: isoTime(view.currentPeriodEnd) },
    cancel_at: view.cancelAt === null ? null : isoTime(view.cancelAt),
    // Bought in the console: paid until this time, and whether the next period is bought from the balance then.
    paid_through: view.paidThrough === null ? null : isoTime(view.paidThrough),
    renews: active && view.renews,
    price_usd: plan === null ? null : nanoToUsd(plan.priceNano),
    quota_usd: plan === null ? null : nanoToUsd(plan.quotaNano),
    used_usd: nanoToUsd(used),
    remaining_usd: plan === null || !active ? 0 : nanoToUsd(plan.quotaNano > used ? plan.quotaNano - used : 0n),
    overage: plan === null ? null : {
      policy: plan.overagePolicy,
      limit_usd: plan.overageLimitNano === null ? null : nanoToUsd(plan.overageLimitNano),
      used_usd: nanoToUsd(view.overageUsedNano),
    },
    created_at: isoTime(view.createdAt),
  };
}

/** The admin API's /admin/accounts (their credits, keys and subscriptions) and /admin/keys, guarded by the admin token. */
export const ACCOUNT_ROUTES = adminRoutes((services: GatewayServices) => {
  const { storage, clock, ledger, keys } = services;

  const requireAccount = async (id: string): Promise<Account> => {
    const account = await storage.accounts.getById(id);
    if (account === null) throw notFound('account', id);
    return account;
  };
  /** Money and keys may not be added to a deleted account (its data is kept for accounting only). */
  const requireLiveAccount = async (id: string): Promise<Account> => {
    const account = await requireAccount(id);
    if (account.status === 'deleted') throw new GatewayError('conflict', 'This account has been deleted.');
    return account;
  };
  const accountJson = async (account: Account): Promise<AdminAccountDetailJson> => {
    const now = clock.now();
    const subscriptions = await storage.subscriptions.listByAccount(account.id);
    const withPlans = await Promise.all(subscriptions.map(async (subscription) => subscriptionToJson(subscription, await storage.plans.getById(subscription.planId), now)));
    const limits = effectiveAccountLimits(services.tiers, account);
    return { ...accountToJson(account, await ledger.availableBalance(account.id), limits), subscriptions: withPlans, sign_up_credit: await signUpCreditView(services, account) };
  };
  const keyJson = async (key: ApiKey): Promise<ApiKeyJson> => {
    const view = await keyViewOf(services, key.accountId);
    return view((await storage.keys.getById(key.id)) ?? key);
  };
  return { services, storage, clock, ledger, keys, requireAccount, requireLiveAccount, accountJson, keyJson };
}, [
  { method: 'POST', path: '/admin/accounts', handler: ({ storage, clock, accountJson }) => async (context) => {
    const input = parseInput(createAccountSchema, await readAdminBody(context));
    if (input.tier !== undefined) await requireKnownTier(storage.tiers, input.tier);
    const now = clock.now();
    const passwordHash = input.password === undefined ? null : await hashPassword(input.password);
    const account = newAccountRecord(newId('acct', now), input.email, passwordHash, input.tier, now);
    try {
      await storage.accounts.create(account);
    } catch (error) {
      if (isUniqueViolation(error)) throw new GatewayError('conflict', `An account with email '${input.email}' already exists.`, { param: 'email' });
      throw error;
    }
    sendJson(context, 201, await accountJson(account));
  } },
  { method: 'GET', path: '/admin/accounts', handler: ({ services, storage }) => async (context) => {
    // `q`: accounts whose email, id or billing name starts with it; without it, every account.
    const search = (context.query.get('q') ?? '').trim();
    if (search.length > 200) throw new GatewayError('bad_request', "'q' must be at most 200 characters.", { param: 'q' });
    const page = search === '' ? await storage.accounts.list(pageRequestFrom(context.query)) : await storage.accounts.search(search, pageRequestFrom(context.query));
    const balances = await storage.accounts.getBalances(page.data.map((account) => account.id));
    sendJson(context, 200, pageJson(page, (account) => accountToJson(account, balances.get(account.id) ?? account.balanceNano, effectiveAccountLimits(services.tiers, account))));
  } },
  { method: 'GET', path: '/admin/accounts/:id', handler: ({ storage, requireAccount, accountJson }) => async (context) => {
    const account = await requireAccount(context.params.id ?? '');
    sendJson(context, 200, { ...await accountJson(account), guardrails: await boundGuardrails(storage.guardrails, 'account', account.id) } satisfies AdminAccountDetailJson);
  } },
  { method: 'PATCH', path: '/admin/accounts/:id', handler: ({ services, storage, clock, keys, requireAccount, accountJson }) => async (context) => {
    const id = context.params.id ?? '';
    const body = await readAdminBody(context);
    const guardrails = await takeGuardrailNames(storage.guardrails, body);
    const input = parseInput(updateAccountSchema, body);
    const existing = await requireAccount(id);
    if (input.tier !== undefined && input.tier !== existing.tier) await requireKnownTier(storage.tiers, input.tier);
    if (existing.status === 'deleted') throw new GatewayError('conflict', 'This account has been deleted; it cannot be changed.');
    if (input.status !== undefined && input.status !== existing.status) await guardOperatorsOfAccount(services, context, id, 'status');
    const passwordHash = input.password === undefined ? undefined : await hashPassword(input.password);
    const { status, ...attributes } = input;
    let updated;
    try {
      updated = await storage.accounts.update(id, accountPatchFromInput(attributes, passwordHash), clock.now());
    } catch (error) {
      if (isUniqueViolation(error)) throw new GatewayError('conflict', 'Another account already has that email.', { param: 'email' });
      throw error;
    }
    if (updated === null) throw notFound('account', id);
    if (input.alert_quota_percent !== undefined) await storage.alerts.setSettings(id, { quotaPercent: input.alert_quota_percent }, clock.now());
    // The credit line or limits may have changed: the next reservation of every instance asks storage (see gateway.ts).
    await keys.invalidateAccount(id);
    if (status !== undefined) updated = (await services.accountLifecycle.setStatus(id, status)) ?? updated;
    if (guardrails !== undefined) await bindGuardrails(guardrailAdminOf(services), 'account', id, guardrails);
    sendJson(context, 200, { ...await accountJson(updated), guardrails: guardrails ?? await boundGuardrails(storage.guardrails, 'account', id) } satisfies AdminAccountDetailJson);
  } },
  { method: 'DELETE', path: '/admin/accounts/:id', handler: ({ services, requireAccount, accountJson }) => async (context) => {
    const id = context.params.id ?? '';
    const existing = await requireAccount(id);
    if (existing.status !== 'deleted') await guardOperatorsOfAccount(services, context, id, 'delete');
    const deleted = await services.accountLifecycle.delete(id);
    if (deleted === null) throw notFound('account', id);
    sendJson(context, 200, await accountJson(deleted));
  } },
  { method: 'POST', path: '/admin/accounts/:id/credits', handler: ({ clock, ledger, requireLiveAccount }) => async (context) => {
    const id = context.params.id ?? '';
    const input = parseInput(creditSchema, await readAdminBody(context));
    await requireLiveAccount(id);
    const now = clock.now();
    const balance = await ledger.credit({
      entryId: newId('led', now),
      accountId: id,
      kind: input.amount_usd > 0n ? 'topup' : 'correction',
      amountNano: input.amount_usd,
      reason: input.reason ?? null,
      createdAt: now,
      maxBalanceNano: MAX_BALANCE_NANO,
    }).catch((error: unknown) => {
      if (!(error instanceof BalanceLimitError)) throw error;
      throw new GatewayError('bad_request', `'amount_usd': the balance (${nanoToUsd(error.balanceNano)} USD) would leave the allowed range of ±${nanoToUsd(MAX_BALANCE_NANO)} USD; nothing was credited.`, { param: 'amount_usd' });
    });
    if (balance === null) throw notFound('account', id);
    sendJson(context, 200, { account_id: id, balance_usd: nanoToUsd(balance) });
  } },
  { method: 'GET', path: '/admin/accounts/:id/ledger', handler: ({ storage, requireAccount }) => async (context) => {
    const id = context.params.id ?? '';
    await requireAccount(id);
    const page = await storage.ledger.listByAccount(id, pageRequestFrom(context.query), ledgerFilterFrom(context.query));
    sendJson(context, 200, pageJson(page, (entry): AdminLedgerEntryJson => ({
      id: entry.id, kind: entry.kind, ...describeEntry(entry.kind, entry.reason, entry.amountNano), amount_usd: nanoToUsd(entry.amountNano), key_id: entry.keyId,
      request_id: entry.requestId, reason: entry.reason, created_at: isoTime(entry.createdAt),
    })));
  } },

  { method: 'POST', path: '/admin/accounts/:id/keys', handler: ({ services, storage, clock, keys, requireLiveAccount }) => async (context) => {
    const account = await requireLiveAccount(context.params.id ?? '');
    const body = await readAdminBody(context);
    const guardrails = await takeGuardrailNames(storage.guardrails, body);
    const input = parseInput(createKeySchema, body);
    const now = clock.now();
    const { key, plaintext } = await createKey({ storage, keys, keyBrand: services.config.keyBrand }, account.id, input, null, now);
    if (guardrails !== undefined) await bindGuardrails(guardrailAdminOf(services), 'key', key.id, guardrails);
    sendJson(context, 201, { ...keyToJson(key, { ...FRESH_KEY_STANDING, accountStatus: account.status }, now), key: plaintext, guardrails: guardrails ?? [] });
  } },
  { method: 'GET', path: '/admin/accounts/:id/keys', handler: ({ services, storage, requireAccount }) => async (context) => {
    const account = await requireAccount(context.params.id ?? '');
    const view = await keyViewOf(services, account.id);
    const page = await storage.keys.listByAccount(account.id, pageRequestFrom(context.query));
    sendJson(context, 200, pageJson(page, view));
  } },
  { method: 'GET', path: '/admin/keys/:id', handler: ({ storage, keyJson }) => async (context) => {
    const id = context.params.id ?? '';
    const key = await storage.keys.getById(id);
    if (key === null) throw notFound('key', id);
    sendJson(context, 200, { ...await keyJson(key), guardrails: await boundGuardrails(storage.guardrails, 'key', id) });
  } },
  { method: 'PATCH', path: '/admin/keys/:id', handler: ({ services, storage, clock, ledger, keys, keyJson }) => async (context) => {
    const id = context.params.id ?? '';
    const body = await readAdminBody(context);
    const guardrails = await takeGuardrailNames(storage.guardrails, body);
    const input = parseInput(updateKeySchema, body);
    // Spend settled before the change counts to the budget's old period, not to the one the change starts.
    if (input.budget !== undefined) await ledger.flush();
    const existing = await storage.keys.getById(id);
    if (existing === null) throw notFound('key', id);
    if (existing.status === 'revoked' && Object.keys(input).length > 0 && input.status !== 'revoked') {
      throw new GatewayError('conflict', 'A revoked key is final and cannot be changed; issue a new key.');
    }
    const now = clock.now();
    const projectId = await keyProjectFromInput(storage, existing.accountId, input.project_id);
    const updated = await storage.keys.update(id, { ...keyPatchFromInput(input, existing, now), ...(projectId === undefined ? {} : { projectId }) }, now, keyStatusEvent('operator'));
    if (updated === null) throw notFound('key', id);
    await keys.invalidateKey(id);
    if (guardrails !== undefined) await bindGuardrails(guardrailAdminOf(services), 'key', id, guardrails);
    sendJson(context, 200, { ...await keyJson(updated), guardrails: guardrails ?? await boundGuardrails(storage.guardrails, 'key', id) });
  } },

  { method: 'POST', path: '/admin/accounts/:id/subscriptions', handler: ({ services, storage, clock, requireLiveAccount }) => async (context) => {
    const account = await requireLiveAccount(context.params.id ?? '');
    const input = parseInput(createSubscriptionSchema, await readAdminBody(context));
    const plan = await storage.plans.getById(input.plan_id);
    if (plan === null) throw new GatewayError('bad_request', `No plan with id '${input.plan_id}'.`, { param: 'plan_id' });
    const now = clock.now();
    const startsAt = input.starts_at ?? now;
    const period = currentPeriod(startsAt, plan.period, now);
    const subscription: Subscription = {
      id: newId('sub', now),
      accountId: account.id,
      planId: plan.id,
      status: 'active',
      startsAt,
      currentPeriodStart: period.start,
      currentPeriodEnd: period.end,
      usedNano: 0n,
      overageUsedNano: 0n,
      cancelAt: null,
      paidThrough: null,
      renews: false,
      createdAt: now,
      updatedAt: now,
    };
    await storage.subscriptions.create(subscription);
    services.subscriptions.forget(account.id);
    sendJson(context, 201, subscriptionToJson(subscription, plan, now));
  } },
]);
