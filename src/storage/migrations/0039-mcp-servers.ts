import type { Kysely } from 'kysely';

/**
 * The MCP gateway (mcp-schema.ts):
 *
 * - `mcp_servers`: upstream MCP servers the operator registered: a unique name (the prefix of its tools' names),
 *   its URL and transport, the static headers it is called with as one SecretBox-sealed JSON object, and whether
 *   keys that name no servers may use it (`public`).
 * - `api_keys.allowed_mcp_servers`: a JSON array of server names the key may use, or NULL for every public server.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable('mcp_servers')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('name', 'text', (column) => column.notNull().unique())
    .addColumn('url', 'text', (column) => column.notNull())
    .addColumn('transport', 'text', (column) => column.notNull())
    .addColumn('headers_sealed', 'text')
    .addColumn('public', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('enabled', 'integer', (column) => column.notNull().defaultTo(1))
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.alterTable('api_keys').addColumn('allowed_mcp_servers', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').dropColumn('allowed_mcp_servers').execute();
  await db.schema.dropTable('mcp_servers').execute();
}
