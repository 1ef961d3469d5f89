import type { KeyBudget, NanoUsd } from '../domain/records.js';
import { budgetPeriodAt } from '../domain/budget-period.js';
import {
  budgetPool, customerPool, keyPool, overagePool, poolsOf, projectBudgetPool, projectPool, subscriptionPool, walletPool,
  type Reservation, type ReservationParts,
} from './money-pools.js';
import type { BatchFunds } from './batch-funds.js';

/**
 * A reservation that did not fit in this instance's lease and needs storage to grow it: the reservation before it is
 * known which subscription pays and what each pool holds.
 */
export interface GrowRequest extends Omit<Reservation, 'subscriptionId' | 'parts'> {
  /** Only asks whether the amount would be held (Ledger.assertCanPay): answered like a reservation, nothing held. */
  probe?: boolean;
}

/**
 * A refusal by the key's own quota cap or budget, its project's, or the end customer's budget: what was left of it, and for a
 * budget the wait until it resets (and, for a customer's, the budget itself, which the refusal names).
 */
export interface KeyPoolRefusal {
  refused: 'quota_exhausted';
  pool: 'key' | 'budget' | 'project' | 'projectBudget' | 'customer';
  remainingNano: NanoUsd;
  retryAfterMs?: number;
  customer?: { customer: string; budget: KeyBudget };
}

/** A refusal by a subscription's quota (policy `deny`, or its overage limit): the wait until its period resets. */
export interface SubscriptionRefusal {
  refused: 'quota_exhausted';
  resetsInMs: number;
}

type InsufficientBalance = { refused: 'insufficient_balance' };

export type GrowOutcome = { reservation: Reservation } | InsufficientBalance | SubscriptionRefusal | KeyPoolRefusal;

/**
 * Grows a hold for one waiting reservation, all or nothing: the key's, project's and customer's pools must fit it,
 * then the subscription quota pays first and the plan's overage policy decides the rest. A probe holds nothing; a
 * holder's reservation is held as the holder's own rows.
 */
export function growInBatch(funds: BatchFunds, grow: GrowRequest): GrowOutcome {
  const { accountId, amountNano: amount } = grow;
  const customer = grow.customerBudgeted === true && grow.customer != null ? customerPool(accountId, grow.customer) : null;
  const poolRefusal = refusalByPools(funds, grow, customer);
  if (poolRefusal !== null) return poolRefusal;
  const project = grow.project ?? null;
  const parts: ReservationParts = {
    wallet: 0n, subscription: 0n, overage: 0n, key: grow.keyCapped ? amount : 0n, budget: grow.keyBudgeted ? amount : 0n, customer: customer === null ? 0n : amount,
    ...(project === null ? {} : { project: project.capped ? amount : 0n, projectBudget: project.budgeted ? amount : 0n }),
  };
  const paid = paySubscriptionFirst(funds, grow, parts);
  if ('refused' in paid) return paid;
  const reservation: Reservation = {
    entryId: grow.entryId,
    accountId,
    keyId: grow.keyId,
    keyCapped: grow.keyCapped,
    keyBudgeted: grow.keyBudgeted,
    ...(customer === null ? {} : { customer: grow.customer, customerBudgeted: true }),
    subscriptionId: paid.subscriptionId,
    candidateSubscriptions: grow.candidateSubscriptions,
    amountNano: amount,
    parts,
    ...(project === null ? {} : { project }),
  };
  if (grow.probe === true) return { reservation };
  if (grow.holder !== undefined) {
    funds.holdFor(grow.holder, reservation);
    return { reservation: { ...reservation, holder: grow.holder } };
  }
  for (const [pool, part] of poolsOf(reservation)) {
    const state = funds.poolOf(pool, accountId);
    state.inFlight += part;
    state.lastUsedAt = funds.now;
    if (part > state.unit) state.unit = part;
  }
  return { reservation };
}

