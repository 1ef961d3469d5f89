import type { McpServer } from '../storage/repositories/mcp-server-repository.js';

/**
 * The servers the health checks connect to: the enabled ones, accounts' own servers only where the gateway serves
 * them (MCP_ALLOW_ACCOUNT_SERVERS; off, they are never connected to).
 */
export function checkedServers(servers: readonly McpServer[], accountServers: boolean): McpServer[] {
  return servers.filter((server) => server.enabled && (server.ownerAccountId === null || accountServers));
}
