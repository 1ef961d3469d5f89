import type { BudgetRollover, MoneySnapshot, ProjectBudgetRollover, SettledUsage, SubscriptionRollover } from '../storage/storage.js';
import type { HolderGrant, HolderTake } from '../storage/money-contracts.js';
import type { NanoUsd } from '../domain/records.js';
import { budgetPeriodAt } from '../domain/budget-period.js';
import { atLeastZero, minimum, subscriptionPool, type PoolState, type SubscriptionFacts } from './money-pools.js';
import { BatchFunds } from './batch-funds.js';
import { growInBatch, type GrowOutcome, type GrowRequest } from './batch-growing.js';
import { settleInBatch, type Settlement } from './batch-settling.js';

export interface LeasePolicy {
  /** Most an instance holds beyond its requests in flight, per pool (raised by `unitsAhead`, up to `ceilingNano`). */
  capNano: NanoUsd;
  /**
   * A busy pool's lease covers at least this many of its usual reservation (when the share and scarcity rules allow):
   * under load a lease of a fixed amount lasts only a fraction of a second, and each time it runs out a reservation
   * waits for a transaction. Absent or 0: `capNano` alone.
   */
  unitsAhead?: bigint;
  /** Most a lease raised by `unitsAhead` reaches, per pool. */
  ceilingNano?: NanoUsd;
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

/** The most a pool whose usual reservation is `unit` may lease (before the share of the free funds). */
export function leaseCap(lease: LeasePolicy, unit: NanoUsd): NanoUsd {
  const ahead = unit * (lease.unitsAhead ?? 0n);
  if (ahead <= lease.capNano) return lease.capNano;
  return lease.ceilingNano === undefined ? ahead : minimum(ahead, lease.ceilingNano > lease.capNano ? lease.ceilingNano : lease.capNano);
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
  const { now, snapshot } = input;
  const funds = new BatchFunds(snapshot, now, input.pools);
  const { budgetRollovers, projectBudgetRollovers } = budgetRolloversAt(snapshot, now);
  // 1. Settlements first: they free their holds.
  const usages = input.settlements.map((settlement) => settleInBatch(funds, settlement));
  // 2. Reservations that wait, in order.
  const outcomes = input.grows.map((grow) => growInBatch(funds, grow));
  // 3. Each touched pool's hold.
  sizeHolds(funds, input.lease);
  return {
    rollovers: funds.rollovers, budgetRollovers, projectBudgetRollovers, usages, pools: funds.pools, outcomes,
    subscriptionFacts: subscriptionFactsOf(funds), holderGrants: funds.holderGrants, holderTakes: funds.holderTakes,
  };
}

/** Key and project budgets whose period has ended start the current one from zero. */
function budgetRolloversAt(snapshot: MoneySnapshot, now: number): { budgetRollovers: BudgetRollover[]; projectBudgetRollovers: ProjectBudgetRollover[] } {
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
  return { budgetRollovers, projectBudgetRollovers };
}

/** Sizes each touched pool's hold: its requests in flight plus a lease when funds are plentiful and it is busy. */
function sizeHolds(funds: BatchFunds, lease: LeasePolicy): void {
  for (const [pool, state] of funds.pools) {
    const available = funds.fundsOf(pool);
    if (available === null) {
      state.held = 0n;
      continue;
    }
    const spare = atLeastZero(available - funds.othersOf(pool) - state.inFlight);
    let headroom = 0n;
    if (funds.now - state.lastUsedAt < lease.idleMs && state.unit > 0n && spare >= state.unit * lease.scarcityFactor) {
      headroom = minimum(leaseCap(lease, state.unit), spare / lease.shareDivisor);
    }
    state.held = state.inFlight + headroom;
  }
}

/** Each subscription's overage policy and, when its quota has no room left, until when (-1: it has room). */
function subscriptionFactsOf(funds: BatchFunds): Map<string, SubscriptionFacts> {
  const facts = new Map<string, SubscriptionFacts>();
  for (const [id, entry] of funds.subscriptions) {
    const room = funds.usable(id) === null ? 0n : funds.roomOf(subscriptionPool(id), entry.subscription.accountId) ?? 0n;
    facts.set(id, { policy: entry.plan.overagePolicy, exhaustedUntil: room > 0n ? -1 : entry.subscription.currentPeriodEnd });
  }
  return facts;
}
