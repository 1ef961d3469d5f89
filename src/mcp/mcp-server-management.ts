import { z } from 'zod';
import { GatewayError } from '../errors/gateway-error.js';
import { nanoToDecimalString } from '../billing/money.js';
import { limitInput } from '../management/limit-input.js';
import { nonNegativeUsdInput } from '../management/money-input.js';
import { isoTime } from '../management/time-input.js';
import { parseInput } from '../management/parse-input.js';
import type { Clock } from '../shared/clock.js';
import { newId } from '../shared/ids.js';
import { hasUrlCredentials } from '../shared/url-credentials.js';
import { MCP_TOOL_RULES, MCP_TRANSPORTS, type McpServer, type McpServerHealth, type McpServerPatch, type McpServerRepository, type McpToolRule, type McpToolRules } from '../storage/repositories/mcp-server-repository.js';
import { TOOL_NAME_SEPARATOR } from './tool-names.js';
import { checkMcpServer } from './mcp-health-checks.js';
import { upstreamUrlRefusal, type OutboundPolicy } from './upstream-session.js';

/**
 * A server's name: what its tools are prefixed with (`<server>__<tool>`) and the `{server}` of `/mcp/{server}`.
 * Runs of letters and digits joined by single `_` or `-`: never the separator, nor a `_` at either end that would
 * merge with it, so a prefixed name splits back at its first `__`.
 */
