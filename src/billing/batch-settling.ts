import type { SettledUsage } from '../storage/storage.js';
import type { KeyBudget, NanoUsd } from '../domain/records.js';
import { budgetPeriodAt } from '../domain/budget-period.js';
import {
  budgetPool, customerPoolOf, keyPool, overagePool, projectBudgetPool, projectPool, subscriptionPool, walletPool, type Reservation,
} from './money-pools.js';
import { capTo, type BatchFunds, type SubscriptionEntry } from './batch-funds.js';

export interface Settlement {
  reservation: Reservation;
  costNano: NanoUsd;
  requestId: string;
  createdAt: number;
  /** The request's stream checkpoint may be stored: the transaction deletes it. */
  checkpointed?: boolean;
}

/** How one settlement's cost is paid: what its subscription and the wallet take, and the overage among the latter. */
interface ChargeSplit {
  subscriptionId: string | null;
  governing: SubscriptionEntry | null;
  fromSubscription: NanoUsd;
  fromWallet: NanoUsd;
  overage: NanoUsd;
}

/**
 * Plans one finished request's charge: its reservation is released, then its real cost charged to what the pools
 * allow (what does not fit is the usage's shortfall). One charged against a holder's hold may use all of that hold;
 * the hold then keeps what the charge did not take from each of its pools.
 */
export function settleInBatch(funds: BatchFunds, settlement: Settlement): SettledUsage {
  const { reservation, costNano, requestId, createdAt } = settlement;
  const held = funds.startSettlement(reservation);
  const split = splitCharge(funds, reservation, costNano);
  const charged = split.fromSubscription + split.fromWallet;
  takeCharge(funds, reservation, split, charged);
  const { accountId, keyId } = reservation;
  const customerBudget = customerBudgetOf(funds, reservation);
  const usage: SettledUsage = {
    entryId: reservation.entryId,
    accountId,
    keyId,
    projectId: reservation.project?.id ?? null,
    requestId,
    walletNano: split.fromWallet,
    shortfallNano: costNano - charged,
    subscriptionId: split.fromSubscription > 0n || split.overage > 0n ? split.subscriptionId : null,
    periodStart: split.governing === null ? null : split.governing.subscription.currentPeriodStart,
    subscriptionNano: split.fromSubscription,
    overageNano: split.overage,
    createdAt,
    customer: customerBudget === null || reservation.customer == null ? null : { customer: reservation.customer, periodStart: budgetPeriodAt(customerBudget.period, funds.now).start },
  };
  if (held !== undefined) funds.keepHolderRest(reservation, held);
  return usage;
}

function customerBudgetOf(funds: BatchFunds, reservation: Reservation): KeyBudget | null {
  const customer = customerPoolOf(reservation);
  return customer === null ? null : funds.snapshot.customerBudgets?.get(customer) ?? null;
}

/** The cost as far as the key's, project's and customer's pools allow, split between subscription quota and wallet. */
function splitCharge(funds: BatchFunds, reservation: Reservation, costNano: NanoUsd): ChargeSplit {
  const { accountId, keyId } = reservation;
  let total = costNano;
  if (reservation.keyCapped) total = capTo(total, funds.roomOf(keyPool(keyId), accountId));
  if (reservation.keyBudgeted) total = capTo(total, funds.roomOf(budgetPool(keyId), accountId));
  const project = reservation.project ?? null;
  if (project?.capped === true) total = capTo(total, funds.roomOf(projectPool(project.id), accountId));
  if (project?.budgeted === true) total = capTo(total, funds.roomOf(projectBudgetPool(project.id), accountId));
  const customer = customerPoolOf(reservation);
  if (customer !== null) total = capTo(total, funds.roomOf(customer, accountId));
  const subscriptionId = reservation.subscriptionId ?? reservation.candidateSubscriptions.find((id) => funds.usable(id) !== null) ?? null;
  const governing = subscriptionId === null ? null : funds.usable(subscriptionId);
  let fromSubscription = 0n;
  if (subscriptionId !== null && governing !== null) fromSubscription = capTo(total, funds.roomOf(subscriptionPool(subscriptionId), accountId));
  let rest = total - fromSubscription;
  let overage = 0n;
  if (governing !== null && subscriptionId !== null && rest > 0n) {
    if (governing.plan.overagePolicy === 'deny') rest = 0n;
    else if (governing.plan.overagePolicy === 'limit') rest = capTo(rest, funds.roomOf(overagePool(subscriptionId), accountId));
  }
  const fromWallet = capTo(rest, funds.roomOf(walletPool(accountId), accountId));
  if (governing !== null && subscriptionId !== null && governing.plan.overagePolicy === 'limit') overage = fromWallet;
  return { subscriptionId, governing, fromSubscription, fromWallet, overage };
}

/** Takes the charge from every pool it counts against. */
function takeCharge(funds: BatchFunds, reservation: Reservation, split: ChargeSplit, charged: NanoUsd): void {
  const { accountId, keyId } = reservation;
  const project = reservation.project ?? null;
  const customer = customerPoolOf(reservation);
  funds.take(walletPool(accountId), accountId, split.fromWallet);
  if (reservation.keyCapped) funds.take(keyPool(keyId), accountId, charged);
  if (reservation.keyBudgeted) funds.take(budgetPool(keyId), accountId, charged);
  if (project?.capped === true) funds.take(projectPool(project.id), accountId, charged);
  if (project?.budgeted === true) funds.take(projectBudgetPool(project.id), accountId, charged);
  if (customer !== null) funds.take(customer, accountId, charged);
  if (split.subscriptionId !== null) {
    funds.take(subscriptionPool(split.subscriptionId), accountId, split.fromSubscription);
    funds.take(overagePool(split.subscriptionId), accountId, split.overage);
  }
}
