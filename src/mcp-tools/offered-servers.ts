import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ApiKey } from '../domain/records.js';
import { GatewayError } from '../errors/gateway-error.js';
import { serversOfKey, serversVisibleTo, type McpPolicies } from '../mcp/mcp-access.js';
import type { GatewayServices } from '../services.js';
import type { McpServer } from '../storage/repositories/mcp-server-repository.js';
import { listToolsForModel, ServerDown, type ToolRunCaller } from './mcp-tool-runs.js';

/** A server a request names (a Responses `mcp` tool, an `mcp_servers` entry), read but not yet looked up. */
export interface RequestedServer {
  /** Where the request names it, for errors: `tools[2]`, `mcp_servers[0]`. */
  param: string;
  /** The name the request gives it, which its items carry (`server_label`, `server_name`). */
  label: string;
  /** The URL the request gives, or null when the label names a registered server. */
  url: string | null;
  /** Whether the request allows the model `tool` of it. */
  allows: (tool: Tool) => boolean;
  /** Whether a call of `tool` waits for the caller's approval. */
  needsApproval: (tool: Tool) => boolean;
  /** Headers the caller adds to the calls (never replacing the server's registered ones). */
  headers: Record<string, string>;
}

/** A requested server found among the registered ones this key may use. */
export interface OfferedServer {
  requested: RequestedServer;
  server: McpServer;
}

/** One tool offered to the model as a function: the function's name and what it stands for. */
export interface OfferedTool {
  functionName: string;
  offered: OfferedServer;
  tool: Tool;
}

/** A server's listing: its tools, or why it could not list them. */
export interface ServerListing {
  offered: OfferedServer;
  tools: Tool[];
  error: string | null;
}

function badRequest(param: string, message: string): GatewayError {
  return new GatewayError('bad_request', message, { param });
}

/** The path a registered server is served at by the gateway itself (`…/mcp/{server}`): naming it names that server. */
function gatewayEndpointName(url: URL): string | null {
  const match = /\/mcp\/([A-Za-z0-9_-]+)\/?$/.exec(url.pathname);
  return match === null ? null : (match[1] as string);
}

/**
 * The registered servers a request names, each among the servers its key may use: by the registered URL, by the
 * gateway's own `/mcp/{server}` URL, or (no URL) by the label as the server's name. Nothing else is reached: a URL
 * that is no registered server's is refused, so a request cannot make the gateway connect anywhere it chooses.
 */
export async function findOfferedServers(services: GatewayServices, key: ApiKey, requested: readonly RequestedServer[], policies: McpPolicies): Promise<OfferedServer[]> {
  const allowed = serversOfKey(key, serversVisibleTo(await services.storage.mcpServers.list(), key.accountId, services.config.mcp.allowAccountServers), policies);
  const labels = new Set<string>();
  return requested.map((request) => {
    if (labels.has(request.label)) throw badRequest(request.param, `Two MCP servers are named '${request.label}'; each needs its own name.`);
    labels.add(request.label);
    let server: McpServer | undefined;
    if (request.url === null) {
      server = allowed.find((candidate) => candidate.name === request.label);
    } else {
      let url: URL;
      try {
        url = new URL(request.url);
      } catch {
        throw badRequest(request.param, `The MCP server URL of '${request.label}' is not a URL.`);
      }
      const byName = gatewayEndpointName(url);
      server = allowed.find((candidate) => candidate.transport !== 'stdio' && new URL(candidate.url).href === url.href) ?? (byName === null ? undefined : allowed.find((candidate) => candidate.name === byName));
    }
    // A server this key may not use is as unknown as one that is not registered.
    if (server === undefined) {
      throw badRequest(request.param, `'${request.label}' is not an MCP server this API key may use: name a server registered with the gateway (its name, its URL, or the gateway's /mcp/{server} URL).`);
    }
    return { requested: request, server };
  });
}

/** Each server's tools, listed at once; a server that cannot list them is reported as such, the others still offered. */
export async function listOfferedTools(services: GatewayServices, caller: ToolRunCaller, servers: readonly OfferedServer[]): Promise<ServerListing[]> {
  return Promise.all(servers.map(async (offered) => {
    try {
      const tools = await listToolsForModel(services, caller, offered.server, offered.requested.headers);
      return { offered, tools: tools.filter(offered.requested.allows), error: null };
    } catch (error) {
      services.logger.warn('mcp server did not list its tools for a model', { server: offered.server.name, error: error instanceof Error ? error.message.slice(0, 300) : 'unknown error' });
      if (error instanceof ServerDown) return { offered, tools: [], error: `The MCP server '${offered.requested.label}' is down by its last health check; it is not tried until a check finds it up again.` };
      return { offered, tools: [], error: `The MCP server '${offered.requested.label}' could not list its tools.` };
    }
  }));
}

/** Function names as every provider takes them: letters, digits, `_` and `-`, at most 64 characters. */
const UNSAFE = /[^A-Za-z0-9_-]/g;
const MAX_NAME = 64;

/**
 * The listed tools as functions for the model, each named `<label>__<tool>` (made safe for every provider, and
 * unique: a clash with the caller's own functions or another tool gets a numbered suffix). The table is the way
 * back from a function name to its server and tool, never the name's parsing.
 */
export function offerTools(listings: readonly ServerListing[], takenNames: ReadonlySet<string>): Map<string, OfferedTool> {
  const offered = new Map<string, OfferedTool>();
  for (const listing of listings) {
    for (const tool of listing.tools) {
      const base = `${listing.offered.requested.label}__${tool.name}`.replace(UNSAFE, '_').slice(0, MAX_NAME);
      let name = base;
      for (let suffix = 2; takenNames.has(name) || offered.has(name); suffix += 1) name = `${base.slice(0, MAX_NAME - String(suffix).length - 1)}_${suffix}`;
      offered.set(name, { functionName: name, offered: listing.offered, tool });
    }
  }
  return offered;
}

/** The function name a past call of `tool` on `label` was offered under (for the conversation's history). */
export function functionNameOf(tools: ReadonlyMap<string, OfferedTool>, label: string, tool: string): string {
  for (const offered of tools.values()) if (offered.offered.requested.label === label && offered.tool.name === tool) return offered.functionName;
  return `${label}__${tool}`.replace(UNSAFE, '_').slice(0, MAX_NAME);
}

/** Header names as HTTP allows them; the transport's and hop-by-hop headers stay the gateway's. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
const RESERVED_HEADERS = new Set(['host', 'content-length', 'content-type', 'accept', 'connection', 'transfer-encoding', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id', 'cookie']);

/** Headers a caller gives for a server's calls, checked: at most 20, single-line, none the gateway sets itself. */
export function callerHeaders(raw: unknown, param: string): Record<string, string> {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw badRequest(param, `'${param}' must be an object of header names and values.`);
  const entries = Object.entries(raw as Record<string, unknown>);
  if (entries.length > 20) throw badRequest(param, `'${param}' may hold at most 20 headers.`);
  const headers: Record<string, string> = {};
  for (const [name, value] of entries) {
    if (!HEADER_NAME.test(name) || RESERVED_HEADERS.has(name.toLowerCase())) throw badRequest(`${param}.${name}`, `'${name}' cannot be sent to an MCP server.`);
    if (typeof value !== 'string' || value.length > 8000 || !HEADER_VALUE.test(value)) throw badRequest(`${param}.${name}`, `The header '${name}' must be a single-line string.`);
    headers[name] = value;
  }
  return headers;
}