const serverName = z.string().min(1).max(64).regex(/^[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*$/, `must be letters and digits joined by single "_" or "-" (never "${TOOL_NAME_SEPARATOR}")`);

/** An http(s) URL without credentials (they go in headers, sealed) or fragment. */
const serverUrl = z.string().max(2000).refine((text) => {
  try {
    const url = new URL(text);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.hash === '' && !hasUrlCredentials(text);
  } catch {
    return false;
  }
}, 'must be an http(s) URL without user name, password or fragment');

/** Header names as HTTP allows them; values printable and single-line. Hop-by-hop and MCP's own headers are the gateway's. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'content-type', 'accept', 'connection', 'transfer-encoding', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id']);
const headers = z.record(
  z.string().min(1).max(100).regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be an HTTP header name').refine((name) => !RESERVED_HEADERS.has(name.toLowerCase()), 'is set by the gateway'),
  z.string().max(8000).regex(/^[\t\x20-\x7e\x80-\xff]*$/, 'must be a single-line header value'),
).refine((value) => Object.keys(value).length <= 20, 'at most 20 headers');

/** A tool rule: `allowed`, `read_only` (only where the server declares the tool read-only) or `refused`. */
export const toolRuleInput = z.enum(MCP_TOOL_RULES as [McpToolRule, ...McpToolRule[]]);
/** A tool's name as its server gives it (any MCP tool name). */
const upstreamToolName = z.string().min(1).max(128);
const toolRulesInput = z.object({
  default: toolRuleInput.optional(),
  tools: z.record(upstreamToolName, toolRuleInput).refine((value) => Object.keys(value).length <= 500, 'at most 500 tools').optional(),
}).strict();

/** What a server is called with and what a call of it may cost or take (each optional on create, null clears). */
const settings = {
  calls_per_minute: limitInput,
  concurrency: limitInput,
  price_per_call: nonNegativeUsdInput.nullable().optional(),
  log_payloads: z.boolean().optional(),
  tool_rules: toolRulesInput.optional(),
};

const createSchema = z.object({
  name: serverName,
  url: serverUrl,
  transport: z.enum(MCP_TRANSPORTS as [string, ...string[]]).optional(),
  headers: headers.optional(),
  public: z.boolean().optional(),
  enabled: z.boolean().optional(),
  ...settings,
}).strict();
const patchSchema = z.object({
  name: serverName.optional(),
  url: serverUrl.optional(),
  transport: z.enum(MCP_TRANSPORTS as [string, ...string[]]).optional(),
  headers: headers.optional(),
  public: z.boolean().optional(),
  enabled: z.boolean().optional(),
  ...settings,
}).strict();

function toolRulesOf(input: z.infer<typeof toolRulesInput>, base: McpToolRules): McpToolRules {
  return { default: input.default ?? base.default, tools: input.tools ?? base.tools };
}

function healthToJson(health: McpServerHealth): Record<string, unknown> {
  return {
    status: health.status,
    error: health.error,
    checked_at: isoTime(health.checkedAt),
    latency_ms: health.latencyMs,
    tool_count: health.tools.length,
    tools: health.tools.map((tool) => ({ name: tool.name, description: tool.description, read_only: tool.readOnly })),
  };
}

/** The admin view of a server: its headers by name only, their values never. */
export function mcpServerToJson(server: McpServer): Record<string, unknown> {
  return {
    object: 'mcp_server',
    id: server.id,
    name: server.name,
    url: server.url,
    transport: server.transport,
    header_names: server.headerNames,
    public: server.public,
    enabled: server.enabled,
    calls_per_minute: server.callsPerMinute,
    concurrency: server.concurrency,
    price_per_call: server.pricePerCallNano === null ? null : nanoToDecimalString(server.pricePerCallNano),
    log_payloads: server.logPayloads,
    tool_rules: { default: server.toolRules.default, tools: server.toolRules.tools },
    health: server.health === null ? null : healthToJson(server.health),
    created_at: isoTime(server.createdAt),
    updated_at: isoTime(server.updatedAt),
  };
}

/** The operator's registry of upstream MCP servers (/admin/mcp-servers). */
export class McpServerManagement {
  constructor(
    private readonly servers: McpServerRepository,
    private readonly clock: Clock,
    private readonly outbound: OutboundPolicy,
    /** How long a live listing of a server's tools may take (MCP_HEALTH_CHECK_TIMEOUT_SECONDS). */
    private readonly checkTimeoutMs = 10_000,
  ) {}

  async list(): Promise<{ object: 'list'; data: Record<string, unknown>[] }> {
    return { object: 'list', data: (await this.servers.list()).map(mcpServerToJson) };
  }

  async get(id: string): Promise<Record<string, unknown>> {
    return mcpServerToJson(await this.existing(id));
  }

  /**
   * The server's tools listed live (a health check run now, and kept as its health like a periodic one): the list,
   * or 502 `upstream_error` with the check's error when the server cannot be reached or listed.
   */
  async tools(id: string): Promise<Record<string, unknown>> {
    const server = await this.existing(id);
    const health = await checkMcpServer({ servers: this.servers, clock: this.clock, outbound: this.outbound }, server, this.checkTimeoutMs);
    await this.servers.recordHealth(server.id, health, server.updatedAt);
    if (health.status !== 'healthy') throw new GatewayError('upstream_error', `MCP server '${server.name}' could not list its tools: ${health.error ?? 'check failed'}`);
    const json = healthToJson(health);
    return { object: 'list', data: json.tools, server_id: server.id, checked_at: json.checked_at, latency_ms: json.latency_ms };
  }

  async create(body: unknown): Promise<Record<string, unknown>> {
    const input = parseInput(createSchema, body);
    await this.refuseTakenName(input.name, null);
    await this.refusePrivateAddress(input.url);
    const now = this.clock.now();
    const id = newId('mcp', now);
    await this.servers.create({
      id,
      name: input.name,
      url: input.url,
      transport: (input.transport ?? 'streamable-http') as McpServer['transport'],
      headers: input.headers ?? {},
      public: input.public ?? false,
      enabled: input.enabled ?? true,
      createdAt: now,
      updatedAt: now,
      callsPerMinute: input.calls_per_minute ?? null,
      concurrency: input.concurrency ?? null,
      pricePerCallNano: input.price_per_call ?? null,
      logPayloads: input.log_payloads ?? false,
      ...(input.tool_rules === undefined ? {} : { toolRules: toolRulesOf(input.tool_rules, { default: 'allowed', tools: {} }) }),
    });
    return mcpServerToJson(await this.existing(id));
  }

  async update(id: string, body: unknown): Promise<Record<string, unknown>> {
    const input = parseInput(patchSchema, body);
    const current = await this.existing(id);
    if (input.name !== undefined) await this.refuseTakenName(input.name, id);
    if (input.url !== undefined) await this.refusePrivateAddress(input.url);
    const patch: McpServerPatch = {};
    if (input.name !== undefined) patch.name = input.name;
    if (input.url !== undefined) patch.url = input.url;
    if (input.transport !== undefined) patch.transport = input.transport as McpServer['transport'];
    if (input.headers !== undefined) patch.headers = input.headers;
    if (input.public !== undefined) patch.public = input.public;
    if (input.enabled !== undefined) patch.enabled = input.enabled;
    if (input.calls_per_minute !== undefined) patch.callsPerMinute = input.calls_per_minute;
    if (input.concurrency !== undefined) patch.concurrency = input.concurrency;
    if (input.price_per_call !== undefined) patch.pricePerCallNano = input.price_per_call;
    if (input.log_payloads !== undefined) patch.logPayloads = input.log_payloads;
    if (input.tool_rules !== undefined) patch.toolRules = toolRulesOf(input.tool_rules, current.toolRules);
    const updated = await this.servers.update(id, patch, this.clock.now());
    if (updated === null) throw notFound(id);
    return mcpServerToJson(updated);
  }

  async delete(id: string): Promise<void> {
    if (!(await this.servers.delete(id))) throw notFound(id);
  }

  private async existing(id: string): Promise<McpServer> {
    const server = await this.servers.get(id);
    if (server === null) throw notFound(id);
    return server;
  }

  /** A server's host must resolve to public addresses only, unless the operator allows private ones. */
  private async refusePrivateAddress(url: string): Promise<void> {
    const refusal = await upstreamUrlRefusal(url, this.outbound);
    if (refusal !== null) throw new GatewayError('bad_request', `${refusal} Set MCP_ALLOW_PRIVATE_ADDRESSES=true to allow MCP servers on private addresses.`, { param: 'url' });
  }

  private async refuseTakenName(name: string, exceptId: string | null): Promise<void> {
    const holder = await this.servers.getByName(name);
    if (holder !== null && holder.id !== exceptId) throw new GatewayError('conflict', `An MCP server named '${name}' exists already.`, { param: 'name' });
  }
}

function notFound(id: string): GatewayError {
  return new GatewayError('not_found', `No MCP server '${id}'.`);
}
