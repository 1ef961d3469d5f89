import type { Kysely } from 'kysely';

/**
 * What the MCP gateway enforces and records per call (mcp-schema.ts):
 *
 * - `mcp_servers` gains its limits per key (`calls_per_minute`, `concurrency`; null: none), its price per call
 *   (`price_per_call_nano`; null: free), whether calls' arguments and results are logged (`log_payloads`, off by
 *   default), its tool rules (`tool_rules`: JSON `{ default, tools }` of `allowed` | `read_only` | `refused`), and
 *   the last health check (`health_status`, `health_error`, `health_checked_at`, `health_tools`: the tools it listed).
 * - `mcp_policies`: the overrides of an account, a project or a key (`owner_kind`, `owner_id`): the servers it may use
 *   (`allowed_servers`, JSON array or null for no narrowing), tool rules (JSON object by server or `<server>__<tool>`)
 *   and limits (JSON object by server of `{ calls_per_minute, concurrency }`).
 * - `usage_logs` gains the MCP call's server, tool, bytes in and out, and (only where the server logs payloads) its
 *   arguments and result as JSON text.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('mcp_servers').addColumn('calls_per_minute', 'bigint').execute();
  await db.schema.alterTable('mcp_servers').addColumn('concurrency', 'bigint').execute();
  await db.schema.alterTable('mcp_servers').addColumn('price_per_call_nano', 'bigint').execute();
  await db.schema.alterTable('mcp_servers').addColumn('log_payloads', 'integer', (column) => column.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('mcp_servers').addColumn('tool_rules', 'text').execute();
  await db.schema.alterTable('mcp_servers').addColumn('health_status', 'text').execute();
  await db.schema.alterTable('mcp_servers').addColumn('health_error', 'text').execute();
  await db.schema.alterTable('mcp_servers').addColumn('health_checked_at', 'bigint').execute();
  await db.schema.alterTable('mcp_servers').addColumn('health_tools', 'text').execute();
  await db.schema.createTable('mcp_policies')
    .addColumn('owner_kind', 'text', (column) => column.notNull())
    .addColumn('owner_id', 'text', (column) => column.notNull())
    .addColumn('allowed_servers', 'text')
    .addColumn('tool_rules', 'text')
    .addColumn('limits', 'text')
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('mcp_policies_pkey', ['owner_kind', 'owner_id'])
    .execute();
  await db.schema.alterTable('usage_logs').addColumn('mcp_server', 'text').execute();
  await db.schema.alterTable('usage_logs').addColumn('mcp_tool', 'text').execute();
  await db.schema.alterTable('usage_logs').addColumn('mcp_bytes_in', 'bigint').execute();
  await db.schema.alterTable('usage_logs').addColumn('mcp_bytes_out', 'bigint').execute();
  await db.schema.alterTable('usage_logs').addColumn('mcp_payload', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of ['mcp_payload', 'mcp_bytes_out', 'mcp_bytes_in', 'mcp_tool', 'mcp_server']) {
    await db.schema.alterTable('usage_logs').dropColumn(column).execute();
  }
  await db.schema.dropTable('mcp_policies').execute();
  for (const column of ['health_tools', 'health_checked_at', 'health_error', 'health_status', 'tool_rules', 'log_payloads', 'price_per_call_nano', 'concurrency', 'calls_per_minute']) {
    await db.schema.alterTable('mcp_servers').dropColumn(column).execute();
  }
}
