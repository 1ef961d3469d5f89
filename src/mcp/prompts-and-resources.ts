/**
 * The prompts and resources of the servers a key may use, as `/mcp` and `/mcp/{server}` serve them. Who may see
 * what follows the servers, not the tool rules: a key sees and reads every prompt and resource of each server it may
 * use (its own, its project's and its account's allowlists, as for tools) and nothing of any other, since prompts and
 * resources are text a server offers, not actions it takes. Prompts are named `<server>__<prompt>` as tools are;
 * resources on `/mcp` get gateway URIs (resource-uris.ts), on `/mcp/{server}` keep their own. A prompt or a read goes
 * to its server under its own name or URI, its texts through the caller's output guardrails as a tool's result, and
 * leaves a usage row like a tool call (server, `prompt:<name>` or `resource`, status, latency, bytes; never the
 * arguments, the URI or the contents); it is not priced per call and counts in no per-server call limit.
 */
import type { GetPromptResult, Prompt, ReadResourceResult, Resource, ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Account, ApiKey } from '../domain/records.js';
import type { GuardrailUsage } from '../domain/usage-records.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { ResolvedGuardrails } from '../guardrail-policies/guardrail-book.js';
import type { RequestContext } from '../http/request-context.js';
import { runPricedCall, type PricedCallEnding } from '../operations/priced-call.js';
import type { GatewayServices } from '../services.js';
import type { McpServer } from '../storage/repositories/mcp-server-repository.js';
import { GUARDRAIL_BLOCKED, REQUEST_REFUSED, RESOURCE_NOT_FOUND, SERVER_UNAVAILABLE } from './gateway-rpc-errors.js';
import { INTERNAL_ERROR, INVALID_PARAMS, RpcError } from './json-rpc.js';
import { isMcpError } from './mcp-sdk.js';
import { describeError } from './metered-tool-call.js';
import { gatewayResourceUri, splitResourceUri } from './resource-uris.js';
import { serverDown } from './server-health.js';
import { checkPromptResult, checkResourceResult, guardrailsHeader, type CheckedOutput } from './tool-guardrails.js';
import { gatewayToolName, splitToolName } from './tool-names.js';
import {
  getUpstreamPrompt, listUpstreamPrompts, listUpstreamResources, listUpstreamResourceTemplates, readUpstreamResource, withUpstream,
  type OutboundPolicy, type UpstreamTimeouts,
} from './upstream-session.js';

/** What a client request to the endpoint works with (mcp-endpoint.ts builds it once the key is authenticated). */
export interface OfferingsCall {
  services: GatewayServices;
  context: RequestContext;
  key: ApiKey;
  account: Account;
  outbound: OutboundPolicy;
  /** The servers this request may reach: the key's, narrowed to one for `/mcp/{server}`. */
  servers: McpServer[];
  /** The server of `/mcp/{server}`, or null for `/mcp`. */
  scope: string | null;
  timeouts: UpstreamTimeouts;
  /** The guardrails of the key and its account (no model's: there is none), or null when none apply. */
  guardrails: ResolvedGuardrails | null;
  /** Headers of the answer besides the protocol's (what the guardrails did). */
  responseHeaders: Record<string, string>;
}

/** One listing from every server of the call, concurrently; a server down or unreachable is left out (logged). */
async function fromEachServer<T>(call: OfferingsCall, what: string, list: (client: Client) => Promise<T[]>, rename: (server: McpServer, item: T) => T): Promise<T[]> {
  const lists = await Promise.all(call.servers.map(async (server) => {
    if (serverDown(server) !== null) return [];
    try {
      const headers = await call.services.storage.mcpServers.headersOf(server.id);
      const items = await withUpstream(server, headers, call.timeouts, list, call.outbound);
      return items.map((item) => rename(server, item));
    } catch (error) {
      call.services.logger.warn(`mcp server did not list its ${what}`, { server: server.name, error: describeError(error) });
      return [];
    }
  }));
  return lists.flat();
}

