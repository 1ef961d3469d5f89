import { McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Account, ApiKey } from '../domain/records.js';
import { callUpstreamTool, DEFAULT_UPSTREAM_TIMEOUTS, listUpstreamTools, withUpstream, type UpstreamTimeouts } from '../mcp/upstream-session.js';
import type { GatewayServices } from '../services.js';
import type { McpServer } from '../storage/repositories/mcp-server-repository.js';

/** Who a model's tool call is made for, and which request of theirs it belongs to. */
export interface ToolRunCaller {
  key: ApiKey;
  account: Account;
  /** The client request the model's rounds belong to (each round's usage row carries it as a prefix). */
  requestId: string;
}

/** What a tool call came to, in the terms both families report: a result, the tool's own error, or a failure to run it. */
export type ToolOutcome =
  | { kind: 'result'; result: CallToolResult }
  /** The tool ran and reported an error (`isError`): its content is the model's to read. */
  | { kind: 'tool_error'; result: CallToolResult }
  /** The server answered with a JSON-RPC error (an unknown tool, invalid arguments, a timeout). */
  | { kind: 'protocol_error'; code: number; message: string }
  /** The server could not be reached or failed. */
  | { kind: 'unreachable'; message: string };

/** The caller's headers beside the server's registered ones, which win whatever the case of their names. */
function mergeHeaders(caller: Record<string, string>, registered: Record<string, string>): Record<string, string> {
  const taken = new Set(Object.keys(registered).map((name) => name.toLowerCase()));
  const merged: Record<string, string> = {};
  for (const [name, value] of Object.entries(caller)) if (!taken.has(name.toLowerCase())) merged[name] = value;
  return { ...merged, ...registered };
}

/**
 * The tools of `server` a model is offered, as the server lists them. The one place where the tools a key may see of
 * a server are listed for the model side: rules on single tools apply here.
 */
export async function listToolsForModel(services: GatewayServices, _caller: ToolRunCaller, server: McpServer, extraHeaders: Record<string, string>, timeouts: UpstreamTimeouts = DEFAULT_UPSTREAM_TIMEOUTS): Promise<Tool[]> {
  const headers = mergeHeaders(extraHeaders, await services.storage.mcpServers.headersOf(server.id));
  return withUpstream(server, headers, timeouts, (client) => listUpstreamTools(client, timeouts));
}

/**
 * Runs one tool call a model made, on its registered server with the server's sealed headers (the caller's extra
 * headers never replace them). This is the single seam of the model side's tool calls: a per-call limit, price or
 * usage row of the MCP gateway wraps this function, and every call of both families' loops passes through it.
 */
export async function runToolForModel(
  services: GatewayServices,
  _caller: ToolRunCaller,
  server: McpServer,
  tool: string,
  args: Record<string, unknown>,
  extraHeaders: Record<string, string>,
  timeouts: UpstreamTimeouts = DEFAULT_UPSTREAM_TIMEOUTS,
): Promise<ToolOutcome> {
  const headers = mergeHeaders(extraHeaders, await services.storage.mcpServers.headersOf(server.id));
  try {
    const result = await withUpstream(server, headers, timeouts, (client) => callUpstreamTool(client, tool, args, timeouts));
    return result.isError === true ? { kind: 'tool_error', result } : { kind: 'result', result };
  } catch (error) {
    if (error instanceof McpError) return { kind: 'protocol_error', code: error.code, message: error.message.replace(/^MCP error -?\d+: /, '') };
    services.logger.warn('mcp tool call of a model failed upstream', { server: server.name, error: error instanceof Error ? `${error.name}: ${error.message}`.slice(0, 300) : 'unknown error' });
    return { kind: 'unreachable', message: `The MCP server '${server.name}' failed or could not be reached.` };
  }
}

/** A tool result as the text a model reads: its text parts, other parts as JSON, the structured content when there is no text. */
export function resultText(result: CallToolResult): string {
  const parts = result.content.map((part) => (part.type === 'text' ? part.text : JSON.stringify(part)));
  if (parts.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  return parts.join('\n');
}

/** What the model is told when a call could not be run. */
export function outcomeText(outcome: ToolOutcome): string {
  switch (outcome.kind) {
    case 'result':
    case 'tool_error':
      return resultText(outcome.result);
    case 'protocol_error':
      return `Error: ${outcome.message}`;
    case 'unreachable':
      return `Error: ${outcome.message}`;
  }
}
