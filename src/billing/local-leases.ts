import { GatewayError } from '../errors/gateway-error.js';
import type { NanoUsd } from '../domain/records.js';
import type { ReserveRequest } from './ledger-requests.js';
import type { BatchPlan } from './money-batch.js';
import type { MoneyScope } from './money-scope.js';
import { subscriptionQuotaRefusal } from './money-refusals.js';
import {
  NO_PARTS, budgetPool, customerPoolPrefix, keyPool, overagePool, poolsOf, subscriptionPool, walletPool, type PoolState,
  type Reservation, type ReservationParts, type SubscriptionFacts,
} from './money-pools.js';

/** What a committed transaction changed in a batch of pools, for `adopt`. */
export interface ClaimedPools {
  touched: ReadonlyMap<string, unknown>;
  /** The pools marked stale when the transaction started: those it recomputed are fresh once it commits. */
  staleBefore: ReadonlySet<string>;
}

/**
 * What this instance holds from each pool of funds (its leases) and what it knows of subscriptions' quotas: the
 * reservations it can give without a storage round trip. A pool a transaction is recomputing (busy) or whose funds
 * changed outside the ledger (stale) gives nothing locally until storage has decided again.
 */
export class LocalLeases {
  readonly #pools = new Map<string, PoolState>();
  readonly #facts = new Map<string, SubscriptionFacts & { knownAt: number }>();
  /** Pools the running transaction recomputes: no local reservation from them until it commits. */
  readonly #busy = new Set<string>();
  /** Pools whose funds changed outside this ledger: storage decides their next reservation. */
  readonly #stale = new Set<string>();

  constructor(private readonly factsTtlMs: number) {}

