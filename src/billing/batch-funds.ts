import type { MoneySnapshot, SubscriptionRollover } from '../storage/storage.js';
import type { HolderGrant, HolderTake } from '../storage/money-contracts.js';
import type { NanoUsd, Plan, Subscription } from '../domain/records.js';
import { budgetSpentAt } from '../domain/budget-period.js';
import { atLeastZero, minimum, poolsOf, type PoolState, type Reservation } from './money-pools.js';
import { currentPeriod } from './subscription-period.js';

/** A subscription with its plan, as the batch sees it. */
export interface SubscriptionEntry {
  subscription: Subscription;
  plan: Plan;
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

/** At most `amount`, and no more than `room` (null: not limited). */
export function capTo(amount: NanoUsd, room: NanoUsd | null): NanoUsd {
  return room === null ? amount : minimum(amount, room);
}

/**
 * The funds of one planned money transaction: what storage holds (`snapshot`, read under the accounts' locks), what
 * the batch has charged so far, this instance's pools as the batch leaves them, and the holders' (batches') holds.
 * Settling and growing ask it what a pool has room for and tell it what they take.
 */
export class BatchFunds {
  readonly pools: Map<string, PoolState>;
  /** Subscriptions rolled to `now`, and the rollovers that took them there. */
  readonly subscriptions = new Map<string, SubscriptionEntry>();
  readonly rollovers: SubscriptionRollover[] = [];
  /** Holds made for holders (batches). */
  readonly holderGrants: HolderGrant[] = [];
  /** What settlements charged against holders' holds, pool by pool. */
  readonly holderTakes: HolderTake[] = [];
  /** Holders' holds as this plan leaves them, and how far they moved from what storage sums per pool. */
  readonly #holders: Map<string, Map<string, NanoUsd>>;
  readonly #holderShift = new Map<string, NanoUsd>();
  /** What the batch charged each pool so far. */
  readonly #spent = new Map<string, NanoUsd>();
  /** What the settlement being planned took from each pool (for the holder it is charged against). */
  #takenHere = new Map<string, NanoUsd>();

  constructor(
    readonly snapshot: MoneySnapshot,
    readonly now: number,
    /** This instance's pools before the batch (its own hold rows). */
    private readonly before: ReadonlyMap<string, PoolState>,
  ) {
    this.pools = new Map([...before].map(([pool, state]) => [pool, { ...state }]));
    this.#holders = new Map([...(snapshot.holderHolds ?? [])].map(([holder, held]) => [holder, new Map(held)]));
    for (const [id, { subscription, plan }] of snapshot.subscriptions) {
      const state = currentState(subscription, plan, now);
      if (state.rollover !== null) this.rollovers.push(state.rollover);
      this.subscriptions.set(id, { subscription: state.subscription, plan });
    }
  }

  /** This instance's state of a pool in the batch (created at nothing held when new). */
  poolOf(pool: string, accountId: string): PoolState {
    let state = this.pools.get(pool);
    if (state === undefined) {
      const known = this.before.get(pool);
      state = known === undefined ? { accountId, held: 0n, inFlight: 0n, lastUsedAt: 0, unit: 0n } : { ...known };
      this.pools.set(pool, state);
    }
    return state;
  }

