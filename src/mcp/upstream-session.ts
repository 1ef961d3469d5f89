import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { loadMcpClientSdk } from './mcp-sdk.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, GetPromptResult, Prompt, ReadResourceResult, Resource, ResourceTemplate, Tool } from '@modelcontextprotocol/sdk/types.js';
import { isIP } from 'node:net';
import { undiciModule } from '../shared/undici-module.js';
import type { McpServer } from '../storage/repositories/mcp-server-repository.js';
import { addressCheckedLookup, hostRefusal } from '../webhooks/endpoint-address.js';
import type { OAuthTokens } from './oauth-tokens.js';
import type { StdioProcesses } from './stdio-processes.js';
import type { LoadOnce } from '../shared/load-once.js';

/** How long one upstream step (connecting, listing, a call) may take before the client gets an error instead. */
export interface UpstreamTimeouts {
  connectMs: number;
  listMs: number;
  callMs: number;
}

export const DEFAULT_UPSTREAM_TIMEOUTS: UpstreamTimeouts = { connectMs: 10_000, listMs: 15_000, callMs: 120_000 };

/** Which addresses upstream MCP servers may have (MCP_ALLOW_PRIVATE_ADDRESSES). */
export interface OutboundPolicy {
  allowPrivateAddresses: boolean;
  /**
   * Access tokens of servers registered with OAuth client credentials (absent: such servers are not reached), made
   * at their first use: a gateway that reaches no MCP server never loads them.
   */
  oauthTokens?: LoadOnce<OAuthTokens>;
  /** The processes of local stdio servers (absent, as when MCP_ALLOW_STDIO is off: such servers are not reached), made at their first use. */
  stdioProcesses?: LoadOnce<StdioProcesses>;
}

/** A server that cannot be reached the way it is registered on this gateway (stdio servers off, no token source). */
export class UpstreamNotServed extends Error {
  override name = 'UpstreamNotServed';
}

/** Public addresses only: what a caller that names no policy gets. */
export const PUBLIC_ADDRESSES_ONLY: OutboundPolicy = { allowPrivateAddresses: false };

/** A server's address refused by the outbound policy (at registration, or as a connection resolved it). */
export class UpstreamAddressRefused extends Error {
  override name = 'UpstreamAddressRefused';
}

/** Why the server at `url` may not be reached under `policy` (its host resolved now), or null. */
export async function upstreamUrlRefusal(url: string, policy: OutboundPolicy): Promise<string | null> {
  // With private addresses allowed no address is refused, so the name need not resolve yet.
  if (policy.allowPrivateAddresses) return null;
  return hostRefusal(new URL(url).hostname, { allowHttpLoopback: false, allowPrivateAddresses: policy.allowPrivateAddresses });
}

/** What the gateway calls this name and version when it connects upstream. */
export const CLIENT_INFO = { name: 'unigate-mcp-gateway', version: '1' };

/**
 * One connection to an upstream MCP server, opened for one client request and closed after it, with the official
 * SDK's client over the server's transport (Streamable HTTP, or the older HTTP+SSE): the SDK negotiates the protocol
 * revision, keeps the upstream session and speaks each transport's framing, so the gateway never re-implements them.
 * A stdio server's session is its long-running process's, shared by every call and never closed here; a server with
 * OAuth client credentials is sent a bearer token, and a 401 gets one new token and one retry of the request.
 */
export async function withUpstream<T>(
  server: McpServer,
  headers: Record<string, string>,
  timeouts: UpstreamTimeouts,
  use: (client: Client) => Promise<T>,
  policy: OutboundPolicy = PUBLIC_ADDRESSES_ONLY,
): Promise<T> {
  if (server.transport === 'stdio') {
    if (policy.stdioProcesses === undefined) throw new UpstreamNotServed(`The MCP server '${server.name}' is a local stdio server and MCP_ALLOW_STDIO is off.`);
    return (await policy.stdioProcesses.get()).use(server, timeouts.connectMs, use);
  }
  const url = new URL(server.url);
  // An account's server is never reached on a private address: the operator's allowance is for its own servers.
  const addresses = { allowHttpLoopback: false, allowPrivateAddresses: policy.allowPrivateAddresses && server.ownerAccountId === null };
  // An IP literal is connected to without a lookup: it is checked here; a host name is checked by the agent's
  // lookup on every connection, so an address that changed since registration (DNS rebinding) is refused too.
  const refusedLiteral = isLiteral(url.hostname) ? await hostRefusal(url.hostname, addresses) : null;
  if (refusedLiteral !== null) throw new UpstreamAddressRefused(refusedLiteral);
  const [{ Client, SSEClientTransport, StreamableHTTPClientTransport }, { Agent, fetch: undiciFetch }] = await Promise.all([loadMcpClientSdk(), undiciModule.get()]);
  const agent = new Agent({ connect: { lookup: addressCheckedLookup(addresses, (reason) => new UpstreamAddressRefused(reason)) as never } });
  const checkedFetch: FetchLike = (input, init) => undiciFetch(input as never, { ...(init as object), dispatcher: agent } as never) as unknown as Promise<Response>;
  const fetch = server.oauth === null ? checkedFetch : authorizedFetch(server, checkedFetch, policy);
  // Redirects are not followed: the registered URL is the one trusted with the server's headers.
  const requestInit: RequestInit = { headers, redirect: 'error' };
  const transport = server.transport === 'sse'
    ? new SSEClientTransport(url, { requestInit, fetch })
    : new StreamableHTTPClientTransport(url, { requestInit, fetch });
  const client = new Client(CLIENT_INFO, { capabilities: {} });
  try {
    await client.connect(transport, { timeout: timeouts.connectMs });
    return await use(client);
  } finally {
    await client.close().catch(() => {});
    await agent.close().catch(() => {});
  }
}

