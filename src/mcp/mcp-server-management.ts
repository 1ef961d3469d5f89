import { GatewayError } from '../errors/gateway-error.js';
import { parseInput } from '../management/parse-input.js';
import type { Clock } from '../shared/clock.js';
import { newId } from '../shared/ids.js';
import type { McpServer, McpServerPatch, McpServerRepository } from '../storage/repositories/mcp-server-repository.js';
import { createSchema, oauthOf, patchSchema, toolRulesOf } from './mcp-server-input.js';
import { healthToJson, mcpServerToJson } from './mcp-server-json.js';
import { mcpServerNotFound, refuseTakenName, releaseServer } from './mcp-server-registry.js';
import type { AdminMcpServerJson, AdminMcpServerListJson, McpToolListJson } from '../contract/mcp.js';
import { upstreamUrlRefusal, type OutboundPolicy } from './upstream-session.js';

/** The operator's registry of upstream MCP servers (/admin/mcp-servers); accounts' own servers are account-mcp-servers.ts. */
export class McpServerManagement {
  constructor(
    private readonly servers: McpServerRepository,
    private readonly clock: Clock,
    private readonly outbound: OutboundPolicy,
    /** How long a live listing of a server's tools may take (MCP_HEALTH_CHECK_TIMEOUT_SECONDS). */
    private readonly checkTimeoutMs = 10_000,
    /** Local stdio servers may be registered (MCP_ALLOW_STDIO). */
    private readonly allowStdio = false,
  ) {}

  async list(): Promise<AdminMcpServerListJson> {
    return { object: 'list', data: (await this.servers.list()).map(mcpServerToJson) };
  }

  async get(id: string): Promise<AdminMcpServerJson> {
    return mcpServerToJson(await this.existing(id));
  }

  /**
   * The server's tools listed live (a health check run now, and kept as its health like a periodic one): the list,
   * or 502 `upstream_error` with the check's error when the server cannot be reached or listed.
   */
  async tools(id: string): Promise<McpToolListJson> {
    const server = await this.existing(id);
    // The check (and the MCP client it connects with) is loaded by the first listing, not with the admin API.
    const { checkMcpServer } = await import('./mcp-health-checks.js');
    const health = await checkMcpServer({ servers: this.servers, clock: this.clock, outbound: this.outbound }, server, this.checkTimeoutMs);
    await this.servers.recordHealth(server.id, health, server.updatedAt);
    if (health.status !== 'healthy') throw new GatewayError('upstream_error', `MCP server '${server.name}' could not list its tools: ${health.error ?? 'check failed'}`);
    const json = healthToJson(health);
    return { object: 'list', data: json.tools, server_id: server.id, checked_at: json.checked_at, latency_ms: json.latency_ms };
  }