  /** Holds of the other instances and of holders: everything storage sums minus what this instance holds (its own rows). */
  othersOf(pool: string): NanoUsd {
    return atLeastZero((this.snapshot.heldByPool.get(pool) ?? 0n) + (this.#holderShift.get(pool) ?? 0n) - (this.before.get(pool)?.held ?? 0n));
  }

  /** The subscription when it can pay now (active and started), else null. */
  usable(id: string): SubscriptionEntry | null {
    const entry = this.subscriptions.get(id);
    return entry !== undefined && entry.subscription.status === 'active' && entry.subscription.startsAt <= this.now ? entry : null;
  }

  /** What the pool has left in storage before any hold, less what the batch charged it (null: not limited). */
  fundsOf(pool: string): NanoUsd | null {
    const funds = this.#storedFunds(pool);
    return funds === null ? null : funds - (this.#spent.get(pool) ?? 0n);
  }

  #storedFunds(pool: string): NanoUsd | null {
    const { snapshot, now } = this;
    const separator = pool.indexOf(':');
    const kind = pool.slice(0, separator);
    const id = pool.slice(separator + 1);
    if (kind === 'wallet') {
      const account = snapshot.accounts.get(id);
      return account === undefined ? 0n : account.balanceNano + account.creditLineNano;
    }
    if (kind === 'key') {
      const key = snapshot.keys.get(id);
      return key === undefined || key.quotaNano === null ? null : key.quotaNano - key.spentNano;
    }
    if (kind === 'budget') {
      const budget = snapshot.keys.get(id)?.budget ?? null;
      return budget === null ? null : budget.limitNano - budgetSpentAt(budget, now);
    }
    if (kind === 'project') {
      const project = snapshot.projects?.get(id);
      return project === undefined || project.quotaNano === null ? null : project.quotaNano - project.spentNano;
    }
    if (kind === 'pbudget') {
      const budget = snapshot.projects?.get(id)?.budget ?? null;
      return budget === null ? null : budget.limitNano - budgetSpentAt(budget, now);
    }
    if (kind === 'customer') {
      const budget = snapshot.customerBudgets?.get(pool) ?? null;
      return budget === null ? null : budget.limitNano - budgetSpentAt(budget, now);
    }
    const entry = this.usable(id);
    if (kind === 'sub') return entry === null ? 0n : entry.plan.quotaNano - entry.subscription.usedNano;
    if (entry === null) return 0n;
    if (entry.plan.overagePolicy === 'payg') return null;
    if (entry.plan.overagePolicy === 'deny') return 0n;
    return (entry.plan.overageLimitNano ?? 0n) - entry.subscription.overageUsedNano;
  }

  /** What this instance may still take from a pool: funds minus others' holds minus its own requests in flight. */
  roomOf(pool: string, accountId: string): NanoUsd | null {
    const funds = this.fundsOf(pool);
    return funds === null ? null : atLeastZero(funds - this.othersOf(pool) - this.poolOf(pool, accountId).inFlight);
  }

  fits(pool: string, accountId: string, amount: NanoUsd): boolean {
    const room = this.roomOf(pool, accountId);
    return room === null || room >= amount;
  }

  /** Charges `amount` to a pool (for the settlement being planned). */
  take(pool: string, accountId: string, amount: NanoUsd): void {
    if (amount <= 0n) return;
    this.poolOf(pool, accountId);
    this.#spent.set(pool, (this.#spent.get(pool) ?? 0n) + amount);
    this.#takenHere.set(pool, (this.#takenHere.get(pool) ?? 0n) + amount);
  }

  /**
   * A settlement starts: its reservation's parts leave this instance's requests in flight, and the hold it is charged
   * against (if any) is counted as free for it. Returns that hold.
   */
  startSettlement(reservation: Reservation): Map<string, NanoUsd> | undefined {
    for (const [pool, amount] of poolsOf(reservation)) this.poolOf(pool, reservation.accountId).inFlight -= amount;
    const holder = reservation.holder === undefined ? undefined : this.#holders.get(reservation.holder);
    for (const [pool, amount] of holder ?? []) this.#shiftHolders(pool, -amount);
    this.#takenHere = new Map();
    return holder;
  }

  /** The settlement charged against `held` is planned: the hold keeps what the charge did not take from each pool. */
  keepHolderRest(reservation: Reservation, held: Map<string, NanoUsd>): void {
    for (const [pool, amount] of held) {
      const taken = minimum(amount, this.#takenHere.get(pool) ?? 0n);
      held.set(pool, amount - taken);
      this.#shiftHolders(pool, amount - taken);
      if (taken > 0n) this.holderTakes.push({ entryId: reservation.entryId, holder: reservation.holder as string, pool, takenNano: taken });
    }
  }

  /** Holds a granted reservation for a holder: its own rows, apart from this instance's pools. */
  holdFor(holder: string, reservation: Reservation): void {
    const held = this.#holders.get(holder) ?? new Map<string, NanoUsd>();
    for (const [pool, part] of poolsOf(reservation)) {
      held.set(pool, (held.get(pool) ?? 0n) + part);
      this.#shiftHolders(pool, part);
      this.holderGrants.push({ holder, pool, accountId: reservation.accountId, heldNano: part });
    }
    this.#holders.set(holder, held);
  }

  #shiftHolders(pool: string, amount: NanoUsd): void {
    this.#holderShift.set(pool, (this.#holderShift.get(pool) ?? 0n) + amount);
  }
}