/** A fetch that sends the server's access token; a 401 drops that token and retries once with a new one. */
function authorizedFetch(server: McpServer, base: FetchLike, policy: OutboundPolicy): FetchLike {
  const tokenSource = policy.oauthTokens;
  const withToken = (init: RequestInit | undefined, token: string): RequestInit => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${token}`);
    return { ...init, headers };
  };
  return async (input, init) => {
    // Thrown from the first request, so the connection's agent is closed as after any failure.
    if (tokenSource === undefined) throw new UpstreamNotServed(`The MCP server '${server.name}' needs OAuth tokens, which this gateway does not obtain.`);
    const tokens = tokenSource.loaded() ?? await tokenSource.get();
    const token = await tokens.token(server);
    const response = await base(input, withToken(init, token));
    if (response.status !== 401) return response;
    await response.body?.cancel().catch(() => {});
    tokens.invalidate(server, token);
    return base(input, withToken(init, await tokens.token(server)));
  };
}

function isLiteral(hostname: string): boolean {
  return isIP(hostname.replace(/^\[|\]$/g, '')) !== 0;
}

/** Every tool of the upstream, following its pagination (bounded: a server cannot make the gateway loop). */
export async function listUpstreamTools(client: Client, timeouts: UpstreamTimeouts): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 50; page += 1) {
    const result = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: timeouts.listMs });
    tools.push(...result.tools);
    cursor = result.nextCursor;
    if (cursor === undefined) break;
  }
  return tools;
}

/** A server's progress on a call (`notifications/progress`), without the token (the gateway's own upstream). */
export interface UpstreamProgress {
  progress: number;
  total?: number | undefined;
  message?: string | undefined;
}

/** Calls `tool`; with `onProgress`, asks the server for progress notifications and hands each one on. */
export async function callUpstreamTool(
  client: Client, tool: string, args: Record<string, unknown> | undefined, timeouts: UpstreamTimeouts, onProgress?: (progress: UpstreamProgress) => void,
): Promise<CallToolResult> {
  const options = { timeout: timeouts.callMs, maxTotalTimeout: timeouts.callMs, ...(onProgress === undefined ? {} : { onprogress: onProgress }) };
  const result = await client.callTool({ name: tool, ...(args === undefined ? {} : { arguments: args }) }, undefined, options);
  return result as CallToolResult;
}

/** Every item of one paginated listing, bounded like the tools' (a server cannot make the gateway loop). */
async function everyPage<T>(list: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string | undefined }>): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 50; page += 1) {
    const result = await list(cursor);
    items.push(...result.items);
    cursor = result.nextCursor;
    if (cursor === undefined) break;
  }
  return items;
}

const cursorParams = (cursor: string | undefined): { cursor?: string } => (cursor === undefined ? {} : { cursor });

/** Every prompt of the upstream; none from a server that does not declare the prompts capability. */
export async function listUpstreamPrompts(client: Client, timeouts: UpstreamTimeouts): Promise<Prompt[]> {
  if (client.getServerCapabilities()?.prompts === undefined) return [];
  return everyPage(async (cursor) => {
    const result = await client.listPrompts(cursorParams(cursor), { timeout: timeouts.listMs });
    return { items: result.prompts, nextCursor: result.nextCursor };
  });
}

/** Every resource of the upstream; none from a server that does not declare the resources capability. */
export async function listUpstreamResources(client: Client, timeouts: UpstreamTimeouts): Promise<Resource[]> {
  if (client.getServerCapabilities()?.resources === undefined) return [];
  return everyPage(async (cursor) => {
    const result = await client.listResources(cursorParams(cursor), { timeout: timeouts.listMs });
    return { items: result.resources, nextCursor: result.nextCursor };
  });
}

/** Every resource template of the upstream; none from a server that does not declare the resources capability. */
export async function listUpstreamResourceTemplates(client: Client, timeouts: UpstreamTimeouts): Promise<ResourceTemplate[]> {
  if (client.getServerCapabilities()?.resources === undefined) return [];
  return everyPage(async (cursor) => {
    const result = await client.listResourceTemplates(cursorParams(cursor), { timeout: timeouts.listMs });
    return { items: result.resourceTemplates, nextCursor: result.nextCursor };
  });
}

export async function getUpstreamPrompt(client: Client, name: string, args: Record<string, string> | undefined, timeouts: UpstreamTimeouts): Promise<GetPromptResult> {
  return client.getPrompt({ name, ...(args === undefined ? {} : { arguments: args }) }, { timeout: timeouts.callMs, maxTotalTimeout: timeouts.callMs });
}

export async function readUpstreamResource(client: Client, uri: string, timeouts: UpstreamTimeouts): Promise<ReadResourceResult> {
  return client.readResource({ uri }, { timeout: timeouts.callMs, maxTotalTimeout: timeouts.callMs });
}
