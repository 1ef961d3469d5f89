import type { ColumnType } from 'kysely';
import type { BooleanColumn, IntegerColumn, NullableIntegerColumn, NullableMoneyColumn } from './schema-columns.js';
import type { Database } from './database-schema.js';

/** The MCP gateway's tables (migrations 0039, 0047, 0048, 0050 and 0057), in the conventions of database-schema.ts. */
export interface McpServersTable {
  id: string;
  /** Unique; the `<server>__` prefix of its tools' names. */
  name: string;
  url: string;
  /** `streamable-http` or `sse`. */
  transport: string;
  /** SecretBox-sealed JSON object of the static headers sent upstream; null: none. Never plaintext. */
  headers_sealed: string | null;
  /** 1: keys whose `allowed_mcp_servers` is null may use it. */
  public: BooleanColumn;
  enabled: BooleanColumn;
  created_at: IntegerColumn;
  updated_at: IntegerColumn;
  /** Calls a minute and calls at once per key (null: no limit). */
  calls_per_minute: NullableIntegerColumn;
  concurrency: NullableIntegerColumn;
  /** Charged per call (null: free). */
  price_per_call_nano: NullableMoneyColumn;
  /** 1: usage rows keep each call's arguments and result. */
  log_payloads: ColumnType<number | bigint, number | undefined, number>;
  /** JSON `{ default, tools: { <tool>: rule } }` (null: every tool allowed). */
  tool_rules: string | null;
  /** The last health check: `healthy` | `unhealthy`, its error, when, and the tools listed (JSON) (null: not yet). */
  health_status: string | null;
  health_error: string | null;
  health_checked_at: NullableIntegerColumn;
  health_tools: string | null;
  /** How long the last check took, in milliseconds (null: not checked, or it failed before it was timed). */
  health_latency_ms: NullableIntegerColumn;
  /** JSON `{ token_url, client_id, scope, audience, auth_method }` of OAuth client credentials (null: none). */
  oauth: string | null;
  /** SecretBox-sealed client secret of those credentials. Never plaintext. */
  oauth_client_secret_sealed: string | null;
  /** A stdio server's program (null: the server is reached over HTTP); its `url` is then empty. */
  stdio_command: string | null;
  /** JSON array of the program's arguments. */
  stdio_args: string | null;
  /** SecretBox-sealed JSON object of the program's environment variables. Never plaintext. */
  stdio_env_sealed: string | null;
  /** The account that registered the server, whose keys alone may use it (null: the operator's server). */
  owner_account_id: ColumnType<string | null, string | null | undefined, string | null>;
}

/** One account's, project's or key's MCP overrides. */
export interface McpPoliciesTable {
  owner_kind: string;
  owner_id: string;
  /** JSON array of server names, or null: no narrowing. */
  allowed_servers: string | null;
  /** JSON object of rules by `<server>` or `<server>__<tool>` (null: none). */
  tool_rules: string | null;
  /** JSON object by server of `{ calls_per_minute, concurrency }` (null: none). */
  limits: string | null;
  updated_at: IntegerColumn;
}

// A type alias (not an interface), so Kysely's `withTables` sees an index-compatible record.
export type McpTables = {
  mcp_servers: McpServersTable;
  mcp_policies: McpPoliciesTable;
};

export type McpDatabase = Database & McpTables;
