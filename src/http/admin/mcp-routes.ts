import type { GatewayServices } from '../../services.js';
import { McpServerManagement } from '../../mcp/mcp-server-management.js';
import { sendJson } from '../respond.js';
import { readAdminBody } from './admin-guard.js';
import { adminRoutes } from './admin-route.js';

/** The registry of upstream MCP servers the gateway's /mcp serves, /admin/mcp-servers. */
export const MCP_ADMIN_ROUTES = adminRoutes((services: GatewayServices) => ({ management: new McpServerManagement(services.storage.mcpServers, services.clock) }), [
  { method: 'GET', path: '/admin/mcp-servers', handler: ({ management }) => async (context) => sendJson(context, 200, await management.list()) },
  { method: 'POST', path: '/admin/mcp-servers', handler: ({ management }) => async (context) => sendJson(context, 201, await management.create(await readAdminBody(context))) },
  { method: 'GET', path: '/admin/mcp-servers/:id', handler: ({ management }) => async (context) => sendJson(context, 200, await management.get(context.params.id ?? '')) },
  { method: 'PATCH', path: '/admin/mcp-servers/:id', handler: ({ management }) => async (context) => sendJson(context, 200, await management.update(context.params.id ?? '', await readAdminBody(context))) },
  { method: 'DELETE', path: '/admin/mcp-servers/:id', handler: ({ management }) => async (context) => {
    await management.delete(context.params.id ?? '');
    sendJson(context, 200, { object: 'mcp_server', id: context.params.id, deleted: true });
  } },
]);
