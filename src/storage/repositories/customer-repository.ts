import type { Kysely } from 'kysely';
import { toBigInt, toNullableNumber, toNumber, toOneOf } from '../convert.js';
import type { CustomerRulesTable, CustomerTables } from '../customer-schema.js';
import type { Database } from '../database-schema.js';
import type { BudgetPeriod, NanoUsd } from '../../domain/records.js';
import type { CustomerRule, RollupQuery, UsageRollup } from '../../domain/customer-records.js';
import type { Selectable } from 'kysely';

const BUDGET_PERIODS: readonly BudgetPeriod[] = ['day', 'week', 'month'];
const DAY_MS = 86_400_000;

export interface CustomerRepository {
  /** Every rule of the account (a few per account: the admission cache holds them all). */
  listRules(accountId: string): Promise<CustomerRule[]>;
  /** Creates or replaces the account's rule for the customer. */
  putRule(rule: CustomerRule): Promise<void>;
  deleteRule(accountId: string, customer: string): Promise<boolean>;
  /** What each customer spent in the period starting at its stored period start (the caller compares periods). */
  spend(accountId: string, customers: readonly string[]): Promise<Map<string, { periodStart: number; spentNano: NanoUsd }>>;
  /** The daily rollups of one dimension, by day then value. */
  rollups(query: RollupQuery): Promise<UsageRollup[]>;
}

function toRule(row: Selectable<CustomerRulesTable>): CustomerRule {
  return {
    accountId: row.account_id,
    customer: row.customer,
    budget: row.budget_period === null || row.budget_limit_nano === null ? null : {
      period: toOneOf(row.budget_period, BUDGET_PERIODS, 'customer budget period'),
      limitNano: toBigInt(row.budget_limit_nano),
    },
    rpm: toNullableNumber(row.rpm),
    tpm: toNullableNumber(row.tpm),
    concurrency: toNullableNumber(row.concurrency),
    createdAt: toNumber(row.created_at),
    updatedAt: toNumber(row.updated_at),
  };
}

export function createCustomerRepository(db: Kysely<Database & CustomerTables>): CustomerRepository {
  return {
    async listRules(accountId) {
      const rows = await db.selectFrom('customer_rules').selectAll().where('account_id', '=', accountId).orderBy('customer').execute();
      return rows.map(toRule);
    },

    async putRule(rule) {
      const values = {
        account_id: rule.accountId,
        customer: rule.customer,
        budget_period: rule.budget?.period ?? null,
        budget_limit_nano: rule.budget?.limitNano ?? null,
        rpm: rule.rpm,
        tpm: rule.tpm,
        concurrency: rule.concurrency,
        created_at: rule.createdAt,
        updated_at: rule.updatedAt,
      };
      await db.insertInto('customer_rules').values(values)
        .onConflict((conflict) => conflict.columns(['account_id', 'customer']).doUpdateSet({
          budget_period: values.budget_period, budget_limit_nano: values.budget_limit_nano, rpm: values.rpm, tpm: values.tpm, concurrency: values.concurrency, updated_at: values.updated_at,
        }))
        .execute();
    },

    async deleteRule(accountId, customer) {
      const result = await db.deleteFrom('customer_rules').where('account_id', '=', accountId).where('customer', '=', customer).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    async spend(accountId, customers) {
      const spent = new Map<string, { periodStart: number; spentNano: NanoUsd }>();
      if (customers.length === 0) return spent;
      const rows = await db.selectFrom('customer_spend').selectAll().where('account_id', '=', accountId).where('customer', 'in', [...customers]).execute();
      for (const row of rows) spent.set(row.customer, { periodStart: toNumber(row.period_start), spentNano: toBigInt(row.spent_nano) });
      return spent;
    },

    async rollups(query) {
      // The primary key (account_id, dimension, day, value) serves one account's range; the operator's scan is of
      // a day's rollups, not of the usage log.
      let select = db.selectFrom('usage_rollups')
        .select(['account_id', 'day', 'value', 'requests', 'errors', 'input_tokens', 'output_tokens', 'cost_nano'])
        .where('dimension', '=', query.dimension)
        .where('day', '>=', Math.floor(query.from / DAY_MS) * DAY_MS)
        .where('day', '<=', Math.floor(query.to / DAY_MS) * DAY_MS);
      if (query.accountId !== null) select = select.where('account_id', '=', query.accountId);
      if (query.value !== undefined) select = select.where('value', '=', query.value);
      const rows = await select.orderBy('day').orderBy('value').orderBy('account_id').execute();
      return rows.map((row) => ({
        accountId: row.account_id,
        day: toNumber(row.day),
        value: row.value,
        requests: toNumber(row.requests),
        errors: toNumber(row.errors),
        inputTokens: toNumber(row.input_tokens),
        outputTokens: toNumber(row.output_tokens),
        costNano: toBigInt(row.cost_nano),
      }));
    },
  };
}
