import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { isIP } from 'node:net';
import { Agent, fetch as undiciFetch } from 'undici';
import type { McpServer } from '../storage/repositories/mcp-server-repository.js';
import { addressCheckedLookup, hostRefusal } from '../webhooks/endpoint-address.js';

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
const CLIENT_INFO = { name: 'unigate-mcp-gateway', version: '1' };

/**
 * One connection to an upstream MCP server, opened for one client request and closed after it, with the official
 * SDK's client over the server's transport (Streamable HTTP, or the older HTTP+SSE): the SDK negotiates the protocol
 * revision, keeps the upstream session and speaks each transport's framing, so the gateway never re-implements them.
 */
export async function withUpstream<T>(
  server: McpServer,
  headers: Record<string, string>,
  timeouts: UpstreamTimeouts,
  use: (client: Client) => Promise<T>,
  policy: OutboundPolicy = PUBLIC_ADDRESSES_ONLY,
): Promise<T> {
  const url = new URL(server.url);
  const addresses = { allowHttpLoopback: false, allowPrivateAddresses: policy.allowPrivateAddresses };
  // An IP literal is connected to without a lookup: it is checked here; a host name is checked by the agent's
  // lookup on every connection, so an address that changed since registration (DNS rebinding) is refused too.
  const refusedLiteral = isLiteral(url.hostname) ? await hostRefusal(url.hostname, addresses) : null;
  if (refusedLiteral !== null) throw new UpstreamAddressRefused(refusedLiteral);
  const agent = new Agent({ connect: { lookup: addressCheckedLookup(addresses, (reason) => new UpstreamAddressRefused(reason)) as never } });
  const checkedFetch: FetchLike = (input, init) => undiciFetch(input as never, { ...(init as object), dispatcher: agent } as never) as unknown as Promise<Response>;
  // Redirects are not followed: the registered URL is the one trusted with the server's headers.
  const requestInit: RequestInit = { headers, redirect: 'error' };
  const transport = server.transport === 'sse'
    ? new SSEClientTransport(url, { requestInit, fetch: checkedFetch })
    : new StreamableHTTPClientTransport(url, { requestInit, fetch: checkedFetch });
  const client = new Client(CLIENT_INFO, { capabilities: {} });
  try {
    await client.connect(transport, { timeout: timeouts.connectMs });
    return await use(client);
  } finally {
    await client.close().catch(() => {});
    await agent.close().catch(() => {});
  }
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

export async function callUpstreamTool(client: Client, tool: string, args: Record<string, unknown> | undefined, timeouts: UpstreamTimeouts): Promise<CallToolResult> {
  const result = await client.callTool({ name: tool, ...(args === undefined ? {} : { arguments: args }) }, undefined, { timeout: timeouts.callMs, maxTotalTimeout: timeouts.callMs });
  return result as CallToolResult;
}
