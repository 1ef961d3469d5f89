import type { AccountMcpServerJson } from '../contract/keys.js';
import type { AdminMcpServerJson, McpServerHealthJson } from '../contract/mcp.js';
import { nanoToDecimalString } from '../billing/money.js';
import { isoTime } from '../management/time-input.js';
import type { McpServer, McpServerHealth } from '../storage/repositories/mcp-server-repository.js';

/** The account's view of its own server: what it set, its headers by name only, its last health check. */
export function accountMcpServerToJson(server: McpServer): AccountMcpServerJson {
  const health = server.health;
  return {
    object: 'mcp_server',
    id: server.id,
    name: server.name,
    url: server.url,
    transport: server.transport === 'sse' ? 'sse' : 'streamable-http',
    header_names: server.headerNames,
    enabled: server.enabled,
    price_per_call: server.pricePerCallNano === null ? null : nanoToDecimalString(server.pricePerCallNano),
    health: health === null ? null : healthToJson(health),
    created_at: isoTime(server.createdAt),
    updated_at: isoTime(server.updatedAt),
  };
}

/** A server's last health check: its status and the tools it listed. */
export function healthToJson(health: McpServerHealth): McpServerHealthJson {
  return {
    status: health.status,
    error: health.error,
    checked_at: isoTime(health.checkedAt),
    latency_ms: health.latencyMs,
    tool_count: health.tools.length,
    tools: health.tools.map((tool) => ({ name: tool.name, description: tool.description, read_only: tool.readOnly })),
  };
}

/** The admin view of a server: its headers by name only, their values never; its secrets only as set or not. */
export function mcpServerToJson(server: McpServer): AdminMcpServerJson {
  return {
    object: 'mcp_server',
    id: server.id,
    name: server.name,
    url: server.transport === 'stdio' ? null : server.url,
    transport: server.transport,
    header_names: server.headerNames,
    oauth: server.oauth === null ? null : {
      token_url: server.oauth.tokenUrl,
      client_id: server.oauth.clientId,
      client_secret: server.oauth.clientSecretSet ? 'set' : 'unset',
      scope: server.oauth.scope,
      audience: server.oauth.audience,
      auth_method: server.oauth.authMethod,
    },
    command: server.stdio?.command ?? null,
    args: server.stdio?.args ?? null,
    env_names: server.stdio?.envNames ?? null,
    public: server.public,
    enabled: server.enabled,
    calls_per_minute: server.callsPerMinute,
    concurrency: server.concurrency,
    price_per_call: server.pricePerCallNano === null ? null : nanoToDecimalString(server.pricePerCallNano),
    log_payloads: server.logPayloads,
    tool_rules: { default: server.toolRules.default, tools: server.toolRules.tools },
    health: server.health === null ? null : healthToJson(server.health),
    owner_account_id: server.ownerAccountId,
    created_at: isoTime(server.createdAt),
    updated_at: isoTime(server.updatedAt),
  };
}
