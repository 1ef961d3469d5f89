import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { isMcpError } from './mcp-sdk.js';
import type { Account, ApiKey } from '../domain/records.js';
import type { GuardrailUsage, McpCallUsage } from '../domain/usage-records.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { RequestContext } from '../http/request-context.js';
import { runPricedCall, type PricedCallEnding } from '../operations/priced-call.js';
import type { GatewayServices } from '../services.js';
import type { McpServer, McpToolRule } from '../storage/repositories/mcp-server-repository.js';
import type { ResolvedGuardrails } from '../guardrail-policies/guardrail-book.js';
import { callLimitRules, callLimits, ruleAdmits, toolRule, type McpPolicies } from './mcp-access.js';
import { serverDown } from './server-health.js';
import { checkResult, checksDescriptions, checkTool, mergeUsage } from './tool-guardrails.js';
import { gatewayToolName } from './tool-names.js';
import { UpstreamAuthorizationFailed } from './oauth-tokens.js';
import { LocalServerUnavailable } from './stdio-processes.js';
import { callUpstreamTool, listUpstreamTools, UpstreamNotServed, withUpstream, type OutboundPolicy, type UpstreamProgress, type UpstreamTimeouts } from './upstream-session.js';

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
  /** The access log and trace of the HTTP request the call is, when it is one (a client's call on `/mcp`). */
  observation?: RequestContext['observation'];
  endpoint: string;
  startedAt: number;
  family: RequestContext['family'];
  /** The caller's guardrails (tool-guardrails.ts `toolGuardrails`): the tool's description and its result are checked. */
  guardrails?: ResolvedGuardrails | null;
  /** Receives what the guardrails did on this call (its usage row keeps the same), for the answer's headers. */
  guardrailsRan?: GuardrailUsage[];
  /** Receives the server's progress notifications on the call, when the caller relays them. */
  onProgress?: (progress: UpstreamProgress) => void;
}

/** How a tool call ended: the server's result (a refusal of the call is a result with `isError`), or why there is none. */
export type ToolCallOutcome =
  | { kind: 'result'; result: CallToolResult }
  /** No such tool for this caller: it does not exist, or its rules refuse it. */
  | { kind: 'unknown_tool' }
  /** The server answered with a JSON-RPC error (invalid arguments, a timeout). */
  | { kind: 'protocol_error'; code: number; message: string; data?: unknown }
  /** The server could not be reached or failed. */
  | { kind: 'unreachable'; message: string }
  /** The last health check found the server down: it was not tried. */
  | { kind: 'server_down'; message: string }
  /** A guardrail refused the tool (its description, input) or its result (output). */
  | { kind: 'guardrail_blocked'; policy: string; direction: 'input' | 'output'; message: string };

/** A guardrail's refusal of a tool or its result, naming the policy, never the text it found. */
function guardrailBlocked(policy: string, direction: 'input' | 'output', serverName: string, tool: string): ToolCallOutcome {
  const name = gatewayToolName(serverName, tool);
  const message = direction === 'input'
    ? `The tool '${name}' was refused by the guardrail policy '${policy}'.`
    : `The result of the tool '${name}' was stopped by the guardrail policy '${policy}'.`;
  return { kind: 'guardrail_blocked', policy, direction, message };
}

/**
 * Runs one tool call as the MCP gateway meters every call: the tool's rule (a refused tool is unknown; a `read_only`
 * one only where its server declares it read-only), the server's per-call price and the limits of the key, its
 * project and its account (each counted over its own calls) admitted and settled once
 * through the priced-call frame, and one usage row (server, tool, bytes; arguments and results only when the server
 * logs payloads). A refusal of the call (its price, a limit) is the spec's error object as a tool result with isError.
 */
export async function callToolMetered(services: GatewayServices, call: ToolCall): Promise<ToolCallOutcome> {
  const { server, tool, policies } = call;
  const rule = toolRule(server, tool, policies);
  if (rule === 'refused') return { kind: 'unknown_tool' };
  // A server its health check found down is not tried until a check finds it up again.
  const down = serverDown(server);
  if (down !== null) return { kind: 'server_down', message: down };
  const guardrails = call.guardrails ?? null;
  const limits = callLimitRules(server, callLimits(server, call.key, policies));
  const argumentsText = JSON.stringify(call.args ?? {});
  const facts: McpCallUsage = { server: server.name, tool, bytesIn: Buffer.byteLength(argumentsText), bytesOut: 0 };
  return runPricedCall<ToolCallOutcome>(services, {
    key: call.key,
    account: call.account,
    requestId: call.requestId,
    observation: call.observation ?? null,
    protocol: 'mcp',
    endpoint: call.endpoint,
    name: gatewayToolName(server.name, tool),
    mcp: facts,
    startedAt: call.startedAt,
    family: call.family,
    priceNano: server.pricePerCallNano,
    windows: limits.windows,
    slots: limits.slots,
    slotOwner: limits.slotOwner,
  }, async (meter) => {
    const ended = await callOnUpstream(services, call, meter, { facts, argumentsText, rule, guardrails });
    call.guardrailsRan?.push(...meter.guardrails);
    return ended;
  }).catch((error: unknown) => {
    if (error instanceof GatewayError) return { kind: 'result', result: refusalResult(error) };
    throw error;
  });
}

