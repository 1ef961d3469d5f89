import type { AccountMcpServerJson, AccountMcpServerListJson } from '../contract/keys.js';
import { GatewayError } from '../errors/gateway-error.js';
import { countOutboundAction, type OutboundAction } from '../limits/outbound-action-limits.js';
import type { RateLimiter } from '../limits/rate-limiter.js';
import { parseInput } from '../management/parse-input.js';
import type { Clock } from '../shared/clock.js';
import { newId } from '../shared/ids.js';
import type { McpServer, McpServerPatch, McpServerRepository } from '../storage/repositories/mcp-server-repository.js';
import { accountCreateSchema, accountPatchSchema } from './mcp-server-input.js';
import { accountMcpServerToJson } from './mcp-server-json.js';
import { mcpServerNotFound, refuseTakenName, releaseServer } from './mcp-server-registry.js';
import { upstreamUrlRefusal, type OutboundPolicy } from './upstream-session.js';

/**
 * A check run now connects to an address the account typed: a few a minute per server (four times that per account a
 * minute, forty an hour), on the deployment's shared limiter. The background checks keep running whatever is asked.
 */
export const CHECK_NOW: OutboundAction = { action: 'mcp-check', what: 'MCP server checks', scope: 'server', perMinute: 3 };

/** What a check run now needs: the shared limiter and how long one check may take (MCP_HEALTH_CHECK_TIMEOUT_SECONDS). */
export interface CheckNowDependencies {
  limiter: RateLimiter;
  timeoutMs: number;
}

/**
 * The servers an account registers for its own keys (the console's MCP servers page): over HTTP only, on a public
 * address whatever the operator allows for its own servers, under a name no other server has. Another account's
 * server, or the operator's, is as absent to an account as one that does not exist.
 */
export class AccountMcpServers {
  constructor(
    private readonly servers: McpServerRepository,
    private readonly clock: Clock,
    private readonly outbound: OutboundPolicy,
    private readonly checks: CheckNowDependencies,
  ) {}

  /** The servers the account registered for itself, and whether it may register or change them now. */
  async list(accountId: string, accountServersAllowed: boolean): Promise<AccountMcpServerListJson> {
    const owned = (await this.servers.list()).filter((server) => server.ownerAccountId === accountId);
    return { object: 'list', data: owned.map(accountMcpServerToJson), account_servers_allowed: accountServersAllowed };
  }

  async create(accountId: string, body: unknown): Promise<AccountMcpServerJson> {
    const input = parseInput(accountCreateSchema, body);
    await refuseTakenName(this.servers, input.name, null);
    await refusePrivateAddress(input.url);
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

  async update(accountId: string, id: string, body: unknown): Promise<AccountMcpServerJson> {
    const input = parseInput(accountPatchSchema, body);
    await this.owned(accountId, id);
    if (input.name !== undefined) await refuseTakenName(this.servers, input.name, id);
    if (input.url !== undefined) await refusePrivateAddress(input.url);
    const patch: McpServerPatch = {};
    if (input.name !== undefined) patch.name = input.name;
    if (input.url !== undefined) patch.url = input.url;
    if (input.transport !== undefined) patch.transport = input.transport;
    if (input.headers !== undefined) patch.headers = input.headers;
    if (input.enabled !== undefined) patch.enabled = input.enabled;
    const updated = await this.servers.update(id, patch, this.clock.now());
    if (updated === null) throw mcpServerNotFound(id);
    await releaseServer(this.outbound, id);
    return accountMcpServerToJson(updated);
  }

  async delete(accountId: string, id: string): Promise<void> {
    await this.owned(accountId, id);
    if (!(await this.servers.delete(id))) throw mcpServerNotFound(id);
    await releaseServer(this.outbound, id);
  }

  /**
   * Runs the health check of one of the account's enabled servers now, as the background check would (connect with its
   * headers, list its tools), and keeps the result as its health; answers the server with it. Another account's
   * server is absent (404); a disabled one is not connected to (409); past the limit, 429.
   */
  async check(accountId: string, id: string): Promise<AccountMcpServerJson> {
    const server = await this.owned(accountId, id);
    if (!server.enabled) throw new GatewayError('conflict', `MCP server '${server.name}' is disabled: enable it to check it.`);
    const now = this.clock.now();
    await countOutboundAction(this.checks.limiter, CHECK_NOW, accountId, server.id, now);
    // The check (and the MCP client it connects with) is loaded by the first check, not with the console.
    const { checkMcpServer } = await import('./mcp-health-checks.js');
    const health = await checkMcpServer({ servers: this.servers, clock: this.clock, outbound: this.outbound }, server, this.checks.timeoutMs);
    await this.servers.recordHealth(server.id, health, server.updatedAt);
    return accountMcpServerToJson(await this.owned(accountId, id));
  }

  private async owned(accountId: string, id: string): Promise<McpServer> {
    const server = await this.servers.get(id);
    if (server === null || server.ownerAccountId !== accountId) throw mcpServerNotFound(id);
    return server;
  }
}

/** An account's server must resolve to public addresses only, whatever the operator allows for its own servers. */
async function refusePrivateAddress(url: string): Promise<void> {
  const refusal = await upstreamUrlRefusal(url, { allowPrivateAddresses: false });
  if (refusal !== null) throw new GatewayError('bad_request', `${refusal} An account's MCP server must be on a public address.`, { param: 'url' });
}
