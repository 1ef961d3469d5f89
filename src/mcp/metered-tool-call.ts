import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Account, ApiKey } from '../domain/records.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { RequestContext } from '../http/request-context.js';
import { runPricedCall } from '../operations/priced-call.js';
import type { GatewayServices } from '../services.js';
import type { McpServer } from '../storage/repositories/mcp-server-repository.js';
import { callLimitRules, callLimits, ruleAdmits, toolRule, type McpPolicies } from './mcp-access.js';
import { gatewayToolName } from './tool-names.js';
import { callUpstreamTool, listUpstreamTools, withUpstream, type OutboundPolicy, type UpstreamTimeouts } from './upstream-session.js';

/** One tool call on a registered server, for a caller already checked: a client of `/mcp`, or a model's tool use. */
export interface ToolCall {
  key: ApiKey;
  account: Account;
  server: McpServer;
  /** The tool's name on its server. */
  tool: string;
  args: Record<string, unknown> | undefined;
  policies: McpPolicies;
  outbound: OutboundPolicy;
  timeouts: UpstreamTimeouts;
  /** The server's sealed headers, with any the caller may add (the registered ones win). */
  headers: Record<string, string>;
  /** The call's own request id: its usage row's. */
  requestId: string;
  endpoint: string;
  startedAt: number;
  family: RequestContext['family'];
}

/** How a tool call ended: the server's result (a refusal of the call is a result with `isError`), or why there is none. */
export type ToolCallOutcome =
  | { kind: 'result'; result: CallToolResult }
  /** No such tool for this caller: it does not exist, or its rules refuse it. */
  | { kind: 'unknown_tool' }
  /** The server answered with a JSON-RPC error (invalid arguments, a timeout). */
  | { kind: 'protocol_error'; code: number; message: string; data?: unknown }
  /** The server could not be reached or failed. */
  | { kind: 'unreachable'; message: string };

/**
 * Runs one tool call as the MCP gateway meters every call: the tool's rule (a refused tool is unknown; a `read_only`
 * one only where its server declares it read-only), the server's per-call price and limits admitted and settled once
 * through the priced-call frame, and one usage row (server, tool, bytes; arguments and results only when the server
 * logs payloads). A refusal of the call (its price, a limit) is the spec's error object as a tool result with isError.
 */
export async function callToolMetered(services: GatewayServices, call: ToolCall): Promise<ToolCallOutcome> {
  const { server, tool, policies } = call;
  const rule = toolRule(server, tool, policies);
  if (rule === 'refused') return { kind: 'unknown_tool' };
  const limits = callLimitRules(server, call.key.id, callLimits(server, policies));
  const argumentsText = JSON.stringify(call.args ?? {});
  return runPricedCall<ToolCallOutcome>(services, {
    key: call.key,
    account: call.account,
    requestId: call.requestId,
    protocol: 'mcp',
    endpoint: call.endpoint,
    startedAt: call.startedAt,
    family: call.family,
    priceNano: server.pricePerCallNano,
    windows: limits.windows,
    slots: limits.slots,
    slotOwner: () => `this API key on the MCP server '${server.name}'`,
  }, async (meter) => {
    meter.named(gatewayToolName(server.name, tool));
    const facts = { server: server.name, tool, bytesIn: Buffer.byteLength(argumentsText), bytesOut: 0 };
    meter.mcp = facts;
    try {
      const result = await withUpstream(server, call.headers, call.timeouts, async (client) => {
        if (rule === 'read_only') {
          const listed = (await listUpstreamTools(client, call.timeouts)).find((candidate) => candidate.name === tool);
          if (listed === undefined || !ruleAdmits(rule, listed)) return null;
        }
        return callUpstreamTool(client, tool, call.args, call.timeouts);
      }, call.outbound);
      if (result === null) return { value: { kind: 'unknown_tool' }, ending: { status: 404, errorCode: 'mcp_tool_refused', charged: false } };
      const resultText = JSON.stringify(result);
      facts.bytesOut = Buffer.byteLength(resultText);
      if (server.logPayloads) meter.mcp = { ...facts, payload: `{"arguments":${argumentsText},"result":${resultText}}` };
      return { value: { kind: 'result', result }, ending: { status: 200, errorCode: result.isError === true ? 'mcp_tool_error' : null, charged: true } };
    } catch (error) {
      if (error instanceof McpError) {
        const outcome: ToolCallOutcome = { kind: 'protocol_error', code: error.code, message: error.message.replace(/^MCP error -?\d+: /, ''), data: error.data };
        return { value: outcome, ending: { status: 502, errorCode: 'mcp_protocol_error', charged: false } };
      }
      services.logger.warn('mcp tool call failed upstream', { server: server.name, error: describeError(error) });
      return { value: { kind: 'unreachable', message: `The MCP server '${server.name}' failed or could not be reached.` }, ending: { status: 502, errorCode: 'upstream_error', charged: false } };
    }
  }).catch((error: unknown) => {
    if (error instanceof GatewayError) return { kind: 'result', result: refusalResult(error) };
    throw error;
  });
}

/**
 * A refused call as MCP's tool error result: the spec's error object (`{ error: { message, type, code } }`) as its
 * text, so a model or agent reads why, and its HTTP status and Retry-After in `_meta`.
 */
function refusalResult(error: GatewayError): CallToolResult {
  const body = { error: { message: error.message, type: error.type, code: error.code } };
  return {
    isError: true,
    content: [{ type: 'text', text: JSON.stringify(body) }],
    _meta: { 'unigate/status': error.status, ...(error.retryAfterSeconds === undefined ? {} : { 'unigate/retry_after_seconds': error.retryAfterSeconds }) },
  };
}

/** An upstream failure for the log: its class and message, never the request's arguments. */
export function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}`.slice(0, 300) : 'unknown error';
}
