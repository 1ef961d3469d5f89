/**
 * The MCP SDK, loaded at its first use instead of at start: its schemas (zod, and ajv for tool output) take about
 * 7 MiB of heap that a gateway serving no MCP traffic never needs. The first MCP request waits for the import
 * (a few milliseconds, once); every later one gets the loaded modules at once. A failed import is tried again at
 * the next use.
 */
import { loadOnce } from '../shared/load-once.js';

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { McpError } from '@modelcontextprotocol/sdk/types.js';

export interface McpClientSdk {
  Client: typeof Client;
  SSEClientTransport: typeof SSEClientTransport;
  StreamableHTTPClientTransport: typeof StreamableHTTPClientTransport;
}

export interface McpProtocolSdk {
  LATEST_PROTOCOL_VERSION: string;
  SUPPORTED_PROTOCOL_VERSIONS: readonly string[];
  McpError: typeof McpError;
}

const protocolSdk = loadOnce(async (): Promise<McpProtocolSdk> => {
  const types = await import('@modelcontextprotocol/sdk/types.js');
  return { LATEST_PROTOCOL_VERSION: types.LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS: types.SUPPORTED_PROTOCOL_VERSIONS, McpError: types.McpError };
});

const clientSdk = loadOnce(async (): Promise<McpClientSdk> => {
  // The protocol module too: its error class is what `isMcpError` recognises in the client's failures.
  const [client, sse, streamableHttp] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/sse.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    protocolSdk.get(),
  ]);
  return { Client: client.Client, SSEClientTransport: sse.SSEClientTransport, StreamableHTTPClientTransport: streamableHttp.StreamableHTTPClientTransport };
});

/** The SDK's client and its two transports (calls to upstream MCP servers). */
export const loadMcpClientSdk = clientSdk.get;

/** The protocol's versions and its error class (the gateway's own MCP endpoint). */
export const loadMcpProtocolSdk = protocolSdk.get;

/**
 * Whether `error` is the SDK's protocol error (a JSON-RPC error an upstream server answered). Only the SDK throws
 * one, so while it is not loaded nothing is one.
 */
export function isMcpError(error: unknown): error is McpError {
  const sdk = protocolSdk.loaded();
  return sdk !== null && error instanceof sdk.McpError;
}
