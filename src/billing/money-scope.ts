import type { GrowRequest } from './batch-growing.js';
import type { Settlement } from './batch-settling.js';
import {
  budgetPool, customerPool, customerPoolPrefix, keyPool, overagePool, projectBudgetPool, projectPool, subscriptionPool, walletPool, type ProjectFunds,
} from './money-pools.js';

/** What one money transaction reads and recomputes: the pools of its requests, their accounts, keys and subscriptions. */
export function moneyScope(grows: readonly GrowRequest[], settlements: readonly Settlement[]) {
  const pools = new Map<string, string>();
  const accounts = new Set<string>();
  const keys = new Set<string>();
  const subscriptions = new Set<string>();
  const projects = new Set<string>();
  const customers = new Map<string, { accountId: string; customer: string }>();
  /** Holders (batches' holds) charged against, whose rows the transaction reads. */
  const holders = new Set<string>();
  const addPool = (pool: string, accountId: string): void => {
    pools.set(pool, accountId);
    accounts.add(accountId);
    // A project pool recomputed (idle or stale) needs its project's funds read.
    if (pool.startsWith('project:') || pool.startsWith('pbudget:')) projects.add(pool.slice(pool.indexOf(':') + 1));
  };
  const addProject = (accountId: string, project: ProjectFunds | null | undefined): void => {
    if (project == null) return;
    if (project.capped) {
      projects.add(project.id);
      addPool(projectPool(project.id), accountId);
    }
    if (project.budgeted) {
      projects.add(project.id);
      addPool(projectBudgetPool(project.id), accountId);
    }
  };
  const addCustomer = (accountId: string, customer: string | null | undefined, budgeted: boolean | undefined): void => {
    if (budgeted !== true || customer == null) return;
    const pool = customerPool(accountId, customer);
    customers.set(pool, { accountId, customer });
    addPool(pool, accountId);
  };
  const addRequest = (accountId: string, keyId: string, keyCapped: boolean, keyBudgeted: boolean, candidates: readonly string[]): void => {
    addPool(walletPool(accountId), accountId);
    if (keyCapped) {
      keys.add(keyId);
      addPool(keyPool(keyId), accountId);
    }
    if (keyBudgeted) {
      keys.add(keyId);
      addPool(budgetPool(keyId), accountId);
    }
    for (const id of candidates) {
      subscriptions.add(id);
      addPool(subscriptionPool(id), accountId);
      addPool(overagePool(id), accountId);
    }
  };
  for (const grow of grows) {
    addRequest(grow.accountId, grow.keyId, grow.keyCapped, grow.keyBudgeted, grow.candidateSubscriptions);
    addProject(grow.accountId, grow.project);
    addCustomer(grow.accountId, grow.customer, grow.customerBudgeted);
  }
  for (const { reservation } of settlements) {
    if (reservation.holder !== undefined) holders.add(reservation.holder);
    addProject(reservation.accountId, reservation.project);
    addCustomer(reservation.accountId, reservation.customer, reservation.customerBudgeted);
    addRequest(reservation.accountId, reservation.keyId, reservation.keyCapped, reservation.keyBudgeted, reservation.subscriptionId === null ? reservation.candidateSubscriptions : [reservation.subscriptionId, ...reservation.candidateSubscriptions]);
  }
  const addPoolOf = (pool: string, accountId: string): void => {
    // A stale customer pool (its rules changed) is read again with its customer.
    if (pool.startsWith('customer:')) customers.set(pool, { accountId, customer: pool.slice(customerPoolPrefix(accountId).length) });
    addPool(pool, accountId);
  };
  return { pools, accounts, keys, subscriptions, projects, customers, holders, addPool: addPoolOf };
}
export type MoneyScope = ReturnType<typeof moneyScope>;
