import type { NanoUsd, OveragePolicy } from '../domain/records.js';
import { HOLDER_PREFIX } from '../domain/batches.js';
import { customerPool } from '../domain/customer-records.js';

/**
 * A pool is one limited source of funds; every reservation takes from one or more of them at once:
 * - `wallet:<account>`  the account balance plus its credit line;
 * - `key:<key>`         what is left of a key's quota cap (only keys with a cap);
 * - `budget:<key>`      what is left of a key's budget in the current UTC day, week or month (only keys with one);
 * - `sub:<id>`          what is left of a subscription's quota in the current period;
 * - `overage:<id>`      what is left of the overage allowance of a `limit` plan in the current period;
 * - `project:<id>`      what is left of a project's quota cap (only projects with a cap);
 * - `pbudget:<id>`      what is left of a project's budget in the current UTC day, week or month (only projects with one);
 * - `customer:<account>:<customer>`  what is left of an end customer's budget (set by the account) in the current
 *                       UTC day, week or month (only customers with one).
 */
export const walletPool = (accountId: string): string => `wallet:${accountId}`;
export const keyPool = (keyId: string): string => `key:${keyId}`;
export const budgetPool = (keyId: string): string => `budget:${keyId}`;
export const subscriptionPool = (subscriptionId: string): string => `sub:${subscriptionId}`;
export const overagePool = (subscriptionId: string): string => `overage:${subscriptionId}`;
export const projectPool = (projectId: string): string => `project:${projectId}`;
export const projectBudgetPool = (projectId: string): string => `pbudget:${projectId}`;

/** The project a reservation also takes from, and which of its pools take part (as a key's cap and budget do). */
export interface ProjectFunds {
  id: string;
  capped: boolean;
  budgeted: boolean;
}
export { customerPool };
/** Prefix of every customer pool of the account. */
export const customerPoolPrefix = (accountId: string): string => `customer:${accountId}:`;

/** How much of one reservation each pool holds. `key` and `budget` are the whole amount when the key has a cap, a budget. */
export interface ReservationParts {
  wallet: NanoUsd;
  subscription: NanoUsd;
  overage: NanoUsd;
  key: NanoUsd;
  budget: NanoUsd;
  /** The whole amount when the reservation's project has a cap, a budget (absent: no project pool takes part). */
  project?: NanoUsd;
  projectBudget?: NanoUsd;
  /** The whole amount when the end customer has a budget (absent: nothing). */
  customer?: NanoUsd;
}

export const NO_PARTS: ReservationParts = { wallet: 0n, subscription: 0n, overage: 0n, key: 0n, budget: 0n, customer: 0n };

/** Whose pools a request takes from besides the wallet's: the key's and the end customer's, when they have limits. */
export interface PoolsTakingPart {
  accountId: string;
  keyId: string;
  /** The key has a quota cap: its pool takes part. */
  keyCapped: boolean;
  /** The key has a period budget: its pool takes part. */
  keyBudgeted: boolean;
  /** The end customer the request named (null or absent: none). */
  customer?: string | null;
  /** The account gives that customer a budget: its pool takes part. */
  customerBudgeted?: boolean;
}

/** An amount of money held for one request from admission until it is settled or released. */
export interface Reservation extends PoolsTakingPart {
  /** Also the id of the ledger entry (and subscription usage row) that settles it. */
  entryId: string;
  /** The subscription whose quota pays (first), or null: the wallet alone. */
  subscriptionId: string | null;
  /** The subscriptions the account may pay with, in order, for the settlement's overage policy. */
  candidateSubscriptions: readonly string[];
  amountNano: NanoUsd;
  parts: ReservationParts;
  /** The key's project when it has a cap or budget of its own (absent or null: none takes part). */
  project?: ProjectFunds | null;
  /**
   * The durable hold this reservation belongs to (a batch's; see `batchHolder`), or absent: held by this instance.
   * A reservation made with a holder is that hold; a settlement of a reservation with a holder (and no parts of its
   * own) is charged against the hold, which shrinks by what the charge took from each of its pools.
   */
  holder?: string;
}

/**
 * The holder of a batch's hold: its rows in `money_holds` stand beside the instances' (every reservation counts them
 * against the pools' funds) but belong to no instance, so no restart or stale sweep releases them; only the batch's
 * end does (Ledger.releaseHolder).
 */
export const batchHolder = (batchId: string): string => `${HOLDER_PREFIX}${batchId}`;
export const isHolder = (holdId: string): boolean => holdId.startsWith(HOLDER_PREFIX);

/** One pool as this instance sees it: what it holds in storage and how much of that requests in flight use. */
export interface PoolState {
  accountId: string;
  held: NanoUsd;
  inFlight: NanoUsd;
  /** Last reservation taken from the pool (ms): idle pools give their lease back. */
  lastUsedAt: number;
  /** The largest recent reservation: the unit the lease is sized by. */
  unit: NanoUsd;
}

export interface SubscriptionFacts {
  policy: OveragePolicy;
  /** The period's quota is used up (no room left) until this time (the period's end), or -1 if not known to be. */
  exhaustedUntil: number;
}

/** The customer pool a reservation takes part in, or null. */
export function customerPoolOf(reservation: Pick<Reservation, 'accountId' | 'customer' | 'customerBudgeted'>): string | null {
  return reservation.customerBudgeted === true && reservation.customer != null ? customerPool(reservation.accountId, reservation.customer) : null;
}

export function poolsOf(reservation: Pick<Reservation, 'accountId' | 'keyId' | 'keyCapped' | 'keyBudgeted' | 'customer' | 'customerBudgeted' | 'subscriptionId' | 'parts' | 'project'>): Array<[string, NanoUsd]> {
  const pools: Array<[string, NanoUsd]> = [];
  if (reservation.parts.wallet > 0n) pools.push([walletPool(reservation.accountId), reservation.parts.wallet]);
  if (reservation.keyCapped && reservation.parts.key > 0n) pools.push([keyPool(reservation.keyId), reservation.parts.key]);
  if (reservation.keyBudgeted && reservation.parts.budget > 0n) pools.push([budgetPool(reservation.keyId), reservation.parts.budget]);
  const customer = customerPoolOf(reservation);
  if (customer !== null && reservation.parts.customer !== undefined && reservation.parts.customer > 0n) pools.push([customer, reservation.parts.customer]);
  if (reservation.subscriptionId !== null) {
    if (reservation.parts.subscription > 0n) pools.push([subscriptionPool(reservation.subscriptionId), reservation.parts.subscription]);
    if (reservation.parts.overage > 0n) pools.push([overagePool(reservation.subscriptionId), reservation.parts.overage]);
  }
  const project = reservation.project ?? null;
  if (project !== null) {
    if (project.capped && (reservation.parts.project ?? 0n) > 0n) pools.push([projectPool(project.id), reservation.parts.project ?? 0n]);
    if (project.budgeted && (reservation.parts.projectBudget ?? 0n) > 0n) pools.push([projectBudgetPool(project.id), reservation.parts.projectBudget ?? 0n]);
  }
  return pools;
}

export function minimum(...values: NanoUsd[]): NanoUsd {
  let result = values[0] ?? 0n;
  for (const value of values) if (value < result) result = value;
  return result;
}

export function atLeastZero(value: NanoUsd): NanoUsd {
  return value < 0n ? 0n : value;
}
