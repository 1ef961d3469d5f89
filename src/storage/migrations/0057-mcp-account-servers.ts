import type { Kysely } from 'kysely';

/**
 * MCP servers an account registered for itself (when the operator allows it, MCP_ALLOW_ACCOUNT_SERVERS):
 * `mcp_servers.owner_account_id` is the account whose keys alone may use the server; NULL: the operator's server.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('mcp_servers').addColumn('owner_account_id', 'text').execute();
  await db.schema.createIndex('mcp_servers_owner_account_id').on('mcp_servers').column('owner_account_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('mcp_servers_owner_account_id').execute();
  await db.schema.alterTable('mcp_servers').dropColumn('owner_account_id').execute();
}