  /** The reservation the leases can give, when every pool involved has room (null: storage must decide). */
  plan(request: ReserveRequest, now: number): Reservation | GatewayError | null {
    const amount = request.amountNano;
    const project = request.project ?? null;
    const customerBudgeted = request.customerBudgeted === true && request.customer != null;
    const parts: ReservationParts = {
      ...NO_PARTS, key: request.keyCapped ? amount : 0n, budget: request.keyBudgeted ? amount : 0n, customer: customerBudgeted ? amount : 0n,
      ...(project === null ? {} : { project: project.capped ? amount : 0n, projectBudget: project.budgeted ? amount : 0n }),
    };
    const subscription = this.#subscriptionPart(request, parts, now);
    if (subscription === null || subscription instanceof GatewayError) return subscription;
    const reservation: Reservation = {
      entryId: request.entryId,
      accountId: request.accountId,
      keyId: request.keyId,
      keyCapped: request.keyCapped,
      keyBudgeted: request.keyBudgeted,
      ...(customerBudgeted ? { customer: request.customer, customerBudgeted: true } : {}),
      subscriptionId: subscription.id,
      candidateSubscriptions: request.subscriptions,
      amountNano: amount,
      parts,
      ...(project === null ? {} : { project }),
    };
    for (const [pool, part] of poolsOf(reservation)) if (!this.#hasRoom(pool, part)) return null;
    return reservation;
  }

  /**
   * Fills the subscription's and the wallet's parts: a subscription whose lease has room pays it all; when every
   * subscription's quota is known to be used up, the overage policy decides locally. Returns the subscription the
   * reservation names, the refusal, or null when storage must decide.
   */
  #subscriptionPart(request: ReserveRequest, parts: ReservationParts, now: number): { id: string | null } | GatewayError | null {
    const amount = request.amountNano;
    if (request.subscriptions.length === 0) {
      parts.wallet = amount;
      return { id: null };
    }
    const subscriptionId = request.subscriptions.find((id) => this.#hasRoom(subscriptionPool(id), amount)) ?? null;
    if (subscriptionId !== null) {
      parts.subscription = amount;
      return { id: subscriptionId };
    }
    const facts = request.subscriptions.map((id) => this.#facts.get(id));
    const allExhausted = facts.every((fact) => fact !== undefined && fact.exhaustedUntil > now && now - fact.knownAt < this.factsTtlMs);
    const first = facts[0];
    if (!allExhausted || first === undefined) return null;
    if (first.policy === 'deny') return subscriptionQuotaRefusal(Math.min(...facts.map((fact) => (fact as SubscriptionFacts).exhaustedUntil)) - now);
    parts.wallet = amount;
    if (first.policy === 'limit') parts.overage = amount;
    return { id: request.subscriptions[0] ?? null };
  }

  #hasRoom(pool: string, amount: NanoUsd): boolean {
    if (this.#busy.has(pool) || this.#stale.has(pool)) return false;
    const state = this.#pools.get(pool);
    return state !== undefined && state.held - state.inFlight >= amount;
  }

  /** A reservation the leases gave is in flight from now. */
  take(reservation: Reservation, now: number): void {
    for (const [pool, part] of poolsOf(reservation)) {
      const state = this.#pools.get(pool) as PoolState;
      state.inFlight += part;
      state.lastUsedAt = now;
    }
  }

  /** Whether some lease has sat idle beyond its requests in flight for `idleMs` (a transaction gives it back). */
  hasIdleLease(now: number, idleMs: number): boolean {
    for (const state of this.#pools.values()) if (state.held > state.inFlight && now - state.lastUsedAt >= idleMs) return true;
    return false;
  }

  /**
   * A transaction starts over `scope`: idle leases and stale pools join it, and its pools give nothing locally
   * until `release`. Returns what `adopt` needs once it commits.
   */
  claim(scope: MoneyScope, now: number, idleMs: number): ClaimedPools {
    for (const [pool, state] of this.#pools) {
      if ((state.held > state.inFlight && now - state.lastUsedAt >= idleMs) || this.#stale.has(pool)) scope.addPool(pool, state.accountId);
    }
    for (const pool of scope.pools.keys()) this.#busy.add(pool);
    return { touched: scope.pools, staleBefore: new Set(this.#stale) };
  }

  /** The current states of the claimed pools (what the plan starts from). */
  statesOf(claimed: ClaimedPools): Map<string, PoolState> {
    const current = new Map<string, PoolState>();
    for (const pool of claimed.touched.keys()) {
      const state = this.#pools.get(pool);
      if (state !== undefined) current.set(pool, state);
    }
    return current;
  }

  /** Committed: the planned pools replace the leases (no local reservation touched them meanwhile: they were busy). */
  adopt(claimed: ClaimedPools, plan: BatchPlan, knownAt: number): void {
    for (const [pool, state] of plan.pools) {
      if (state.held === 0n && state.inFlight === 0n) this.#pools.delete(pool);
      else this.#pools.set(pool, state);
    }
    for (const pool of claimed.staleBefore) if (claimed.touched.has(pool)) this.#stale.delete(pool);
    for (const [id, facts] of plan.subscriptionFacts) this.#facts.set(id, { ...facts, knownAt });
  }

  /** The transaction over the claimed pools ended (committed or not). */
  release(claimed: ClaimedPools): void {
    for (const pool of claimed.touched.keys()) this.#busy.delete(pool);
  }

  /** What this instance's requests in flight take from each pool of the account. */
  inFlightOf(accountId: string): Map<string, NanoUsd> {
    const inFlight = new Map<string, NanoUsd>();
    for (const [pool, state] of this.#pools) if (state.accountId === accountId && state.inFlight > 0n) inFlight.set(pool, state.inFlight);
    return inFlight;
  }

  /** Marks the account's wallet lease idle when it holds more than its requests in flight; false when it does not. */
  idleWallet(accountId: string): boolean {
    const state = this.#pools.get(walletPool(accountId));
    if (state === undefined || state.held <= state.inFlight) return false;
    // Idle from now on: the next transaction sizes the pool to its requests in flight.
    state.lastUsedAt = 0;
    return true;
  }

  forgetBalance(accountId: string): void {
    this.#stale.add(walletPool(accountId));
    // A project's cap or budget may have changed too (projects change through their account's invalidation).
    for (const [pool, state] of this.#pools) {
      if (state.accountId === accountId && (pool.startsWith('project:') || pool.startsWith('pbudget:'))) this.#stale.add(pool);
    }
  }

  forgetKey(keyId: string): void {
    this.#stale.add(keyPool(keyId));
    this.#stale.add(budgetPool(keyId));
  }

  forgetCustomerBudgets(accountId: string): void {
    const prefix = customerPoolPrefix(accountId);
    for (const pool of this.#pools.keys()) if (pool.startsWith(prefix)) this.#stale.add(pool);
  }

  forgetSubscription(subscriptionId: string): void {
    this.#facts.delete(subscriptionId);
    this.#stale.add(subscriptionPool(subscriptionId));
    this.#stale.add(overagePool(subscriptionId));
  }

  /** Every lease, as held and in flight. */
  view(): Map<string, { held: NanoUsd; inFlight: NanoUsd }> {
    return new Map([...this.#pools].map(([pool, state]) => [pool, { held: state.held, inFlight: state.inFlight }]));
  }

  clear(): void {
    this.#pools.clear();
  }
}
