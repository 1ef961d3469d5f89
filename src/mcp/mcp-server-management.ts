import { z } from 'zod';
import type { AccountMcpServerJson, AccountMcpServerListJson } from '../contract/keys.js';
import { GatewayError } from '../errors/gateway-error.js';
import { nanoToDecimalString } from '../billing/money.js';
import { limitInput } from '../management/limit-input.js';
import { nonNegativeUsdInput } from '../management/money-input.js';
import { isoTime } from '../management/time-input.js';
import { parseInput } from '../management/parse-input.js';
import type { Clock } from '../shared/clock.js';
import { newId } from '../shared/ids.js';
import { hasUrlCredentials } from '../shared/url-credentials.js';
import { MCP_OAUTH_AUTH_METHODS, MCP_TOOL_RULES, MCP_TRANSPORTS, type McpOAuthInput, type McpServer, type McpServerHealth, type McpServerPatch, type McpServerRepository, type McpToolRule, type McpToolRules } from '../storage/repositories/mcp-server-repository.js';
import { TOOL_NAME_SEPARATOR } from './tool-names.js';
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
/** OAuth 2.1 client credentials: the token endpoint (an http(s) URL like a server's), the client, and what to ask for. */
const oauthInput = z.object({
  token_url: serverUrl,
  client_id: z.string().min(1).max(500),
  /** Required when credentials are first given; left out on a change, the sealed one is kept. */
  client_secret: z.string().min(1).max(4000).optional(),
  scope: z.string().min(1).max(1000).regex(/^[\x21\x23-\x5b\x5d-\x7e]+(?: [\x21\x23-\x5b\x5d-\x7e]+)*$/, 'must be space-separated scope tokens').nullable().optional(),
  audience: z.string().min(1).max(1000).nullable().optional(),
  auth_method: z.enum(MCP_OAUTH_AUTH_METHODS as [string, ...string[]]).optional(),
}).strict();

