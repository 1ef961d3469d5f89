import type { McpServer } from '../storage/repositories/mcp-server-repository.js';

/**
 * Why a server is not to be tried now: its last health check (mcp-health-checks.ts, kept on its row, so every
 * instance reading the database sees it) found it down. Null when it is up or not checked yet; a check that finds it
 * up again brings it back. Its listing is left out and its calls fail at once, without a connection attempt.
 */
export function serverDown(server: Pick<McpServer, 'name' | 'health'>): string | null {
  if (server.health?.status !== 'unhealthy') return null;
  return `The MCP server '${server.name}' is down (its last health check failed at ${new Date(server.health.checkedAt).toISOString()}); it is not tried until a check finds it up again.`;
}
