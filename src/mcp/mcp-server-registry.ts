import { GatewayError } from '../errors/gateway-error.js';
import type { McpServerRepository } from '../storage/repositories/mcp-server-repository.js';
import type { OutboundPolicy } from './upstream-session.js';

/**
 * What every change to the registry of MCP servers obeys, the operator's servers and the accounts' alike: a name no
 * other server has (so its tools' `<server>__<tool>` names never clash), and a changed or deleted server's token and
 * process never used again.
 */
export async function refuseTakenName(servers: McpServerRepository, name: string, exceptId: string | null): Promise<void> {
  const holder = await servers.getByName(name);
  if (holder !== null && holder.id !== exceptId) throw new GatewayError('conflict', `An MCP server named '${name}' exists already.`, { param: 'name' });
}

/** A changed or deleted server's token and process are not used again (its process is ended now); none is held before they are first made. */
export async function releaseServer(outbound: OutboundPolicy, id: string): Promise<void> {
  outbound.oauthTokens?.loaded()?.forget(id);
  await outbound.stdioProcesses?.loaded()?.stop(id);
}

export function mcpServerNotFound(id: string): GatewayError {
  return new GatewayError('not_found', `No MCP server '${id}'.`);
}