/** A URI the client sees for `uri` of `server`: the gateway's on `/mcp`, the server's own on `/mcp/{server}`. */
function shownUri(call: OfferingsCall, server: McpServer, uri: string): string {
  return call.scope === null ? gatewayResourceUri(server.name, uri) : uri;
}

export async function listPrompts(call: OfferingsCall): Promise<{ prompts: Prompt[] }> {
  const prompts = await fromEachServer(call, 'prompts', (client) => listUpstreamPrompts(client, call.timeouts), (server, prompt) => ({ ...prompt, name: gatewayToolName(server.name, prompt.name) }));
  return { prompts };
}

export async function listResources(call: OfferingsCall): Promise<{ resources: Resource[] }> {
  const resources = await fromEachServer(call, 'resources', (client) => listUpstreamResources(client, call.timeouts), (server, resource) => ({ ...resource, uri: shownUri(call, server, resource.uri) }));
  return { resources };
}

export async function listResourceTemplates(call: OfferingsCall): Promise<{ resourceTemplates: ResourceTemplate[] }> {
  const resourceTemplates = await fromEachServer(call, 'resource templates', (client) => listUpstreamResourceTemplates(client, call.timeouts),
    (server, template) => ({ ...template, uriTemplate: shownUri(call, server, template.uriTemplate) }));
  return { resourceTemplates };
}

/** `prompts/get` on the prompt's server, under its own name; a prompt of a server the key may not use is unknown. */
export async function getPrompt(call: OfferingsCall, params: Record<string, unknown>): Promise<GetPromptResult> {
  const { name } = params;
  const args = params.arguments;
  if (typeof name !== 'string') throw new RpcError(INVALID_PARAMS, 'params.name must be a string.');
  if (args !== undefined && (args === null || typeof args !== 'object' || Array.isArray(args) || Object.values(args).some((value) => typeof value !== 'string'))) {
    throw new RpcError(INVALID_PARAMS, 'params.arguments must be an object of strings.');
  }
  const target = splitToolName(name);
  const server = target === null ? undefined : call.servers.find((candidate) => candidate.name === target.server);
  if (target === null || server === undefined) throw new RpcError(INVALID_PARAMS, `Unknown prompt: ${name}`);
  const result = await readMetered(call, server, `prompt:${target.tool}`, gatewayToolName(server.name, target.tool), JSON.stringify(args ?? {}),
    (client) => getUpstreamPrompt(client, target.tool, args as Record<string, string> | undefined, call.timeouts),
    (answer) => checkPromptResult(call.guardrails, answer));
  return { ...result, messages: result.messages.map((message) => ({ ...message, content: withShownUri(call, server, message.content) })) };
}

/** A prompt message's embedded resource or resource link, with the URI the client can read it back with. */
function withShownUri<T extends GetPromptResult['messages'][number]['content']>(call: OfferingsCall, server: McpServer, content: T): T {
  if (content.type === 'resource') return { ...content, resource: { ...content.resource, uri: shownUri(call, server, content.resource.uri) } };
  if (content.type === 'resource_link') return { ...content, uri: shownUri(call, server, content.uri) };
  return content;
}

/**
 * `resources/read` on the resource's server with its own URI: on `/mcp` a gateway URI names the server, on
 * `/mcp/{server}` the URI is the server's. A URI of no server the key may use is not found, as one that does not exist.
 */
export async function readResource(call: OfferingsCall, params: Record<string, unknown>): Promise<ReadResourceResult> {
  const { uri } = params;
  if (typeof uri !== 'string' || uri === '') throw new RpcError(INVALID_PARAMS, 'params.uri must be a non-empty string.');
  const target = call.scope === null ? splitResourceUri(uri) : { server: call.scope, uri };
  const server = target === null ? undefined : call.servers.find((candidate) => candidate.name === target.server);
  if (target === null || server === undefined) throw new RpcError(RESOURCE_NOT_FOUND, 'Resource not found', { uri });
  const result = await readMetered(call, server, 'resource', `${server.name}:resource`, target.uri,
    (client) => readUpstreamResource(client, target.uri, call.timeouts),
    (answer) => checkResourceResult(call.guardrails, answer));
  return { ...result, contents: result.contents.map((content) => ({ ...content, uri: shownUri(call, server, content.uri) })) };
}

