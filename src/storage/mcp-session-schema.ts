import type { Database } from './database-schema.js';
import type { IntegerColumn } from './schema-columns.js';

/** The MCP gateway's client sessions (migration 0051), in the conventions of database-schema.ts. */
export interface McpClientSessionsTable {
  /** SHA-256 (hex) of the `Mcp-Session-Id`; the id itself is never stored. */
  id_hash: string;
  key_id: string;
  /** The server of `/mcp/{server}`, or null for `/mcp`. */
  scope: string | null;
  protocol_version: string;
  created_at: IntegerColumn;
  /** Refreshed at most once a minute while the session is used. */
  last_used_at: IntegerColumn;
}

// A type alias (not an interface), so Kysely's `withTables` sees an index-compatible record.
export type McpSessionTables = {
  mcp_client_sessions: McpClientSessionsTable;
};

export type McpSessionDatabase = Database & McpSessionTables;
