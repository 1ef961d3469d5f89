import type { BooleanColumn, Database, IntegerColumn } from './database-schema.js';

/** The MCP gateway's table (migration 0039), in the conventions of database-schema.ts. */
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
}

// A type alias (not an interface), so Kysely's `withTables` sees an index-compatible record.
export type McpTables = {
  mcp_servers: McpServersTable;
};

export type McpDatabase = Database & McpTables;
