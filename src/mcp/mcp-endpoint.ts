import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Account, ApiKey } from '../domain/records.js';
import { GatewayError } from '../errors/gateway-error.js';
import { authenticate } from '../http/authenticate.js';
import { readBody } from '../http/read-body.js';
import type { RequestContext, RouteHandler } from '../http/request-context.js';
import { sendRaw } from '../http/respond.js';
import { sharedScope } from '../http/route-table.js';
import type { GatewayServices } from '../services.js';
import type { McpServer } from '../storage/repositories/mcp-server-repository.js';
import { ClientSessions } from './client-sessions.js';
import {
  errorMessage, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, readClientMessage, resultMessage, RpcError,
  type JsonRpcRequest,
} from './json-rpc.js';
import { policiesOf, ruleAdmits, serversOfKey, toolRule, type McpPolicies } from './mcp-access.js';
import { callToolMetered, describeError } from './metered-tool-call.js';
import { gatewayToolName, splitToolName } from './tool-names.js';
import { DEFAULT_UPSTREAM_TIMEOUTS, listUpstreamTools, withUpstream, type OutboundPolicy, type UpstreamTimeouts } from './upstream-session.js';

const SESSION_HEADER = 'mcp-session-id';
const VERSION_HEADER = 'mcp-protocol-version';
const GATEWAY_INFO = { name: 'unigate', title: 'unigate MCP gateway', version: '1' };
const JSON_TYPE = 'application/json';

/**
 * The servers a key may use: the ones it lists, or (null) every public one; disabled servers never. With `policies`
 * (mcp-access.ts `policiesOf`), the account's and project's allowlists narrow them further.
 */
export function serversAllowed(key: Pick<ApiKey, 'allowedMcpServers'>, servers: readonly McpServer[], policies?: McpPolicies): McpServer[] {
  return serversOfKey(key, servers, policies);
}

/** One session store per gateway, shared by the endpoint's routes (POST, GET, DELETE; `/mcp` and `/mcp/{server}`). */
const sessionsOf = sharedScope((_services: GatewayServices) => new ClientSessions());

export interface McpEndpointOptions {
  timeouts?: UpstreamTimeouts;
}

/** What one client request works with once authenticated. */
interface McpCall {
  services: GatewayServices;
  context: RequestContext;
  key: ApiKey;
  account: Account;
  /** The account's, project's and key's allowlists, tool rules and limit overrides. */
  policies: McpPolicies;
  outbound: OutboundPolicy;
  /** The servers this request may reach: the key's, narrowed to one for `/mcp/{server}`. */
  servers: McpServer[];
  scope: string | null;
  timeouts: UpstreamTimeouts;
}

/**
 * `/mcp` and `/mcp/{server}`: the MCP Streamable HTTP transport for clients, with the gateway's API keys. Each POST
 * carries one JSON-RPC message and is answered with one JSON body (the transport lets a server answer with JSON
 * rather than a stream); `initialize` opens a session (`Mcp-Session-Id`) that later requests must carry and DELETE
 * ends; GET is answered 405, as the transport allows a server that sends nothing unasked. Tools of the servers the
 * key may use are listed as `<server>__<tool>` and each call goes to its server with the server's own headers.
 */
export function mcpRoute(services: GatewayServices, options: McpEndpointOptions = {}): RouteHandler {
  const sessions = sessionsOf(services);
  const timeouts = options.timeouts ?? DEFAULT_UPSTREAM_TIMEOUTS;
  return async (context) => {
    const { key, account } = await authenticate(context, services);
    const scope = context.params.server ?? null;
    const policies = await policiesOf(services.storage.mcpPolicies, key);
    const servers = await scopedServers(services, key, scope, policies);
    const outbound = { allowPrivateAddresses: services.config.mcp.allowPrivateAddresses };
    const call: McpCall = { services, context, key, account, policies, outbound, servers, scope, timeouts };
    const now = services.clock.now();
    const sessionId = headerOf(context, SESSION_HEADER);

    if (context.method === 'GET') {
      throw new GatewayError('method_not_allowed', 'This MCP endpoint sends nothing unasked: it opens no SSE stream on GET. POST JSON-RPC messages.', { headers: { Allow: 'POST, DELETE' } });
    }
    if (context.method === 'DELETE') {
      if (sessionId === null || !sessions.close(sessionId, key.id, scope, now)) throw unknownSession();
      sendRaw(context, 204, '', JSON_TYPE);
      return;
    }

    const body = await readBody(context, services.config.maxBodyBytes);
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      sendRaw(context, 400, errorMessage(null, PARSE_ERROR, 'The body is not valid JSON.'), JSON_TYPE);
      return;
    }
    const message = readClientMessage(parsed);
    if (message.kind === 'invalid') {
      sendRaw(context, 400, errorMessage(message.id, INVALID_REQUEST, message.message), JSON_TYPE);
      return;
    }

    if (message.kind === 'request' && message.request.method === 'initialize') {
      const requested = message.request.params?.protocolVersion;
      const protocolVersion = typeof requested === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
      const id = sessions.open(key.id, scope, protocolVersion, now);
      const result = {
        protocolVersion,
        capabilities: { tools: { listChanged: false } },
        serverInfo: GATEWAY_INFO,
        instructions: scope === null
          ? 'Tools of several MCP servers, each named <server>__<tool>.'
          : `Tools of the MCP server '${scope}', each named ${scope}__<tool>.`,
      };
      sendRaw(context, 200, resultMessage(message.request.id, result), JSON_TYPE, { 'Mcp-Session-Id': id });
      return;
    }

    // Every other message belongs to a session this key opened on this endpoint.
    if (sessionId === null) {
      sendRaw(context, 400, errorMessage(message.kind === 'request' ? message.request.id : null, INVALID_REQUEST, 'Mcp-Session-Id is required: send initialize first.'), JSON_TYPE);
      return;
    }
    const session = sessions.use(sessionId, key.id, scope, now);
    if (session === null) throw unknownSession();
    const version = headerOf(context, VERSION_HEADER);
    if (version !== null && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      throw new GatewayError('bad_request', `Unsupported MCP-Protocol-Version '${version}'; supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}.`);
    }
    if (message.kind === 'notification') {
      sendRaw(context, 202, '', JSON_TYPE);
      return;
    }
    const { request } = message;
    try {
      sendRaw(context, 200, resultMessage(request.id, await answer(call, request)), JSON_TYPE);
    } catch (error) {
      if (!(error instanceof RpcError)) throw error;
      sendRaw(context, 200, errorMessage(request.id, error.code, error.message, error.data), JSON_TYPE);
    }
  };
}

