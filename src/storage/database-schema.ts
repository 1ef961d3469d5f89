import type { ColumnType } from 'kysely';
import type {
  AccountMembersTable, ConsoleBackupCodesTable, ConsoleInvitationsTable, ConsoleSessionsTable, ConsoleTokensTable, ConsoleUsersTable,
} from './console-schema.js';
import type { AlertStatesTable } from './alert-schema.js';
import type {
  GatewayInstancesTable, LedgerEntriesTable, MoneyHoldsTable, RedemptionCodesTable, StreamCheckpointsTable, SubscriptionUsageTable,
} from './money-schema.js';
import type { BooleanColumn, IntegerColumn, MoneyColumn, NullableIntegerColumn, NullableMoneyColumn } from './schema-columns.js';

/**
 * Kysely table interfaces: the database as the SQL sees it (snake_case columns, money as bigint nano-USD,
 * times as bigint epoch milliseconds, booleans as 0/1, lists and maps as JSON text).
 *
 * Integer columns read back as `bigint` on SQLite (safe integers) and as `number` on PostgreSQL int4, so their
 * select type is `number | bigint`; repositories convert at the boundary (see `convert.ts`).
 */

export interface AccountsTable {
  id: string;
  email: string;
  password_hash: string | null;
  tier: string;
  balance_nano: MoneyColumn;
  credit_line_nano: MoneyColumn;
  alert_balance_nano: NullableMoneyColumn;
  /** Quota alert threshold in percent (migration 0005; written only by the alerts repository). */
  alert_quota_percent: ColumnType<number | bigint | null, number | null | undefined, number | null>;
  /** Migration 0007. */
  status: ColumnType<string, string | undefined, string>;
  deleted_at: ColumnType<number | bigint | null, number | null | undefined, number | null>;
  rpm: ColumnType<number | bigint | null, number | null | undefined, number | null>;
  tpm: ColumnType<number | bigint | null, number | null | undefined, number | null>;
  concurrency: ColumnType<number | bigint | null, number | null | undefined, number | null>;
  created_at: IntegerColumn;
  updated_at: IntegerColumn;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string;
  secret_hash: string;
  display_hint: string;
  status: string;
  quota_nano: NullableMoneyColumn;
  spent_nano: MoneyColumn;
  /** JSON array of strings, or NULL for "all models". */
  allowed_models: string | null;
  /** JSON array of strings, or NULL for "any address". */
  ip_allowlist: string | null;
  expires_at: NullableIntegerColumn;
  rpm: NullableIntegerColumn;
  tpm: NullableIntegerColumn;
  concurrency: NullableIntegerColumn;
  /** Migration 0007: the period budget (all null or all set) and the browser origins (JSON array or NULL). */
  budget_period: ColumnType<string | null, string | null | undefined, string | null>;
  budget_limit_nano: ColumnType<bigint | null, bigint | null | undefined, bigint | null>;
  budget_spent_nano: ColumnType<bigint, bigint | undefined, bigint>;
  budget_period_start: ColumnType<number | bigint, number | undefined, number>;
  allowed_origins: ColumnType<string | null, string | null | undefined, string | null>;
  /** Migration 0039: JSON array of MCP server names the key may use, or NULL for every public server. */
  allowed_mcp_servers: ColumnType<string | null, string | null | undefined, string | null>;
  /** Migration 0013: the key's own quota alert threshold in percent (null: the account's). */
  alert_quota_percent: ColumnType<number | bigint | null, number | null | undefined, number | null>;
  created_at: IntegerColumn;
  updated_at: IntegerColumn;
  /** Free label such as `production` (migration 0006). */
  environment: string | null;
  /** The console user who created the key; null for admin API and CLI keys. */
  created_by: string | null;
  /** 1: a short-lived key the console's playground minted. */
  playground: ColumnType<number | bigint, number | undefined, number>;
  /** Migration 0033: the key's project; null: the account's default project. */
  project_id: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface ChannelsTable {
  id: string;
  name: string;
  type: string;
  base_url: string | null;
  /** SecretBox-sealed JSON array of upstream keys. Never plaintext. */
  api_keys_sealed: string;
  /** JSON object: public model id → upstream model name. */
  models: string;
  priority: IntegerColumn;
  weight: IntegerColumn;
  enabled: BooleanColumn;
  /** JSON object of extra request headers. */
  headers: string;
  /** JSON object of type-specific settings. */
  settings: string;
  created_at: IntegerColumn;
  updated_at: IntegerColumn;
}

export interface ModelsTable {
  id: string;
  kind: string;
  public: BooleanColumn;
  upstream: string | null;
  owned_by: string;
  input_per_mtok_nano: NullableMoneyColumn;
  output_per_mtok_nano: NullableMoneyColumn;
  cached_input_per_mtok_nano: NullableMoneyColumn;
  cache_write_per_mtok_nano: NullableMoneyColumn;
  per_request_nano: NullableMoneyColumn;
  per_image_nano: NullableMoneyColumn;
  per_audio_minute_nano: NullableMoneyColumn;
  per_mchar_nano: NullableMoneyColumn;
  per_web_search_nano: NullableMoneyColumn;
  per_grounded_prompt_nano: NullableMoneyColumn;
  per_web_fetch_nano: NullableMoneyColumn;
  per_file_search_nano: NullableMoneyColumn;
  per_search_unit_nano: NullableMoneyColumn;
  /** Migration 0037: the prices of batch lines per million tokens (null: the normal price). */
  batch_input_per_mtok_nano: NullableMoneyColumn;
  batch_output_per_mtok_nano: NullableMoneyColumn;
  input_audio_per_mtok_nano: NullableMoneyColumn;
  cached_audio_input_per_mtok_nano: NullableMoneyColumn;
  output_audio_per_mtok_nano: NullableMoneyColumn;
  rpm: NullableIntegerColumn;
  tpm: NullableIntegerColumn;
  routing_strategy: string;
  /** Null: the model does not cache unless a request asks. */
  cache_ttl_seconds: NullableIntegerColumn;
  cache_hit_price_bp: ColumnType<number | bigint, number | undefined, number>;
  cache_shared: ColumnType<number | bigint, number | undefined, number>;
  /** JSON array of model ids. */
  fallback_models: string;
  created_at: IntegerColumn;
  updated_at: IntegerColumn;
}

export interface PlansTable {
  id: string;
  name: string;
  period: string;
  quota_nano: MoneyColumn;
  overage_policy: string;
  overage_limit_nano: NullableMoneyColumn;
  rpm: NullableIntegerColumn;
  tpm: NullableIntegerColumn;
  created_at: IntegerColumn;
  updated_at: IntegerColumn;
  /** Migration 0013: 1 when accounts may choose the plan in the console; the price of one period (0: free). */
  self_service: ColumnType<number | bigint, number | undefined, number>;
  price_nano: ColumnType<bigint, bigint | undefined, bigint>;
}

export interface SubscriptionsTable {
  id: string;
  account_id: string;
  plan_id: string;
  status: string;
  starts_at: IntegerColumn;
  current_period_start: IntegerColumn;
  current_period_end: IntegerColumn;
  used_nano: MoneyColumn;
  created_at: IntegerColumn;
  updated_at: IntegerColumn;
  /** Overage the wallet paid in the current period (policy `limit` counts it against the plan's limit). */
  overage_used_nano: ColumnType<bigint, bigint | undefined, bigint>;
  /** When the subscription ends (cancellation at period end, or immediately); null: renews. */
  cancel_at: ColumnType<number | bigint | null, number | null | undefined, number | null>;
  /** Migration 0013: end of the last period bought from the balance (null: an operator's grant); 1 when it renews. */
  paid_through: ColumnType<number | bigint | null, number | null | undefined, number | null>;
  renews: ColumnType<number | bigint, number | undefined, number>;
}

export interface UsageLogsTable {
  request_id: string;
  account_id: string | null;
  key_id: string | null;
  model: string | null;
  channel_id: string | null;
  protocol: string;
  endpoint: string;
  stream: BooleanColumn;
  status: IntegerColumn;
  error_code: string | null;
  prompt_tokens: IntegerColumn;
  completion_tokens: IntegerColumn;
  cached_tokens: IntegerColumn;
  reasoning_tokens: IntegerColumn;
  total_tokens: IntegerColumn;
  cost_nano: MoneyColumn;
  latency_ms: IntegerColumn;
  ttfb_ms: NullableIntegerColumn;
  attempts: IntegerColumn;
  created_at: IntegerColumn;
  /** Comma-separated channel ids in attempt order (null on rows older than the column). */
  attempted_channels: string | null;
  /** 1: answered from the response cache (no upstream call). */
  cache_hit: ColumnType<number | bigint, number | undefined, number>;
  /** Hosted tool calls of the answer (0 on rows older than the columns). */
  web_searches: ColumnType<number | bigint, number | undefined, number>;
  web_fetches: ColumnType<number | bigint, number | undefined, number>;
  file_searches: ColumnType<number | bigint, number | undefined, number>;
  /** What those calls cost, part of cost_nano. */
  hosted_tool_cost_nano: ColumnType<bigint, bigint | undefined, bigint>;
  /** The end customer the request named, and its tags as a JSON object (null: none; null on older rows). */
  customer: ColumnType<string | null, string | null | undefined, string | null>;
  tags: ColumnType<string | null, string | null | undefined, string | null>;
  /** What the request's guardrails did, as a JSON array of { name, direction, outcome, count } (null: none ran). */
  guardrails: ColumnType<string | null, string | null | undefined, string | null>;
  /** An MCP tool call's server, tool and bytes in and out (null: not an MCP call). */
  mcp_server: ColumnType<string | null, string | null | undefined, string | null>;
  mcp_tool: ColumnType<string | null, string | null | undefined, string | null>;
  mcp_bytes_in: ColumnType<number | bigint | null, number | null | undefined, number | null>;
  mcp_bytes_out: ColumnType<number | bigint | null, number | null | undefined, number | null>;
  /** Its arguments and result as JSON `{ arguments, result }`, only where the server's operator logs payloads. */
  mcp_payload: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface AnnouncementsTable {
  id: string;
  title: string;
  body: string;
  level: string;
  published_at: IntegerColumn;
  expires_at: NullableIntegerColumn;
  created_at: IntegerColumn;
}

export interface AccountDisplayCurrencyTable {
  account_id: string;
  currency: string;
  updated_at: IntegerColumn;
}

export interface AnnouncementDismissalsTable {
  user_id: string;
  announcement_id: string;
  dismissed_at: IntegerColumn;
}

/** A single row (id = 1). */
export interface FxRatesTable {
  id: IntegerColumn;
  base: string;
  /** JSON object: currency code → decimal string. */
  rates: string;
  as_of: IntegerColumn;
  source: string;
  updated_at: IntegerColumn;
}

export interface SettingsTable {
  key: string;
  value: string;
  updated_at: IntegerColumn;
}

/** Per-account limits by tier name; NULL limits mean unlimited. */
export interface TiersTable {
  name: string;
  rpm: NullableIntegerColumn;
  tpm: NullableIntegerColumn;
  /** Migration 0026: the tier's own sign-up credit and its lifetime in days (null: the gateway's). */
  signup_credit_nano: NullableMoneyColumn;
  signup_credit_days: NullableIntegerColumn;
  created_at: IntegerColumn;
  updated_at: IntegerColumn;
}

/** An upstream key a channel's upstream rejected: out of the rotation until the channel is updated. */
export interface ChannelKeyFlagsTable {
  channel_id: string;
  key_fingerprint: string;
  key_index: IntegerColumn;
  reason: string;
  flagged_at: IntegerColumn;
}

export interface Database {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  channels: ChannelsTable;
  models: ModelsTable;
  plans: PlansTable;
  subscriptions: SubscriptionsTable;
  ledger_entries: LedgerEntriesTable;
  usage_logs: UsageLogsTable;
  announcements: AnnouncementsTable;
  announcement_dismissals: AnnouncementDismissalsTable;
  account_display_currency: AccountDisplayCurrencyTable;
  fx_rates: FxRatesTable;
  settings: SettingsTable;
  tiers: TiersTable;
  channel_key_flags: ChannelKeyFlagsTable;
  money_holds: MoneyHoldsTable;
  gateway_instances: GatewayInstancesTable;
  subscription_usage: SubscriptionUsageTable;
  stream_checkpoints: StreamCheckpointsTable;
  // alerts and redemption codes (migration 0005)
  alert_states: AlertStatesTable;
  redemption_codes: RedemptionCodesTable;
  // web console (migration 0006)
  console_users: ConsoleUsersTable;
  account_members: AccountMembersTable;
  console_sessions: ConsoleSessionsTable;
  console_tokens: ConsoleTokensTable;
  console_backup_codes: ConsoleBackupCodesTable;
  // console members (migration 0011)
  console_invitations: ConsoleInvitationsTable;
}
