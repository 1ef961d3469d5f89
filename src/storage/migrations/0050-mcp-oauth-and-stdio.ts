import type { Kysely } from 'kysely';

/**
 * Upstream MCP servers reached with OAuth 2.1 client credentials, and local servers the gateway starts (mcp-schema.ts):
 * `oauth` (JSON of the token endpoint, client id, scope, audience and client authentication method),
 * `oauth_client_secret_sealed` (SecretBox-sealed), `stdio_command`, `stdio_args` (JSON array) and `stdio_env_sealed`
 * (SecretBox-sealed JSON object). A stdio server's `url` is the empty string.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('mcp_servers').addColumn('oauth', 'text').execute();
  await db.schema.alterTable('mcp_servers').addColumn('oauth_client_secret_sealed', 'text').execute();
  await db.schema.alterTable('mcp_servers').addColumn('stdio_command', 'text').execute();
  await db.schema.alterTable('mcp_servers').addColumn('stdio_args', 'text').execute();
  await db.schema.alterTable('mcp_servers').addColumn('stdio_env_sealed', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of ['stdio_env_sealed', 'stdio_args', 'stdio_command', 'oauth_client_secret_sealed', 'oauth']) {
    await db.schema.alterTable('mcp_servers').dropColumn(column).execute();
  }
}
