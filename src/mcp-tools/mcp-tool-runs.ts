import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Account, ApiKey } from '../domain/records.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { RequestContext } from '../http/request-context.js';
import { policiesOf, ruleAdmits, toolRule, type McpPolicies } from '../mcp/mcp-access.js';
import { INVALID_PARAMS } from '../mcp/json-rpc.js';
import { callToolMetered } from '../mcp/metered-tool-call.js';
import { DEFAULT_UPSTREAM_TIMEOUTS, listUpstreamTools, withUpstream, type OutboundPolicy, type UpstreamTimeouts } from '../mcp/upstream-session.js';
import type { ResolvedGuardrails } from '../guardrail-policies/guardrail-book.js';
import { serverDown } from '../mcp/server-health.js';
import { checkTools, toolGuardrails } from '../mcp/tool-guardrails.js';
import type { GatewayServices } from '../services.js';
import type { McpServer } from '../storage/repositories/mcp-server-repository.js';

/** Who a model's tool call is made for, and which request of theirs it belongs to. */
export interface ToolRunCaller {
  key: ApiKey;
  account: Account;
  /** The client request the model's rounds belong to (each round's usage row carries it as a prefix). */
  requestId: string;
  family: RequestContext['family'];
  /** The account's, project's and key's MCP allowlists, tool rules and limit overrides. */
  policies: McpPolicies;
  /** The tool calls made so far: each has a request id and usage row of its own, `<request id>-t1`, `-t2`, … */
  calls: number;
  /** The guardrails of the request's model, account and key: tool descriptions and results pass through them. */
  guardrails: ResolvedGuardrails | null;
}

/** The caller of a request's tool calls: its key and account, checked, with their MCP policies and guardrails. */
export async function toolRunCaller(services: GatewayServices, key: ApiKey, account: Account, context: RequestContext, model: unknown): Promise<ToolRunCaller> {
  const [policies, guardrails] = await Promise.all([
    policiesOf(services.storage.mcpPolicies, key),
    toolGuardrails(services, key, typeof model === 'string' ? model : null),
  ]);
  return { key, account, requestId: context.requestId, family: context.family, policies, calls: 0, guardrails };
}

function outboundOf(services: GatewayServices): OutboundPolicy {
  return services.mcpOutbound;
}

/** What a tool call came to, in the terms both families report: a result, the tool's own error, or a failure to run it. */
export type ToolOutcome =
  | { kind: 'result'; result: CallToolResult }
  /** The tool ran and reported an error (`isError`): its content is the model's to read. */
  | { kind: 'tool_error'; result: CallToolResult }
  /** The server answered with a JSON-RPC error (an unknown tool, invalid arguments, a timeout). */
  | { kind: 'protocol_error'; code: number; message: string }
  /** The server could not be reached or failed, or its health check found it down (then it was not tried). */
  | { kind: 'unreachable'; message: string }
  /** A guardrail refused the tool or stopped its result: the request ends with the family's `guardrail_blocked` error. */
  | { kind: 'guardrail_blocked'; policy: string; message: string };

/** The caller's headers beside the server's registered ones, which win whatever the case of their names. */
function mergeHeaders(caller: Record<string, string>, registered: Record<string, string>): Record<string, string> {
  const taken = new Set(Object.keys(registered).map((name) => name.toLowerCase()));
  const merged: Record<string, string> = {};
  for (const [name, value] of Object.entries(caller)) if (!taken.has(name.toLowerCase())) merged[name] = value;
  return { ...merged, ...registered };
}

/** A server its health check found down: not asked for its tools (the listing fails at once with this). */
export class ServerDown extends Error {
  override name = 'ServerDown';
}

/**
 * The tools of `server` a model is offered, as the server lists them, less those the caller's tool rules refuse (a
 * `read_only` rule keeps only tools the server declares read-only), their descriptions through the caller's
 * guardrails (a blocked tool left out), as the MCP gateway lists them to its clients. Throws ServerDown, without a
 * connection attempt, for a server its health check found down.
 */
export async function listToolsForModel(services: GatewayServices, caller: ToolRunCaller, server: McpServer, extraHeaders: Record<string, string>, timeouts: UpstreamTimeouts = DEFAULT_UPSTREAM_TIMEOUTS): Promise<Tool[]> {
  const down = serverDown(server);
  if (down !== null) throw new ServerDown(down);
  const headers = mergeHeaders(extraHeaders, await services.storage.mcpServers.headersOf(server.id));
  const tools = await withUpstream(server, headers, timeouts, (client) => listUpstreamTools(client, timeouts), outboundOf(services));
  const checked = checkTools(caller.guardrails, tools.filter((tool) => ruleAdmits(toolRule(server, tool.name, caller.policies), tool)), server.name);
  if (checked.blocked.length > 0) {
    services.logger.info('mcp tools left out by guardrails', { tools: checked.blocked.map((entry) => `${entry.tool} (${entry.policy})`).join(', ') });
  }
  return checked.tools;
}

/**
 * Runs one tool call a model made, on its registered server with the server's sealed headers (the caller's extra
 * headers never replace them), metered as the MCP gateway meters every call: its rule, price, limits and usage row.
 */
export async function runToolForModel(
  services: GatewayServices,
  caller: ToolRunCaller,
  server: McpServer,
  tool: string,
  args: Record<string, unknown>,
  extraHeaders: Record<string, string>,
  timeouts: UpstreamTimeouts = DEFAULT_UPSTREAM_TIMEOUTS,
): Promise<ToolOutcome> {
  caller.calls += 1;
  const outcome = await callToolMetered(services, {
    key: caller.key, account: caller.account, server, tool, args, policies: caller.policies, outbound: outboundOf(services), timeouts,
    headers: mergeHeaders(extraHeaders, await services.storage.mcpServers.headersOf(server.id)),
    requestId: `${caller.requestId}-t${caller.calls}`, endpoint: `/mcp/${server.name}`, startedAt: performance.now(), family: caller.family,
    guardrails: caller.guardrails,
  });
  switch (outcome.kind) {
    case 'result': return outcome.result.isError === true ? { kind: 'tool_error', result: outcome.result } : { kind: 'result', result: outcome.result };
    case 'unknown_tool': return { kind: 'protocol_error', code: INVALID_PARAMS, message: `Unknown tool: ${tool}` };
    case 'protocol_error': return { kind: 'protocol_error', code: outcome.code, message: outcome.message };
    case 'unreachable': return outcome;
    case 'server_down': return { kind: 'unreachable', message: outcome.message };
    case 'guardrail_blocked': return { kind: 'guardrail_blocked', policy: outcome.policy, message: outcome.message };
  }
}

/** The first call of a turn a guardrail refused, as the family's `guardrail_blocked` error; null when none was. */
export function guardrailRefusal(outcomes: readonly ToolOutcome[]): GatewayError | null {
  const blocked = outcomes.find((outcome) => outcome.kind === 'guardrail_blocked');
  return blocked === undefined || blocked.kind !== 'guardrail_blocked' ? null : new GatewayError('guardrail_blocked', blocked.message);
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
    case 'guardrail_blocked':
      return `Error: ${outcome.message}`;
  }
}
