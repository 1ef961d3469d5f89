import type { Database } from './database-schema.js';
import type { IntegerColumn, MoneyColumn, NullableIntegerColumn, NullableMoneyColumn } from './schema-columns.js';

/** Tables of end-customer rules, spend and the daily usage rollups (migration 0032), in the conventions of database-schema.ts. */
export interface CustomerRulesTable {
  account_id: string;
  /** The end customer, or '' for the rule of every customer without one of its own. */
  customer: string;
  budget_period: string | null;
  budget_limit_nano: NullableMoneyColumn;
  rpm: NullableIntegerColumn;
  /** Migration 0041. */
  tpm: NullableIntegerColumn;
  concurrency: NullableIntegerColumn;
  created_at: IntegerColumn;
  updated_at: IntegerColumn;
}

export interface CustomerSpendTable {
  account_id: string;
  customer: string;
  period_start: IntegerColumn;
  spent_nano: MoneyColumn;
}

export interface UsageRollupsTable {
  account_id: string;
  /** `key`, `customer` or `tag`. */
  dimension: string;
  /** Start of the UTC day (epoch ms). */
  day: IntegerColumn;
  /** The key id, the customer, or the tag as `name=value`. */
  value: string;
  requests: IntegerColumn;
  errors: IntegerColumn;
  input_tokens: IntegerColumn;
  output_tokens: IntegerColumn;
  cost_nano: MoneyColumn;
}

export type CustomerTables = {
  customer_rules: CustomerRulesTable;
  customer_spend: CustomerSpendTable;
  usage_rollups: UsageRollupsTable;
};

export type CustomerDatabase = Database & CustomerTables;