function headerOf(context: RequestContext, name: string): string | null {
  const value = context.request.headers[name];
  return typeof value === 'string' && value !== '' ? value : null;
}

function unknownSession(): GatewayError {
  return new GatewayError('not_found', 'No such MCP session (it ended or expired); send initialize again.');
}

/** The servers of this request; `/mcp/{server}` for a server the key may not use is as absent as an unknown one. */
async function scopedServers(services: GatewayServices, key: ApiKey, scope: string | null, policies: McpPolicies): Promise<McpServer[]> {
  const allowed = serversAllowed(key, await services.storage.mcpServers.list(), policies);
  if (scope === null) return allowed;
  const server = allowed.find((candidate) => candidate.name === scope);
  if (server === undefined) throw new GatewayError('not_found', `No MCP server '${scope}' for this API key.`);
  return [server];
}

async function answer(call: McpCall, request: JsonRpcRequest): Promise<unknown> {
  switch (request.method) {
    case 'ping': return {};
    case 'tools/list': return { tools: await listTools(call) };
    case 'tools/call': return callTool(call, request.params ?? {});
    // The gateway offers no resources or prompts: empty lists, as a server with none answers.
    case 'resources/list': return { resources: [] };
    case 'resources/templates/list': return { resourceTemplates: [] };
    case 'prompts/list': return { prompts: [] };
    default: throw new RpcError(METHOD_NOT_FOUND, `Method not found: ${request.method}`);
  }
}

/**
 * The union of the servers' tools the key may use (mcp-access.ts `toolRule`: a refused tool, or a `read_only` one
 * its server does not declare read-only, is left out), renamed `<server>__<tool>`. A server that cannot be reached is
 * left out of the list (logged) rather than failing the others.
 */
async function listTools(call: McpCall): Promise<Tool[]> {
  const lists = await Promise.all(call.servers.map(async (server) => {
    try {
      const headers = await call.services.storage.mcpServers.headersOf(server.id);
      const tools = await withUpstream(server, headers, call.timeouts, (client) => listUpstreamTools(client, call.timeouts), call.outbound);
      return tools
        .filter((tool) => ruleAdmits(toolRule(server, tool.name, call.policies), tool))
        .map((tool) => ({ ...tool, name: gatewayToolName(server.name, tool.name) }));
    } catch (error) {
      call.services.logger.warn('mcp server did not list its tools', { server: server.name, error: describeError(error) });
      return [];
    }
  }));
  return lists.flat();
}

async function callTool(call: McpCall, params: Record<string, unknown>): Promise<unknown> {
  const { name } = params;
  const args = params.arguments;
  if (typeof name !== 'string') throw new RpcError(INVALID_PARAMS, 'params.name must be a string.');
  if (args !== undefined && (args === null || typeof args !== 'object' || Array.isArray(args))) throw new RpcError(INVALID_PARAMS, 'params.arguments must be an object.');
  const target = splitToolName(name);
  // A tool of a server the key may not use, or one its rules refuse, is as unknown as one that does not exist.
  const server = target === null ? undefined : call.servers.find((candidate) => candidate.name === target.server);
  if (target === null || server === undefined) throw unknownTool(name);
  const { services, context, key, account } = call;
  const outcome = await callToolMetered(services, {
    key, account, server, tool: target.tool, args: args as Record<string, unknown> | undefined, policies: call.policies, outbound: call.outbound, timeouts: call.timeouts,
    headers: await services.storage.mcpServers.headersOf(server.id), requestId: context.requestId, endpoint: context.path, startedAt: context.startedAt, family: context.family,
  });
  switch (outcome.kind) {
    case 'result': return outcome.result;
    case 'unknown_tool': throw unknownTool(name);
    // The upstream's own protocol errors (an unknown tool, invalid arguments, a timeout) reach the client as such.
    case 'protocol_error': throw new RpcError(outcome.code, outcome.message, outcome.data);
    case 'unreachable': throw new RpcError(INTERNAL_ERROR, outcome.message);
  }
}

function unknownTool(name: string): RpcError {
  return new RpcError(INVALID_PARAMS, `Unknown tool: ${name}`);
}
