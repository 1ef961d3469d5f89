import { GatewayError } from '../../errors/gateway-error.js';
import { sendJson } from '../../http/respond.js';
import { AccountMcpServers } from '../../mcp/account-mcp-servers.js';
import type { ConsoleDeps } from '../console-deps.js';
import { readConsoleBody, sendNoContent } from '../console-route.js';
import { consoleRoutes } from '../console-route-table.js';

/**
 * The account's own MCP servers (docs/console-api.md, "MCP servers"), for its owners and admins only and only when
 * the operator allows account servers (MCP_ALLOW_ACCOUNT_SERVERS): other roles are refused, every id is looked up
 * within the session's account (another account's server, or the operator's, answers 404), and with the switch off
 * none is registered, changed or checked (403), while the account may still list and remove the ones it kept. A check
 * run now is rate-limited per server and per account.
 */
export const CONSOLE_MCP_SERVER_ROUTES = consoleRoutes((deps: ConsoleDeps) => {
  const { storage, clock, config } = deps.services;
  const servers = new AccountMcpServers(storage.mcpServers, clock, deps.services.mcpOutbound, { limiter: deps.services.limiter, timeoutMs: config.mcp.healthCheckTimeoutMs });
  const requireSwitch = (): void => {
    if (!config.mcp.allowAccountServers) throw new GatewayError('forbidden', 'Accounts may not register MCP servers on this gateway: the operator allows it with MCP_ALLOW_ACCOUNT_SERVERS=true.');
  };
  return { servers, requireSwitch, config };
}, [
  { method: 'GET', path: '/api/mcp-servers/own', who: 'member', permission: 'mcp:manage', handler: ({ servers, config }) => async ({ context, active }) => {
    sendJson(context, 200, await servers.list(active.session.accountId, config.mcp.allowAccountServers));
  } },
  { method: 'POST', path: '/api/mcp-servers', who: 'member', permission: 'mcp:manage', handler: ({ servers, requireSwitch }) => async ({ context, active }) => {
    requireSwitch();
    sendJson(context, 201, await servers.create(active.session.accountId, await readConsoleBody(context)));
  } },
  { method: 'PATCH', path: '/api/mcp-servers/:id', who: 'member', permission: 'mcp:manage', handler: ({ servers, requireSwitch }) => async ({ context, active }) => {
    requireSwitch();
    sendJson(context, 200, await servers.update(active.session.accountId, context.params.id ?? '', await readConsoleBody(context)));
  } },
  { method: 'POST', path: '/api/mcp-servers/:id/check', who: 'member', permission: 'mcp:manage', handler: ({ servers, requireSwitch }) => async ({ context, active }) => {
    // Only a server the gateway serves is connected to: with the switch off, none of the account's.
    requireSwitch();
    sendJson(context, 200, await servers.check(active.session.accountId, context.params.id ?? ''));
  } },
  { method: 'DELETE', path: '/api/mcp-servers/:id', who: 'member', permission: 'mcp:manage', handler: ({ servers }) => async ({ context, active }) => {
    await servers.delete(active.session.accountId, context.params.id ?? '');
    sendNoContent(context);
  } },
]);
