import type { Kysely } from 'kysely';

/**
 * The MCP gateway's client sessions (mcp-session-schema.ts), shared by every instance on the database:
 * `mcp_client_sessions` holds one row per `Mcp-Session-Id` the gateway issued, by the SHA-256 of the id (the id
 * itself is never stored), with the key and endpoint that opened it, its protocol revision and when it was last used.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable('mcp_client_sessions')
    .addColumn('id_hash', 'text', (column) => column.primaryKey())
    .addColumn('key_id', 'text', (column) => column.notNull())
    .addColumn('scope', 'text')
    .addColumn('protocol_version', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('last_used_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('mcp_client_sessions_key').on('mcp_client_sessions').columns(['key_id', 'last_used_at']).execute();
  await db.schema.createIndex('mcp_client_sessions_last_used').on('mcp_client_sessions').column('last_used_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('mcp_client_sessions').execute();
}
