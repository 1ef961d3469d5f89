import type { IntegerColumn, MoneyColumn, NullableIntegerColumn, NullableMoneyColumn } from './schema-columns.js';

// The alerts' states: one row per subject and threshold crossing, with its notification's attempts.

export interface AlertStatesTable {
  /** `balance`, `key_quota` or `subscription_quota`. */
  kind: string;
  /** The account, key or subscription id. */
  subject_id: string;
  account_id: string;
  period_start: IntegerColumn;
  /** `armed`, `pending` or `notified`. */
  state: string;
  value_nano: MoneyColumn;
  threshold_nano: MoneyColumn;
  limit_nano: NullableMoneyColumn;
  percent: NullableIntegerColumn;
  crossed_at: IntegerColumn;
  attempts: IntegerColumn;
  next_attempt_at: IntegerColumn;
  notified_at: NullableIntegerColumn;
  last_error: string | null;
  updated_at: IntegerColumn;
}
