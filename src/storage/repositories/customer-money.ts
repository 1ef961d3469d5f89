import type { Transaction } from 'kysely';
import { toBigInt, toNumber, toOneOf } from '../convert.js';
import type { CustomerTables } from '../customer-schema.js';
import type { Database } from '../database-schema.js';
import { chunk, rowsPerStatement } from '../pagination.js';
import type { BudgetPeriod, KeyBudget, NanoUsd } from '../../domain/records.js';
import type { SettledUsage } from '../storage.js';
import { EVERY_CUSTOMER, customerPool } from '../../domain/customer-records.js';

const BUDGET_PERIODS: readonly BudgetPeriod[] = ['day', 'week', 'month'];
const IN_LIST = rowsPerStatement(2);

/**
 * The budgets of these end customers, by customer pool, inside a money transaction: each customer's own rule, or the
 * account's rule for every customer; with what the customer spent in the budget's current period (a stored spend
 * of an earlier period is compared by its period start, like a key budget's).
 */
export async function readCustomerBudgets(trx: Transaction<Database>, customers: ReadonlyArray<{ accountId: string; customer: string }>): Promise<Map<string, KeyBudget>> {
  const budgets = new Map<string, KeyBudget>();
  if (customers.length === 0) return budgets;
  const db = trx.withTables<CustomerTables>();
  const accounts = [...new Set(customers.map((entry) => entry.accountId))];
  const names = [...new Set([EVERY_CUSTOMER, ...customers.map((entry) => entry.customer)])];
  const rules = new Map<string, { period: BudgetPeriod; limitNano: NanoUsd } | null>();
  const spend = new Map<string, { periodStart: number; spentNano: NanoUsd }>();
  for (const accountPart of chunk(accounts, IN_LIST)) {
    for (const namePart of chunk(names, IN_LIST)) {
      const ruleRows = await db.selectFrom('customer_rules').select(['account_id', 'customer', 'budget_period', 'budget_limit_nano'])
        .where('account_id', 'in', accountPart).where('customer', 'in', namePart).execute();
      for (const row of ruleRows) {
        rules.set(`${row.account_id}\u0000${row.customer}`, row.budget_period === null || row.budget_limit_nano === null ? null : {
          period: toOneOf(row.budget_period, BUDGET_PERIODS, 'customer budget period'),
          limitNano: toBigInt(row.budget_limit_nano),
        });
      }
      const spendRows = await db.selectFrom('customer_spend').select(['account_id', 'customer', 'period_start', 'spent_nano'])
        .where('account_id', 'in', accountPart).where('customer', 'in', namePart).execute();
      for (const row of spendRows) spend.set(`${row.account_id}\u0000${row.customer}`, { periodStart: toNumber(row.period_start), spentNano: toBigInt(row.spent_nano) });
    }
  }
  for (const { accountId, customer } of customers) {
    const own = `${accountId}\u0000${customer}`;
    const rule = rules.has(own) ? rules.get(own) ?? null : rules.get(`${accountId}\u0000${EVERY_CUSTOMER}`) ?? null;
    if (rule === null) continue;
    const spent = spend.get(own);
    budgets.set(customerPool(accountId, customer), { ...rule, spentNano: spent?.spentNano ?? 0n, periodStart: spent?.periodStart ?? -1 });
  }
  return budgets;
}

/**
 * Adds the settled charges of the fresh usages (`fresh`: entry ids inserted by this transaction) to their customers'
 * spend in the budget's current period; a spend row of an earlier period starts again from the charge.
 */
export async function addCustomerSpend(trx: Transaction<Database>, usages: readonly SettledUsage[], fresh: ReadonlySet<string>): Promise<void> {
  const totals = new Map<string, { accountId: string; customer: string; periodStart: number; amount: NanoUsd }>();
  for (const usage of usages) {
    if (usage.customer == null || !fresh.has(usage.entryId)) continue;
    const amount = usage.walletNano + usage.subscriptionNano;
    if (amount === 0n) continue;
    const id = `${usage.accountId}\u0000${usage.customer.customer}\u0000${usage.customer.periodStart}`;
    const total = totals.get(id) ?? { accountId: usage.accountId, customer: usage.customer.customer, periodStart: usage.customer.periodStart, amount: 0n };
    total.amount += amount;
    totals.set(id, total);
  }
  if (totals.size === 0) return;
  const db = trx.withTables<CustomerTables>();
  const rows = [...totals.values()].sort((left, right) => (left.customer < right.customer ? -1 : left.customer > right.customer ? 1 : 0));
  for (const row of rows) {
    await db.insertInto('customer_spend')
      .values({ account_id: row.accountId, customer: row.customer, period_start: row.periodStart, spent_nano: row.amount })
      .onConflict((conflict) => conflict.columns(['account_id', 'customer']).doUpdateSet((expression) => ({
        spent_nano: expression.case().when('customer_spend.period_start', '=', expression.ref('excluded.period_start'))
          .then(expression(expression.ref('customer_spend.spent_nano'), '+', expression.ref('excluded.spent_nano')))
          .else(expression.ref('excluded.spent_nano')).end(),
        period_start: expression.ref('excluded.period_start'),
      })))
      .execute();
  }
}
