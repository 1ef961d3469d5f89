import type { ColumnType } from 'kysely';
import type { IntegerColumn, MoneyColumn, NullableIntegerColumn } from './schema-columns.js';

// The tables money moves through: ledger entries, the instances' holds and stream checkpoints, subscription usage
// and redemption codes.

export interface LedgerEntriesTable {
  id: string;
  account_id: string;
  kind: string;
  amount_nano: MoneyColumn;
  key_id: string | null;
  request_id: string | null;
  reason: string | null;
  created_at: IntegerColumn;
  /** Usage entries: the part of the request's cost the funds could not cover (not taken; recorded). */
  shortfall_nano: ColumnType<bigint, bigint | undefined, bigint>;
}

/** What one gateway instance holds from one pool of funds (see billing/ledger.ts). */
export interface MoneyHoldsTable {
  instance_id: string;
  /** `wallet:<account>`, `key:<key>`, `sub:<subscription>`, `overage:<subscription>`. */
  pool: string;
  account_id: string;
  held_nano: MoneyColumn;
  updated_at: IntegerColumn;
}

/** What one stream in flight would be billed if it stopped now (see billing/stream-checkpoints.ts). */
export interface StreamCheckpointsTable {
  request_id: string;
  instance_id: string;
  account_id: string;
  cost_nano: MoneyColumn;
  /** JSON of the stream's reservation. */
  reservation: string;
  /** JSON of the usage row the stream would leave. */
  usage_row: string;
  updated_at: IntegerColumn;
}

export interface GatewayInstancesTable {
  instance_id: string;
  started_at: IntegerColumn;
  heartbeat_at: IntegerColumn;
}

/** One request's consumption of a subscription's period quota (and the overage the wallet paid beside it). */
export interface SubscriptionUsageTable {
  id: string;
  subscription_id: string;
  account_id: string;
  key_id: string | null;
  request_id: string | null;
  period_start: IntegerColumn;
  amount_nano: MoneyColumn;
  overage_nano: MoneyColumn;
  created_at: IntegerColumn;
}

export interface RedemptionCodesTable {
  id: string;
  /** SHA-256 of the canonical code, lowercase hex. The code itself is never stored. */
  code_hash: string;
  hint: string;
  name: string;
  amount_nano: MoneyColumn;
  expires_at: NullableIntegerColumn;
  disabled_at: NullableIntegerColumn;
  redeemed_by: string | null;
  redeemed_at: NullableIntegerColumn;
  ledger_entry_id: string | null;
  created_at: IntegerColumn;
  updated_at: IntegerColumn;
}
