import type { BudgetRollover, MoneySnapshot, ProjectBudgetRollover, SettledUsage, SubscriptionRollover } from '../storage/storage.js';
import type { HolderGrant, HolderTake } from '../storage/money-contracts.js';
import type { KeyBudget, NanoUsd, Plan, Subscription } from '../domain/records.js';
import { budgetPeriodAt, budgetSpentAt } from '../domain/budget-period.js';
import {
  atLeastZero, budgetPool, customerPool, customerPoolOf, keyPool, minimum, overagePool, poolsOf, projectBudgetPool, projectPool, subscriptionPool, walletPool,
  type PoolState, type ProjectFunds, type Reservation, type ReservationParts, type SubscriptionFacts,
} from './money-pools.js';
import { currentPeriod } from './subscription-period.js';

/** A reservation that did not fit in this instance's lease and needs storage to grow it. */
export interface GrowRequest {
  entryId: string;
  accountId: string;
  keyId: string;
  keyCapped: boolean;
  keyBudgeted: boolean;
  /** The end customer the request named and whether the account gave it a budget (its pool then takes part). */
  customer?: string | null;
  customerBudgeted?: boolean;
  candidateSubscriptions: readonly string[];
  amountNano: NanoUsd;
  /** The key's project, when its cap or budget takes part. */
  project?: ProjectFunds | null;
  /** Only asks whether the amount would be held (Ledger.assertCanPay): answered like a reservation, nothing held. */
  probe?: boolean;
  /** Held durably for this holder (a batch's whole life) rather than by this instance. */
  holder?: string;
}

