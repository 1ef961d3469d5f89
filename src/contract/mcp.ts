import { z } from 'zod';
import { isoTime } from './common.js';
import { accountMcpServer } from './keys.js';

/** A server's last health check: its status and the tools it listed. */
export const mcpServerHealth = accountMcpServer.shape.health.unwrap();
export type McpServerHealthJson = z.infer<typeof mcpServerHealth>;
export type McpToolJson = McpServerHealthJson['tools'][number];

const toolRule = z.enum(['allowed', 'read_only', 'refused']);

/** A server's OAuth client credentials as the admin API shows them: the secret only as set or unset. */
export const mcpServerOAuth = z.strictObject({
  token_url: z.string(),
  client_id: z.string(),
  client_secret: z.enum(['set', 'unset']),
  scope: z.string().nullable(),
  audience: z.string().nullable(),
  auth_method: z.enum(['client_secret_basic', 'client_secret_post']),
});
export type McpServerOAuthJson = z.infer<typeof mcpServerOAuth>;

/** An upstream MCP server as /admin/mcp-servers shows it: headers and a stdio program's environment by name only. */
export const adminMcpServer = z.strictObject({
  object: z.literal('mcp_server'),
  id: z.string(),
  name: z.string(),
  /** Null for a stdio server. */
  url: z.string().nullable(),
  transport: z.enum(['streamable-http', 'sse', 'stdio']),
  header_names: z.array(z.string()),
  oauth: mcpServerOAuth.nullable(),
  /** A stdio server's program (null for HTTP servers). */
  command: z.string().nullable(),
  args: z.array(z.string()).nullable(),
  env_names: z.array(z.string()).nullable(),
  public: z.boolean(),
  enabled: z.boolean(),
  calls_per_minute: z.number().int().nullable(),
  concurrency: z.number().int().nullable(),
  /** USD per tool call as a decimal string (null: free). */
  price_per_call: z.string().nullable(),
  log_payloads: z.boolean(),
  tool_rules: z.strictObject({ default: toolRule, tools: z.record(z.string(), toolRule) }),
  health: mcpServerHealth.nullable(),
  /** The account that registered it (null: the operator's). */
  owner_account_id: z.string().nullable(),
  created_at: isoTime,
  updated_at: isoTime,
});
export type AdminMcpServerJson = z.infer<typeof adminMcpServer>;
export const adminMcpServerList = z.strictObject({ object: z.literal('list'), data: z.array(adminMcpServer) });
export type AdminMcpServerListJson = z.infer<typeof adminMcpServerList>;
/** GET /admin/mcp-servers/:id/tools: the tools the server lists now (checked on the spot). */
export const mcpToolList = z.strictObject({
  object: z.literal('list'),
  data: mcpServerHealth.shape.tools,
  server_id: z.string(),
  checked_at: isoTime,
  latency_ms: mcpServerHealth.shape.latency_ms,
});
export type McpToolListJson = z.infer<typeof mcpToolList>;
