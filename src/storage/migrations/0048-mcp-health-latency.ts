import type { Kysely } from 'kysely';

/**
 * The MCP health check's timing (mcp-schema.ts): `mcp_servers.health_latency_ms`, how long the last check took to
 * connect and list the server's tools (null: not checked yet, or the check failed before it could be timed).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('mcp_servers').addColumn('health_latency_ms', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('mcp_servers').dropColumn('health_latency_ms').execute();
}