/** How one read ended: the server's answer after the guardrails, or the JSON-RPC error the client gets. */
type ReadOutcome<T> = { kind: 'result'; result: T } | { kind: 'error'; error: RpcError };

/**
 * One prompt or resource read on its server in the priced-call frame (free: admitted, settled and recorded like a
 * tool call, with one usage row), its answer through the output guardrails. `sent` counts as the bytes in; it is
 * never recorded as text.
 */
async function readMetered<T>(
  call: OfferingsCall, server: McpServer, label: string, named: string, sent: string,
  read: (client: Client) => Promise<T>, check: (answer: T) => CheckedOutput<T>,
): Promise<T> {
  const down = serverDown(server);
  if (down !== null) throw new RpcError(SERVER_UNAVAILABLE, down, { code: 'mcp_server_down', server: server.name });
  const { services, context } = call;
  const ran: GuardrailUsage[] = [];
  const facts = { server: server.name, tool: label, bytesIn: Buffer.byteLength(sent), bytesOut: 0 };
  let outcome: ReadOutcome<T>;
  try {
    outcome = await runPricedCall<ReadOutcome<T>>(services, {
      key: call.key, account: call.account, requestId: context.requestId, observation: context.observation, protocol: 'mcp', endpoint: context.path, startedAt: context.startedAt, family: context.family,
      name: named, mcp: facts,
      priceNano: null, windows: [], slots: [], slotOwner: () => `this API key on the MCP server '${server.name}'`,
    }, async (meter) => {
      const ended = await readOnUpstream(call, server, read, check, facts);
      ran.push(...ended.usage);
      meter.guardrails.push(...ended.usage);
      return ended;
    });
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    outcome = { kind: 'error', error: new RpcError(REQUEST_REFUSED, error.message, { code: error.code, type: error.type, status: error.status }) };
  }
  Object.assign(call.responseHeaders, guardrailsHeader(ran));
  if (outcome.kind === 'error') throw outcome.error;
  return outcome.result;
}

async function readOnUpstream<T>(
  call: OfferingsCall, server: McpServer, read: (client: Client) => Promise<T>, check: (answer: T) => CheckedOutput<T>, facts: { bytesOut: number },
): Promise<{ value: ReadOutcome<T>; ending: PricedCallEnding; usage: GuardrailUsage[] }> {
  try {
    const headers = await call.services.storage.mcpServers.headersOf(server.id);
    const answer = await withUpstream(server, headers, call.timeouts, read, call.outbound);
    facts.bytesOut = Buffer.byteLength(JSON.stringify(answer));
    const checked = check(answer);
    if (checked.blockedBy !== null) {
      const error = new RpcError(GUARDRAIL_BLOCKED, `The answer of the MCP server '${server.name}' was stopped by the guardrail policy '${checked.blockedBy}'.`,
        { code: 'guardrail_blocked', policy: checked.blockedBy, direction: 'output' });
      return { value: { kind: 'error', error }, ending: { status: 400, errorCode: 'guardrail_blocked', charged: false }, usage: checked.usage };
    }
    return { value: { kind: 'result', result: checked.result }, ending: { status: 200, errorCode: null, charged: false }, usage: checked.usage };
  } catch (error) {
    // The server's own protocol errors (an unknown prompt, a resource it does not have) reach the client as such.
    if (isMcpError(error)) {
      const rpc = new RpcError(error.code, error.message.replace(/^MCP error -?\d+: /, ''), error.data);
      return { value: { kind: 'error', error: rpc }, ending: { status: 502, errorCode: 'mcp_protocol_error', charged: false }, usage: [] };
    }
    call.services.logger.warn('mcp prompt or resource read failed upstream', { server: server.name, error: describeError(error) });
    const rpc = new RpcError(INTERNAL_ERROR, `The MCP server '${server.name}' failed or could not be reached.`);
    return { value: { kind: 'error', error: rpc }, ending: { status: 502, errorCode: 'upstream_error', charged: false }, usage: [] };
  }
}
