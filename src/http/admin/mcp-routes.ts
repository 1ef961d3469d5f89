import type { GatewayServices } from '../../services.js';
import { McpPolicyManagement } from '../../mcp/mcp-policy-management.js';
import { McpServerManagement } from '../../mcp/mcp-server-management.js';
import type { McpPolicyOwner } from '../../storage/repositories/mcp-policy-repository.js';
import { sendJson } from '../respond.js';
import { readAdminBody } from './admin-guard.js';
import { adminRoutes, type AdminRouteOf } from './admin-route.js';

/** The registry of upstream MCP servers the gateway's /mcp serves, /admin/mcp-servers. */
interface McpScope {
  management: McpServerManagement;
  policies: McpPolicyManagement;
}

export const MCP_ADMIN_ROUTES = adminRoutes((services: GatewayServices): McpScope => ({
  management: new McpServerManagement(services.storage.mcpServers, services.clock, services.mcpOutbound, services.config.mcp.healthCheckTimeoutMs, services.config.mcp.allowStdio),
  policies: new McpPolicyManagement(services.storage, services.clock),
}), [
  { method: 'GET', path: '/admin/mcp-servers', handler: ({ management }) => async (context) => sendJson(context, 200, await management.list()) },
  { method: 'POST', path: '/admin/mcp-servers', handler: ({ management }) => async (context) => sendJson(context, 201, await management.create(await readAdminBody(context))) },
  { method: 'GET', path: '/admin/mcp-servers/:id', handler: ({ management }) => async (context) => sendJson(context, 200, await management.get(context.params.id ?? '')) },
  { method: 'GET', path: '/admin/mcp-servers/:id/tools', handler: ({ management }) => async (context) => sendJson(context, 200, await management.tools(context.params.id ?? '')) },
  { method: 'PATCH', path: '/admin/mcp-servers/:id', handler: ({ management }) => async (context) => sendJson(context, 200, await management.update(context.params.id ?? '', await readAdminBody(context))) },
  { method: 'DELETE', path: '/admin/mcp-servers/:id', handler: ({ management }) => async (context) => {
    await management.delete(context.params.id ?? '');
    sendJson(context, 200, { object: 'mcp_server', id: context.params.id, deleted: true });
  } },
  ...policyRoutes('account', 'accounts'),
  ...policyRoutes('project', 'projects'),
  ...policyRoutes('key', 'keys'),
]);

/** GET, PUT and DELETE of one kind of owner's MCP policy, `/admin/<collection>/:id/mcp-policy`. */
function policyRoutes(kind: McpPolicyOwner, collection: string): Array<AdminRouteOf<McpScope>> {
  const path = `/admin/${collection}/:id/mcp-policy`;
  return [
    { method: 'GET', path, handler: ({ policies }) => async (context) => sendJson(context, 200, await policies.get(kind, context.params.id ?? '')) },
    { method: 'PUT', path, handler: ({ policies }) => async (context) => sendJson(context, 200, await policies.put(kind, context.params.id ?? '', await readAdminBody(context))) },
    { method: 'DELETE', path, handler: ({ policies }) => async (context) => {
      await policies.delete(kind, context.params.id ?? '');
      sendJson(context, 200, { object: 'mcp_policy', owner_kind: kind, owner_id: context.params.id, deleted: true });
    } },
  ];
}