/** What the upstream step writes on the call's meter: what the guardrails did. */
interface CallMeter {
  readonly guardrails: GuardrailUsage[];
}

/**
 * What a call's upstream step works with besides the call: its usage facts (the meter's: what the answer adds is
 * written on them), its arguments as sent, its rule and guardrails.
 */
interface UpstreamStep {
  facts: McpCallUsage;
  argumentsText: string;
  rule: McpToolRule;
  guardrails: ResolvedGuardrails | null;
}

/**
 * The call on its server, in one connection: the tool as listed where its rule or the caller's guardrails read its
 * description (not called when they refuse it), then the call, and its result through the output guardrails. Every
 * failure is an outcome with its ending, never a throw.
 */
async function callOnUpstream(services: GatewayServices, call: ToolCall, meter: CallMeter, step: UpstreamStep): Promise<{ value: ToolCallOutcome; ending: PricedCallEnding }> {
  const { server, tool } = call;
  const { facts, argumentsText, rule, guardrails } = step;
  const readsDescription = checksDescriptions(guardrails);
  try {
    const refusal: { by: string | null } = { by: null };
    const answer = await withUpstream(server, call.headers, call.timeouts, async (client) => {
      // The tool as its server lists it, where its rule or the caller's guardrails read it: not called when they refuse it.
      if (rule === 'read_only' || readsDescription) {
        const listed = (await listUpstreamTools(client, call.timeouts)).find((candidate) => candidate.name === tool);
        if (listed === undefined || !ruleAdmits(rule, listed)) return null;
        if (readsDescription) {
          const checked = checkTool(guardrails, listed);
          meter.guardrails.push(...mergeUsage(checked.usage));
          if (checked.blockedBy !== null) {
            refusal.by = checked.blockedBy;
            return null;
          }
        }
      }
      return callUpstreamTool(client, tool, call.args, call.timeouts, call.onProgress);
    }, call.outbound);
    if (refusal.by !== null) return { value: guardrailBlocked(refusal.by, 'input', server.name, tool), ending: { status: 400, errorCode: 'guardrail_blocked', charged: false } };
    if (answer === null) return { value: { kind: 'unknown_tool' }, ending: { status: 404, errorCode: 'mcp_tool_refused', charged: false } };
    facts.bytesOut = Buffer.byteLength(JSON.stringify(answer));
    const checked = checkResult(guardrails, answer);
    meter.guardrails.push(...checked.usage);
    // The tool ran: a result a guardrail stopped is charged as any answer a guardrail stops.
    if (checked.blockedBy !== null) {
      if (server.logPayloads) facts.payload = `{"arguments":${argumentsText}}`;
      return { value: guardrailBlocked(checked.blockedBy, 'output', server.name, tool), ending: { status: 400, errorCode: 'guardrail_blocked', charged: true } };
    }
    const result = checked.result;
    if (server.logPayloads) facts.payload = `{"arguments":${argumentsText},"result":${JSON.stringify(result)}}`;
    return { value: { kind: 'result', result }, ending: { status: 200, errorCode: result.isError === true ? 'mcp_tool_error' : null, charged: true } };
  } catch (error) {
    if (isMcpError(error)) {
      const outcome: ToolCallOutcome = { kind: 'protocol_error', code: error.code, message: error.message.replace(/^MCP error -?\d+: /, ''), data: error.data };
      return { value: outcome, ending: { status: 502, errorCode: 'mcp_protocol_error', charged: false } };
    }
    services.logger.warn('mcp tool call failed upstream', { server: server.name, error: describeError(error) });
    const message = explainedFailure(error) ?? `The MCP server '${server.name}' failed or could not be reached.`;
    return { value: { kind: 'unreachable', message }, ending: { status: 502, errorCode: 'upstream_error', charged: false } };
  }
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

/**
 * The message of a failure the caller can act on or report as it is (the token endpoint refused the gateway's client
 * credentials, a local server is off or restarting), found on the error or its cause; null for any other.
 */
function explainedFailure(error: unknown): string | null {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 4; current = current.cause, depth += 1) {
    if (current instanceof UpstreamAuthorizationFailed || current instanceof UpstreamNotServed || current instanceof LocalServerUnavailable) return current.message;
  }
  return null;
}

/** An upstream failure for the log: its class and message, never the request's arguments. */
export function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}`.slice(0, 300) : 'unknown error';
}