export interface Settlement {
  reservation: Reservation;
  costNano: NanoUsd;
  requestId: string;
  createdAt: number;
  /** The request's stream checkpoint may be stored: the transaction deletes it. */
  checkpointed?: boolean;
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

export type GrowOutcome = { reservation: Reservation } | { refused: 'insufficient_balance' } | SubscriptionRefusal | KeyPoolRefusal;

export interface LeasePolicy {
  /** Most an instance holds beyond its requests in flight, per pool. */
  capNano: NanoUsd;
  /** No lease unless the free funds are at least this many times the pool's reservation unit. */
  scarcityFactor: bigint;
  /** A lease takes at most this share (1/n) of the free funds. */
  shareDivisor: bigint;
  /** A pool without reservations for this long gives its lease back. */
  idleMs: number;
}

export interface BatchPlan {
  rollovers: SubscriptionRollover[];
  budgetRollovers: BudgetRollover[];
  projectBudgetRollovers: ProjectBudgetRollover[];
  usages: SettledUsage[];
  /** This instance's pools after the batch (only pools the batch touched). */
  pools: Map<string, PoolState>;
  outcomes: GrowOutcome[];
  subscriptionFacts: Map<string, SubscriptionFacts>;
  /** Holds made for holders (batches). */
  holderGrants: HolderGrant[];
  /** What settlements charged against holders' holds, pool by pool. */
  holderTakes: HolderTake[];
}

/** The subscription as it stands at `now`: rolled to the current period, cancelled when its end has come. */
function currentState(subscription: Subscription, plan: Plan, now: number): { subscription: Subscription; rollover: SubscriptionRollover | null } {
  let next = subscription;
  let rollover: SubscriptionRollover | null = null;
  if (subscription.status === 'active' && subscription.cancelAt !== null && subscription.cancelAt <= now) {
    next = { ...next, status: 'cancelled' };
    rollover = { id: next.id, status: 'cancelled', currentPeriodStart: next.currentPeriodStart, currentPeriodEnd: next.currentPeriodEnd, resetUsage: false };
  }
  if (next.status === 'active') {
    const period = currentPeriod(next.startsAt, plan.period, now);
    if (period.start !== next.currentPeriodStart) {
      next = { ...next, currentPeriodStart: period.start, currentPeriodEnd: period.end, usedNano: 0n, overageUsedNano: 0n };
      rollover = { id: next.id, status: 'active', currentPeriodStart: period.start, currentPeriodEnd: period.end, resetUsage: true };
    }
  }
  return { subscription: next, rollover };
}

/**
 * Plans one group-committed money transaction from what storage holds (`snapshot`, read under the accounts' locks)
 * and this instance's pools: settles finished requests first (which frees their holds), then grows holds for the
 * reservations that wait, then sizes each touched pool's lease. Pure: the caller writes the result and, once it
 * is committed, adopts the pools. Invariant kept for every pool: the holds of all instances never exceed its funds,
 * and nothing is charged beyond a pool's funds (what does not fit is a recorded shortfall).
 */
export function planBatch(input: {
  now: number;
  snapshot: MoneySnapshot;
  pools: ReadonlyMap<string, PoolState>;
  grows: readonly GrowRequest[];
  settlements: readonly Settlement[];
  lease: LeasePolicy;
}): BatchPlan {
  const { now, snapshot, lease } = input;
  const pools = new Map<string, PoolState>([...input.pools].map(([pool, state]) => [pool, { ...state }]));
  const poolOf = (pool: string, accountId: string): PoolState => {
    let state = pools.get(pool);
    if (state === undefined) {
      const known = input.pools.get(pool);
      state = known === undefined ? { accountId, held: 0n, inFlight: 0n, lastUsedAt: 0, unit: 0n } : { ...known };
      pools.set(pool, state);
    }
    return state;
  };
  // Holders' (batches') holds as this plan leaves them, and how far they moved from what storage sums per pool.
  const holders = new Map<string, Map<string, NanoUsd>>([...(snapshot.holderHolds ?? [])].map(([holder, held]) => [holder, new Map(held)]));
  const holderShift = new Map<string, NanoUsd>();
  const shiftHolders = (pool: string, amount: NanoUsd): void => {
    holderShift.set(pool, (holderShift.get(pool) ?? 0n) + amount);
  };
  const holderGrants: HolderGrant[] = [];
  const holderTakes: HolderTake[] = [];
  // Holds of the other instances and of holders: everything storage sums minus what this instance holds (its own rows).
  const othersOf = (pool: string): NanoUsd => atLeastZero((snapshot.heldByPool.get(pool) ?? 0n) + (holderShift.get(pool) ?? 0n) - (input.pools.get(pool)?.held ?? 0n));

  const rollovers: SubscriptionRollover[] = [];
  const subscriptions = new Map<string, { subscription: Subscription; plan: Plan }>();
  for (const [id, { subscription, plan }] of snapshot.subscriptions) {
    const state = currentState(subscription, plan, now);
    if (state.rollover !== null) rollovers.push(state.rollover);
    subscriptions.set(id, { subscription: state.subscription, plan });
  }
  // A key budget whose period has ended starts the current one from zero.
  const budgetRollovers: BudgetRollover[] = [];
  for (const [keyId, key] of snapshot.keys) {
    if (key.budget === null) continue;
    const start = budgetPeriodAt(key.budget.period, now).start;
    if (key.budget.periodStart !== start) budgetRollovers.push({ keyId, periodStart: start });
  }
  const projectBudgetRollovers: ProjectBudgetRollover[] = [];
  for (const [projectId, project] of snapshot.projects ?? []) {
    if (project.budget === null) continue;
    const start = budgetPeriodAt(project.budget.period, now).start;
    if (project.budget.periodStart !== start) projectBudgetRollovers.push({ projectId, periodStart: start });
  }
  const usable = (id: string): { subscription: Subscription; plan: Plan } | null => {
    const entry = subscriptions.get(id);
    return entry !== undefined && entry.subscription.status === 'active' && entry.subscription.startsAt <= now ? entry : null;
  };

  // What each pool has left in storage before any hold (null: not limited).
  const spent = new Map<string, NanoUsd>();
  const fundsOf = (pool: string): NanoUsd | null => {
    const separator = pool.indexOf(':');
    const kind = pool.slice(0, separator);
    const id = pool.slice(separator + 1);
    let funds: NanoUsd | null;
    if (kind === 'wallet') {
      const account = snapshot.accounts.get(id);
      funds = account === undefined ? 0n : account.balanceNano + account.creditLineNano;
    } else if (kind === 'key') {
      const key = snapshot.keys.get(id);
      funds = key === undefined || key.quotaNano === null ? null : key.quotaNano - key.spentNano;
    } else if (kind === 'budget') {
      const budget = snapshot.keys.get(id)?.budget ?? null;
      funds = budget === null ? null : budget.limitNano - budgetSpentAt(budget, now);
    } else if (kind === 'project') {
      const project = snapshot.projects?.get(id);
      funds = project === undefined || project.quotaNano === null ? null : project.quotaNano - project.spentNano;
    } else if (kind === 'pbudget') {
      const budget = snapshot.projects?.get(id)?.budget ?? null;
      funds = budget === null ? null : budget.limitNano - budgetSpentAt(budget, now);
    } else if (kind === 'customer') {
      const budget = snapshot.customerBudgets?.get(pool) ?? null;
      funds = budget === null ? null : budget.limitNano - budgetSpentAt(budget, now);
    } else if (kind === 'sub') {
      const entry = usable(id);
      funds = entry === null ? 0n : entry.plan.quotaNano - entry.subscription.usedNano;
    } else {
      const entry = usable(id);
      if (entry === null) funds = 0n;
      else if (entry.plan.overagePolicy === 'payg') funds = null;
      else if (entry.plan.overagePolicy === 'deny') funds = 0n;
      else funds = (entry.plan.overageLimitNano ?? 0n) - entry.subscription.overageUsedNano;
    }
    return funds === null ? null : funds - (spent.get(pool) ?? 0n);
  };
  /** What this instance may still take from a pool: funds minus others' holds minus its own requests in flight. */
  const roomOf = (pool: string, accountId: string): NanoUsd | null => {
    const funds = fundsOf(pool);
    return funds === null ? null : atLeastZero(funds - othersOf(pool) - poolOf(pool, accountId).inFlight);
  };
  const fits = (pool: string, accountId: string, amount: NanoUsd): boolean => {
    const room = roomOf(pool, accountId);
    return room === null || room >= amount;
  };
  const capTo = (amount: NanoUsd, room: NanoUsd | null): NanoUsd => (room === null ? amount : minimum(amount, room));
  // What the settlement being planned took from each pool (for the holder it is charged against).
  let takenHere = new Map<string, NanoUsd>();
  const take = (pool: string, accountId: string, amount: NanoUsd): void => {
    if (amount <= 0n) return;
    poolOf(pool, accountId);
    spent.set(pool, (spent.get(pool) ?? 0n) + amount);
    takenHere.set(pool, (takenHere.get(pool) ?? 0n) + amount);
  };

  // 1. Settlements: release each reservation, then charge its real cost to what the pools allow. One charged against a
  // holder's hold may use all of that hold; the hold then keeps what the charge did not take from each of its pools.
  const usages: SettledUsage[] = [];
  for (const { reservation, costNano, requestId, createdAt } of input.settlements) {
    for (const [pool, amount] of poolsOf(reservation)) poolOf(pool, reservation.accountId).inFlight -= amount;
    const holder = reservation.holder === undefined ? undefined : holders.get(reservation.holder);
    for (const [pool, amount] of holder ?? []) shiftHolders(pool, -amount);
    takenHere = new Map();
    const { accountId, keyId } = reservation;
    let total = costNano;
    if (reservation.keyCapped) total = capTo(total, roomOf(keyPool(keyId), accountId));
    if (reservation.keyBudgeted) total = capTo(total, roomOf(budgetPool(keyId), accountId));
    const project = reservation.project ?? null;
    if (project?.capped === true) total = capTo(total, roomOf(projectPool(project.id), accountId));
    if (project?.budgeted === true) total = capTo(total, roomOf(projectBudgetPool(project.id), accountId));
    const customer = customerPoolOf(reservation);
    const customerBudget = customer === null ? null : snapshot.customerBudgets?.get(customer) ?? null;
    if (customer !== null) total = capTo(total, roomOf(customer, accountId));
    const subscriptionId = reservation.subscriptionId ?? reservation.candidateSubscriptions.find((id) => usable(id) !== null) ?? null;
    const governing = subscriptionId === null ? null : usable(subscriptionId);
    let fromSubscription = 0n;
    if (subscriptionId !== null && governing !== null) fromSubscription = capTo(total, roomOf(subscriptionPool(subscriptionId), accountId));
    let rest = total - fromSubscription;
    let overage = 0n;
    if (governing !== null && subscriptionId !== null && rest > 0n) {
      if (governing.plan.overagePolicy === 'deny') rest = 0n;
      else if (governing.plan.overagePolicy === 'limit') rest = capTo(rest, roomOf(overagePool(subscriptionId), accountId));
    }
    const fromWallet = capTo(rest, roomOf(walletPool(accountId), accountId));
    if (governing !== null && subscriptionId !== null && governing.plan.overagePolicy === 'limit') overage = fromWallet;
    const charged = fromSubscription + fromWallet;
    take(walletPool(accountId), accountId, fromWallet);
    if (reservation.keyCapped) take(keyPool(keyId), accountId, charged);
    if (reservation.keyBudgeted) take(budgetPool(keyId), accountId, charged);
    if (project?.capped === true) take(projectPool(project.id), accountId, charged);
    if (project?.budgeted === true) take(projectBudgetPool(project.id), accountId, charged);
    if (customer !== null) take(customer, accountId, charged);
    if (subscriptionId !== null) {
      take(subscriptionPool(subscriptionId), accountId, fromSubscription);
      take(overagePool(subscriptionId), accountId, overage);
    }
    usages.push({
      entryId: reservation.entryId,
      accountId,
      keyId,
      projectId: project?.id ?? null,
      requestId,
      walletNano: fromWallet,
      shortfallNano: costNano - charged,
      subscriptionId: fromSubscription > 0n || overage > 0n ? subscriptionId : null,
      periodStart: governing === null ? null : governing.subscription.currentPeriodStart,
      subscriptionNano: fromSubscription,
      overageNano: overage,
      createdAt,
      customer: customerBudget === null || reservation.customer == null ? null : { customer: reservation.customer, periodStart: budgetPeriodAt(customerBudget.period, now).start },
    });
    for (const [pool, amount] of holder ?? []) {
      const taken = minimum(amount, takenHere.get(pool) ?? 0n);
      (holder as Map<string, NanoUsd>).set(pool, amount - taken);
      shiftHolders(pool, amount - taken);
      if (taken > 0n) holderTakes.push({ entryId: reservation.entryId, holder: reservation.holder as string, pool, takenNano: taken });
    }
  }

  // 2. Reservations that wait: all or nothing, subscription quota first, then the plan's overage policy.
  const outcomes: GrowOutcome[] = [];
  for (const grow of input.grows) {
    const { accountId, amountNano: amount } = grow;
    if (grow.keyCapped && !fits(keyPool(grow.keyId), accountId, amount)) {
      outcomes.push({ refused: 'quota_exhausted', pool: 'key', remainingNano: roomOf(keyPool(grow.keyId), accountId) ?? 0n });
      continue;
    }
    const budget = grow.keyBudgeted ? snapshot.keys.get(grow.keyId)?.budget ?? null : null;
    if (budget !== null && !fits(budgetPool(grow.keyId), accountId, amount)) {
      const remainingNano = roomOf(budgetPool(grow.keyId), accountId) ?? 0n;
      outcomes.push({ refused: 'quota_exhausted', pool: 'budget', remainingNano, retryAfterMs: budgetPeriodAt(budget.period, now).end - now });
      continue;
    }
    const project = grow.project ?? null;
    if (project?.capped === true && !fits(projectPool(project.id), accountId, amount)) {
      outcomes.push({ refused: 'quota_exhausted', pool: 'project', remainingNano: roomOf(projectPool(project.id), accountId) ?? 0n });
      continue;
    }
    const projectBudget = project?.budgeted === true ? snapshot.projects?.get(project.id)?.budget ?? null : null;
    if (project !== null && projectBudget !== null && !fits(projectBudgetPool(project.id), accountId, amount)) {
      const remainingNano = roomOf(projectBudgetPool(project.id), accountId) ?? 0n;
      outcomes.push({ refused: 'quota_exhausted', pool: 'projectBudget', remainingNano, retryAfterMs: budgetPeriodAt(projectBudget.period, now).end - now });
      continue;
    }
    const customer = grow.customerBudgeted === true && grow.customer != null ? customerPool(accountId, grow.customer) : null;
    const customerBudget = customer === null ? null : snapshot.customerBudgets?.get(customer) ?? null;
    if (customer !== null && customerBudget !== null && !fits(customer, accountId, amount)) {
      outcomes.push({
        refused: 'quota_exhausted',
        pool: 'customer',
        remainingNano: roomOf(customer, accountId) ?? 0n,
        retryAfterMs: budgetPeriodAt(customerBudget.period, now).end - now,
        customer: { customer: grow.customer as string, budget: customerBudget },
      });
      continue;
    }
    const parts: ReservationParts = {
      wallet: 0n, subscription: 0n, overage: 0n, key: grow.keyCapped ? amount : 0n, budget: grow.keyBudgeted ? amount : 0n, customer: customer === null ? 0n : amount,
      ...(project === null ? {} : { project: project.capped ? amount : 0n, projectBudget: project.budgeted ? amount : 0n }),
    };
    const active = grow.candidateSubscriptions.filter((id) => usable(id) !== null);
    let subscriptionId: string | null = active.find((id) => fits(subscriptionPool(id), accountId, amount)) ?? null;
    let refused: GrowOutcome | null = null;
    if (subscriptionId !== null) {
      parts.subscription = amount;
    } else {
      subscriptionId = active.find((id) => (roomOf(subscriptionPool(id), accountId) ?? 0n) > 0n) ?? active[0] ?? null;
      const governing = subscriptionId === null ? null : usable(subscriptionId);
      if (subscriptionId !== null) parts.subscription = roomOf(subscriptionPool(subscriptionId), accountId) ?? 0n;
      const rest = amount - parts.subscription;
      parts.wallet = rest;
      if (governing !== null && subscriptionId !== null) {
        const quotaRefusal: SubscriptionRefusal = { refused: 'quota_exhausted', resetsInMs: governing.subscription.currentPeriodEnd - now };
        if (governing.plan.overagePolicy === 'deny') refused = quotaRefusal;
        else if (governing.plan.overagePolicy === 'limit') {
          if (!fits(overagePool(subscriptionId), accountId, rest)) refused = quotaRefusal;
          parts.overage = rest;
        }
      }
      if (refused === null && !fits(walletPool(accountId), accountId, rest)) refused = { refused: 'insufficient_balance' };
    }
    if (refused !== null) {
      outcomes.push(refused);
      continue;
    }
    const reservation: Reservation = {
      entryId: grow.entryId,
      accountId,
      keyId: grow.keyId,
      keyCapped: grow.keyCapped,
      keyBudgeted: grow.keyBudgeted,
      ...(customer === null ? {} : { customer: grow.customer, customerBudgeted: true }),
      subscriptionId,
      candidateSubscriptions: grow.candidateSubscriptions,
      amountNano: amount,
      parts,
      ...(project === null ? {} : { project }),
    };
    if (grow.probe === true) {
      outcomes.push({ reservation });
      continue;
    }
    if (grow.holder !== undefined) {
      // A holder's hold is its own rows, apart from this instance's pools.
      const held = holders.get(grow.holder) ?? new Map<string, NanoUsd>();
      for (const [pool, part] of poolsOf(reservation)) {
        held.set(pool, (held.get(pool) ?? 0n) + part);
        shiftHolders(pool, part);
        holderGrants.push({ holder: grow.holder, pool, accountId, heldNano: part });
      }
      holders.set(grow.holder, held);
      outcomes.push({ reservation: { ...reservation, holder: grow.holder } });
      continue;
    }
    for (const [pool, part] of poolsOf(reservation)) {
      const state = poolOf(pool, accountId);
      state.inFlight += part;
      state.lastUsedAt = now;
      if (part > state.unit) state.unit = part;
    }
    outcomes.push({ reservation });
  }

  // 3. Size each touched pool's hold: its requests in flight plus a lease when funds are plentiful and it is busy.
  for (const [pool, state] of pools) {
    const funds = fundsOf(pool);
    if (funds === null) {
      state.held = 0n;
      continue;
    }
    const spare = atLeastZero(funds - othersOf(pool) - state.inFlight);
    let headroom = 0n;
    if (now - state.lastUsedAt < lease.idleMs && state.unit > 0n && spare >= state.unit * lease.scarcityFactor) {
      headroom = minimum(lease.capNano, spare / lease.shareDivisor);
    }
    state.held = state.inFlight + headroom;
  }

  const subscriptionFacts = new Map<string, SubscriptionFacts>();
  for (const [id, entry] of subscriptions) {
    const room = usable(id) === null ? 0n : roomOf(subscriptionPool(id), entry.subscription.accountId) ?? 0n;
    subscriptionFacts.set(id, { policy: entry.plan.overagePolicy, exhaustedUntil: room > 0n ? -1 : entry.subscription.currentPeriodEnd });
  }
  return { rollovers, budgetRollovers, projectBudgetRollovers, usages, pools, outcomes, subscriptionFacts, holderGrants, holderTakes };
}