  async create(body: unknown): Promise<AdminMcpServerJson> {
    const input = parseInput(createSchema, body);
    const transport = (input.transport ?? 'streamable-http') as McpServer['transport'];
    const stdio = transport === 'stdio';
    this.refuseMisplacedFields(stdio, input);
    if (stdio && input.command === undefined) throw new GatewayError('bad_request', 'A stdio server needs the command that starts it.', { param: 'command' });
    if (!stdio && input.url === undefined) throw new GatewayError('bad_request', 'An MCP server needs its url.', { param: 'url' });
    if (input.oauth != null && input.oauth.client_secret === undefined) throw new GatewayError('bad_request', 'OAuth client credentials need their client_secret.', { param: 'oauth.client_secret' });
    await refuseTakenName(this.servers, input.name, null);
    if (input.url !== undefined) await this.refusePrivateAddress(input.url);
    if (input.oauth != null) await this.refusePrivateAddress(input.oauth.token_url, 'oauth.token_url');
    const now = this.clock.now();
    const id = newId('mcp', now);
    await this.servers.create({
      id,
      name: input.name,
      url: stdio ? '' : (input.url as string),
      transport,
      headers: input.headers ?? {},
      oauth: input.oauth == null ? null : oauthOf(input.oauth),
      stdio: stdio ? { command: input.command as string, args: input.args ?? [], env: input.env ?? {} } : null,
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

  async update(id: string, body: unknown): Promise<AdminMcpServerJson> {
    const input = parseInput(patchSchema, body);
    const current = await this.existing(id);
    const transport = (input.transport ?? current.transport) as McpServer['transport'];
    const stdio = transport === 'stdio';
    this.refuseMisplacedFields(stdio, input);
    if (stdio && current.transport !== 'stdio' && input.command === undefined) throw new GatewayError('bad_request', 'A stdio server needs the command that starts it.', { param: 'command' });
    if (!stdio && current.transport === 'stdio' && input.url === undefined) throw new GatewayError('bad_request', 'An MCP server over HTTP needs its url.', { param: 'url' });
    if (input.oauth != null && input.oauth.client_secret === undefined && current.oauth?.clientSecretSet !== true) {
      throw new GatewayError('bad_request', 'OAuth client credentials need their client_secret.', { param: 'oauth.client_secret' });
    }
    // The sealed secret is only ever sent where it was given for: a new token endpoint is given the secret anew.
    if (input.oauth != null && input.oauth.client_secret === undefined && current.oauth !== null && input.oauth.token_url !== current.oauth.tokenUrl) {
      throw new GatewayError('bad_request', 'A new token_url needs the client_secret again: the sealed one is not sent to another endpoint.', { param: 'oauth.client_secret' });
    }
    if (input.name !== undefined) await refuseTakenName(this.servers, input.name, id);
    if (input.url !== undefined) await this.refusePrivateAddress(input.url);
    if (input.oauth != null) await this.refusePrivateAddress(input.oauth.token_url, 'oauth.token_url');
    const patch: McpServerPatch = {};
    if (input.name !== undefined) patch.name = input.name;
    if (input.url !== undefined) patch.url = input.url;
    if (input.transport !== undefined) patch.transport = transport;
    if (stdio && current.transport !== 'stdio') Object.assign(patch, { url: '', headers: {}, oauth: null });
    if (!stdio && current.transport === 'stdio') patch.stdio = null;
    // The sealed environment is only ever given to the program it was given for: another program gets it anew.
    const programChanged = (input.command !== undefined && input.command !== current.stdio?.command)
      || (input.args !== undefined && JSON.stringify(input.args) !== JSON.stringify(current.stdio?.args ?? []));
    if (current.stdio !== null && current.stdio.envNames.length > 0 && programChanged && input.env === undefined) {
      throw new GatewayError('bad_request', 'A changed command or args needs the env again: the sealed one is not given to another program.', { param: 'env' });
    }
    if (stdio && (input.command !== undefined || input.args !== undefined || input.env !== undefined)) {
      patch.stdio = { command: input.command ?? current.stdio?.command ?? '', args: input.args ?? current.stdio?.args ?? [], env: input.env };
    }
    if (input.oauth !== undefined) patch.oauth = input.oauth === null ? null : oauthOf(input.oauth);
    if (input.headers !== undefined) patch.headers = input.headers;
    if (input.public !== undefined) patch.public = input.public;
    if (input.enabled !== undefined) patch.enabled = input.enabled;
    if (input.calls_per_minute !== undefined) patch.callsPerMinute = input.calls_per_minute;
    if (input.concurrency !== undefined) patch.concurrency = input.concurrency;
    if (input.price_per_call !== undefined) patch.pricePerCallNano = input.price_per_call;
    if (input.log_payloads !== undefined) patch.logPayloads = input.log_payloads;
    if (input.tool_rules !== undefined) patch.toolRules = toolRulesOf(input.tool_rules, current.toolRules);
    const updated = await this.servers.update(id, patch, this.clock.now());
    if (updated === null) throw mcpServerNotFound(id);
    await releaseServer(this.outbound, id);
    return mcpServerToJson(updated);
  }

  async delete(id: string): Promise<void> {
    if (!(await this.servers.delete(id))) throw mcpServerNotFound(id);
    await releaseServer(this.outbound, id);
  }

  /**
   * A stdio server is refused unless the operator allows them (one registered before may still be disabled, priced or
   * renamed, not given a program); it has a command and no URL or headers, and an HTTP server has no command,
   * arguments or environment.
   */
  private refuseMisplacedFields(stdio: boolean, input: { transport?: string | undefined; url?: string | undefined; headers?: unknown; command?: string | undefined; args?: unknown; env?: unknown; oauth?: unknown }): void {
    const startsProgram = input.transport === 'stdio' || input.command !== undefined || input.args !== undefined || input.env !== undefined;
    if (stdio && !this.allowStdio && startsProgram) {
      throw new GatewayError('bad_request', 'Local stdio MCP servers are off on this gateway: the operator turns them on with MCP_ALLOW_STDIO=true.', { param: 'transport' });
    }
    const misplaced = stdio
      ? (['url', 'headers', 'oauth'] as const).find((field) => input[field] != null && !(field === 'headers' && Object.keys(input.headers as object).length === 0))
      : (['command', 'args', 'env'] as const).find((field) => input[field] !== undefined);
    if (misplaced !== undefined) {
      throw new GatewayError('bad_request', stdio ? `A stdio server takes no '${misplaced}': it is started by its command.` : `'${misplaced}' is only for servers with transport "stdio".`, { param: misplaced });
    }
  }

  private async existing(id: string): Promise<McpServer> {
    const server = await this.servers.get(id);
    if (server === null) throw mcpServerNotFound(id);
    return server;
  }

  /** A server's host must resolve to public addresses only, unless the operator allows private ones. */
  private async refusePrivateAddress(url: string, param = 'url'): Promise<void> {
    const refusal = await upstreamUrlRefusal(url, this.outbound);
    if (refusal !== null) throw new GatewayError('bad_request', `${refusal} Set MCP_ALLOW_PRIVATE_ADDRESSES=true to allow MCP servers on private addresses.`, { param });
  }
}