/** A program's text: no NUL (it cannot be passed to a process). */
const programText = (max: number) => z.string().max(max).refine((text) => !text.includes('\0'), 'must not contain NUL');
/** A local server's program, started without a shell: the command, its arguments and extra environment variables. */
const stdioFields = {
  command: programText(1000).refine((text) => text.trim() !== '', 'must name a program').optional(),
  args: z.array(programText(4000)).max(100).optional(),
  env: z.record(z.string().min(1).max(200).regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name'), programText(8000))
    .refine((value) => Object.keys(value).length <= 50, 'at most 50 variables').optional(),
};

const settings = {
  calls_per_minute: limitInput,
  concurrency: limitInput,
  price_per_call: nonNegativeUsdInput.nullable().optional(),
  log_payloads: z.boolean().optional(),
  tool_rules: toolRulesInput.optional(),
};

const createSchema = z.object({
  name: serverName,
  url: serverUrl.optional(),
  oauth: oauthInput.nullable().optional(),
  ...stdioFields,
  transport: z.enum(MCP_TRANSPORTS as [string, ...string[]]).optional(),
  headers: headers.optional(),
  public: z.boolean().optional(),
  enabled: z.boolean().optional(),
  ...settings,
}).strict();
/** A change takes the same fields as a creation, the name among them optional too. */
const patchSchema = createSchema.partial({ name: true });

/**
 * What an account may give its own server: its address over HTTP (never a program to start), the static headers it
 * is called with (sealed like the operator's), and whether it is on. Price, limits, logging and visibility stay the
 * operator's to set.
 */
const accountCreateSchema = z.object({
  name: serverName,
  url: serverUrl,
  transport: z.enum(['streamable-http', 'sse']).optional(),
  headers: headers.optional(),
  enabled: z.boolean().optional(),
}).strict();
const accountPatchSchema = accountCreateSchema.partial();

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

function toolRulesOf(input: z.infer<typeof toolRulesInput>, base: McpToolRules): McpToolRules {
  return { default: input.default ?? base.default, tools: input.tools ?? base.tools };
}

function healthToJson(health: McpServerHealth): NonNullable<AccountMcpServerJson['health']> {
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
export function mcpServerToJson(server: McpServer): Record<string, unknown> {
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

/** The operator's registry of upstream MCP servers (/admin/mcp-servers). */
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
    // The check (and the MCP client it connects with) is loaded by the first listing, not with the admin API.
    const { checkMcpServer } = await import('./mcp-health-checks.js');
    const health = await checkMcpServer({ servers: this.servers, clock: this.clock, outbound: this.outbound }, server, this.checkTimeoutMs);
    await this.servers.recordHealth(server.id, health, server.updatedAt);
    if (health.status !== 'healthy') throw new GatewayError('upstream_error', `MCP server '${server.name}' could not list its tools: ${health.error ?? 'check failed'}`);
    const json = healthToJson(health);
    return { object: 'list', data: json.tools, server_id: server.id, checked_at: json.checked_at, latency_ms: json.latency_ms };
  }

  async create(body: unknown): Promise<Record<string, unknown>> {
    const input = parseInput(createSchema, body);
    const transport = (input.transport ?? 'streamable-http') as McpServer['transport'];
    const stdio = transport === 'stdio';
    this.refuseMisplacedFields(stdio, input);
    if (stdio && input.command === undefined) throw new GatewayError('bad_request', 'A stdio server needs the command that starts it.', { param: 'command' });
    if (!stdio && input.url === undefined) throw new GatewayError('bad_request', 'An MCP server needs its url.', { param: 'url' });
    if (input.oauth != null && input.oauth.client_secret === undefined) throw new GatewayError('bad_request', 'OAuth client credentials need their client_secret.', { param: 'oauth.client_secret' });
    await this.refuseTakenName(input.name, null);
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

  async update(id: string, body: unknown): Promise<Record<string, unknown>> {
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
    if (input.name !== undefined) await this.refuseTakenName(input.name, id);
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
    if (updated === null) throw notFound(id);
    await this.release(id);
    return mcpServerToJson(updated);
  }

  async delete(id: string): Promise<void> {
    if (!(await this.servers.delete(id))) throw notFound(id);
    await this.release(id);
  }

  /** The servers the account registered for itself. */
  async listOwned(accountId: string): Promise<AccountMcpServerListJson> {
    const owned = (await this.servers.list()).filter((server) => server.ownerAccountId === accountId);
    return { object: 'list', data: owned.map(accountMcpServerToJson) };
  }

  /**
   * An account registers a server for its own keys: over HTTP only, on a public address whatever the operator allows
   * for its own servers, under a name no other server has (so its tools' `<server>__<tool>` names never clash).
   */
  async createOwned(accountId: string, body: unknown): Promise<AccountMcpServerJson> {
    const input = parseInput(accountCreateSchema, body);
    await this.refuseTakenName(input.name, null);
    await this.refusePrivateAddressForAccount(input.url);
    const now = this.clock.now();
    const id = newId('mcp', now);
    await this.servers.create({
      id,
      name: input.name,
      url: input.url,
      transport: input.transport ?? 'streamable-http',
      headers: input.headers ?? {},
      public: false,
      enabled: input.enabled ?? true,
      createdAt: now,
      updatedAt: now,
      ownerAccountId: accountId,
    });
    return accountMcpServerToJson(await this.owned(accountId, id));
  }

  async updateOwned(accountId: string, id: string, body: unknown): Promise<AccountMcpServerJson> {
    const input = parseInput(accountPatchSchema, body);
    await this.owned(accountId, id);
    if (input.name !== undefined) await this.refuseTakenName(input.name, id);
    if (input.url !== undefined) await this.refusePrivateAddressForAccount(input.url);
    const patch: McpServerPatch = {};
    if (input.name !== undefined) patch.name = input.name;
    if (input.url !== undefined) patch.url = input.url;
    if (input.transport !== undefined) patch.transport = input.transport;
    if (input.headers !== undefined) patch.headers = input.headers;
    if (input.enabled !== undefined) patch.enabled = input.enabled;
    const updated = await this.servers.update(id, patch, this.clock.now());
    if (updated === null) throw notFound(id);
    await this.release(id);
    return accountMcpServerToJson(updated);
  }

  async deleteOwned(accountId: string, id: string): Promise<void> {
    await this.owned(accountId, id);
    await this.delete(id);
  }

  /** Another account's server, or the operator's, is as absent to an account as one that does not exist. */
  private async owned(accountId: string, id: string): Promise<McpServer> {
    const server = await this.servers.get(id);
    if (server === null || server.ownerAccountId !== accountId) throw notFound(id);
    return server;
  }

  /** An account's server must resolve to public addresses only, whatever the operator allows for its own servers. */
  private async refusePrivateAddressForAccount(url: string): Promise<void> {
    const refusal = await upstreamUrlRefusal(url, { allowPrivateAddresses: false });
    if (refusal !== null) throw new GatewayError('bad_request', `${refusal} An account's MCP server must be on a public address.`, { param: 'url' });
  }

  /**
   * A changed or deleted server's token and process are not used again (its process is ended now); before the token
   * source or the processes are first made, none is held.
   */
  private async release(id: string): Promise<void> {
    this.outbound.oauthTokens?.loaded()?.forget(id);
    await this.outbound.stdioProcesses?.loaded()?.stop(id);
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
    if (server === null) throw notFound(id);
    return server;
  }

  /** A server's host must resolve to public addresses only, unless the operator allows private ones. */
  private async refusePrivateAddress(url: string, param = 'url'): Promise<void> {
    const refusal = await upstreamUrlRefusal(url, this.outbound);
    if (refusal !== null) throw new GatewayError('bad_request', `${refusal} Set MCP_ALLOW_PRIVATE_ADDRESSES=true to allow MCP servers on private addresses.`, { param });
  }

  private async refuseTakenName(name: string, exceptId: string | null): Promise<void> {
    const holder = await this.servers.getByName(name);
    if (holder !== null && holder.id !== exceptId) throw new GatewayError('conflict', `An MCP server named '${name}' exists already.`, { param: 'name' });
  }
}

function oauthOf(input: z.infer<typeof oauthInput>): McpOAuthInput {
  return {
    settings: {
      tokenUrl: input.token_url,
      clientId: input.client_id,
      scope: input.scope ?? null,
      audience: input.audience ?? null,
      authMethod: (input.auth_method ?? 'client_secret_basic') as McpOAuthInput['settings']['authMethod'],
    },
    clientSecret: input.client_secret,
  };
}

function notFound(id: string): GatewayError {
  return new GatewayError('not_found', `No MCP server '${id}'.`);
}