/** The refusal of the first of the key's cap and budget, the project's, and the customer's budget the amount does not fit. */
function refusalByPools(funds: BatchFunds, grow: GrowRequest, customer: string | null): KeyPoolRefusal | null {
  const { accountId, amountNano: amount } = grow;
  const { snapshot, now } = funds;
  if (grow.keyCapped && !funds.fits(keyPool(grow.keyId), accountId, amount)) {
    return { refused: 'quota_exhausted', pool: 'key', remainingNano: funds.roomOf(keyPool(grow.keyId), accountId) ?? 0n };
  }
  const budget = grow.keyBudgeted ? snapshot.keys.get(grow.keyId)?.budget ?? null : null;
  if (budget !== null && !funds.fits(budgetPool(grow.keyId), accountId, amount)) {
    const remainingNano = funds.roomOf(budgetPool(grow.keyId), accountId) ?? 0n;
    return { refused: 'quota_exhausted', pool: 'budget', remainingNano, retryAfterMs: budgetPeriodAt(budget.period, now).end - now };
  }
  const project = grow.project ?? null;
  if (project?.capped === true && !funds.fits(projectPool(project.id), accountId, amount)) {
    return { refused: 'quota_exhausted', pool: 'project', remainingNano: funds.roomOf(projectPool(project.id), accountId) ?? 0n };
  }
  const projectBudget = project?.budgeted === true ? snapshot.projects?.get(project.id)?.budget ?? null : null;
  if (project !== null && projectBudget !== null && !funds.fits(projectBudgetPool(project.id), accountId, amount)) {
    const remainingNano = funds.roomOf(projectBudgetPool(project.id), accountId) ?? 0n;
    return { refused: 'quota_exhausted', pool: 'projectBudget', remainingNano, retryAfterMs: budgetPeriodAt(projectBudget.period, now).end - now };
  }
  const customerBudget = customer === null ? null : snapshot.customerBudgets?.get(customer) ?? null;
  if (customer !== null && customerBudget !== null && !funds.fits(customer, accountId, amount)) {
    return {
      refused: 'quota_exhausted',
      pool: 'customer',
      remainingNano: funds.roomOf(customer, accountId) ?? 0n,
      retryAfterMs: budgetPeriodAt(customerBudget.period, now).end - now,
      customer: { customer: grow.customer as string, budget: customerBudget },
    };
  }
  return null;
}

/**
 * Fills `parts` with what the subscription quota and the wallet pay (the whole amount from a subscription with room
 * for it, else what the first with any room has and the rest from the wallet as the plan's overage policy allows).
 * Returns the subscription that pays, or the refusal.
 */
function paySubscriptionFirst(funds: BatchFunds, grow: GrowRequest, parts: ReservationParts): { subscriptionId: string | null } | SubscriptionRefusal | InsufficientBalance {
  const { accountId, amountNano: amount } = grow;
  const active = grow.candidateSubscriptions.filter((id) => funds.usable(id) !== null);
  let subscriptionId: string | null = active.find((id) => funds.fits(subscriptionPool(id), accountId, amount)) ?? null;
  if (subscriptionId !== null) {
    parts.subscription = amount;
    return { subscriptionId };
  }
  subscriptionId = active.find((id) => (funds.roomOf(subscriptionPool(id), accountId) ?? 0n) > 0n) ?? active[0] ?? null;
  const governing = subscriptionId === null ? null : funds.usable(subscriptionId);
  if (subscriptionId !== null) parts.subscription = funds.roomOf(subscriptionPool(subscriptionId), accountId) ?? 0n;
  const rest = amount - parts.subscription;
  parts.wallet = rest;
  let refused: SubscriptionRefusal | InsufficientBalance | null = null;
  if (governing !== null && subscriptionId !== null) {
    const quotaRefusal: SubscriptionRefusal = { refused: 'quota_exhausted', resetsInMs: governing.subscription.currentPeriodEnd - funds.now };
    if (governing.plan.overagePolicy === 'deny') refused = quotaRefusal;
    else if (governing.plan.overagePolicy === 'limit') {
      if (!funds.fits(overagePool(subscriptionId), accountId, rest)) refused = quotaRefusal;
      parts.overage = rest;
    }
  }
  if (refused === null && !funds.fits(walletPool(accountId), accountId, rest)) refused = { refused: 'insufficient_balance' };
  return refused ?? { subscriptionId };
}
