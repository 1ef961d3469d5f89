import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { loadMcpProtocolSdk } from './mcp-sdk.js';
import type { ApiKey } from '../domain/records.js';
import type { GuardrailUsage } from '../domain/usage-records.js';
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
  type ClientMessage, type JsonRpcId, type JsonRpcRequest,
} from './json-rpc.js';
import { getPrompt, listPrompts, listResources, listResourceTemplates, readResource, type OfferingsCall } from './prompts-and-resources.js';
import { policiesOf, ruleAdmits, serversOfKey, serversVisibleTo, toolRule, type McpPolicies } from './mcp-access.js';
import { GUARDRAIL_BLOCKED, SERVER_UNAVAILABLE } from './gateway-rpc-errors.js';
import { callToolMetered, describeError } from './metered-tool-call.js';
import { serverDown } from './server-health.js';
import { checkTools, guardrailsHeader, mergeUsage, toolGuardrails, type BlockedTool } from './tool-guardrails.js';
import { gatewayToolName, splitToolName } from './tool-names.js';
import { ResumableStreams, sseEvent, type HeldStream, type StreamEvent } from './resumable-streams.js';
import { DEFAULT_UPSTREAM_TIMEOUTS, listUpstreamTools, withUpstream, type UpstreamProgress, type UpstreamTimeouts } from './upstream-session.js';

const SESSION_HEADER = 'mcp-session-id';
const LAST_EVENT_ID_HEADER = 'last-event-id';
/** How long the client waits before resuming a broken stream (the priming event's `retry`). */
const RESUME_AFTER_MS = 1000;
const VERSION_HEADER = 'mcp-protocol-version';
const GATEWAY_INFO = { name: 'unigate', title: 'unigate MCP gateway', version: '1' };
const JSON_TYPE = 'application/json';

/** One session store per gateway, shared by the endpoint's routes (POST, GET, DELETE; `/mcp` and `/mcp/{server}`). */
const sessionsOf = sharedScope((services: GatewayServices) => new ClientSessions(services.storage.mcpSessions));

/** The streams this instance answered long requests with, resumable from it (resumable-streams.ts). */
const streamsOf = sharedScope((_services: GatewayServices) => new ResumableStreams());

export interface McpEndpointOptions {
  timeouts?: UpstreamTimeouts;
}

/** What one client request works with once authenticated. */
/** A client request's call: what prompts and resources work with, plus the tool side's policies and progress. */
interface McpCall extends OfferingsCall {
  /** The account's, project's and key's allowlists, tool rules and limit overrides. */
  policies: McpPolicies;
  /** Receives the upstream's progress on a tool call, when the answer is a stream that relays it. */
  onProgress?: (progress: UpstreamProgress) => void;
}

/**
 * `/mcp` and `/mcp/{server}`: the MCP Streamable HTTP transport for clients, with the gateway's API keys. Each POST
 * carries one JSON-RPC message and is answered with one JSON body, except a `tools/call` from a client that accepts
 * `text/event-stream`: that is answered as a resumable SSE stream relaying the server's progress (`streamAnswer`).
 * `initialize` opens a session (`Mcp-Session-Id`, kept in the database, so any instance sharing it serves the
 * session's next request) that later requests must carry and DELETE ends. GET with `Last-Event-ID` resumes a stream
 * this instance holds; any other GET is answered 405, as the transport allows a server that sends nothing unasked.
 * Tools and prompts of the servers the key may use are listed as `<server>__<name>`, resources as gateway URIs
 * (prompts-and-resources.ts), and each call or read goes to its server with the server's own headers.
 */
export function mcpRoute(services: GatewayServices, options: McpEndpointOptions = {}): RouteHandler {
  const sessions = sessionsOf(services);
  const timeouts = options.timeouts ?? DEFAULT_UPSTREAM_TIMEOUTS;
  return async (context) => {
    const { key, account } = await authenticate(context, services);
    const scope = context.params.server ?? null;
    const policies = await policiesOf(services.storage.mcpPolicies, key);
    const servers = await scopedServers(services, key, scope, policies);
    const outbound = services.mcpOutbound;
    const guardrails = await toolGuardrails(services, key, null);
    const call: McpCall = { services, context, key, account, policies, outbound, servers, scope, timeouts, guardrails, responseHeaders: {} };
    const now = services.clock.now();
    const sessionId = headerOf(context, SESSION_HEADER);

    if (context.method === 'GET') return resumeStreamOf(call, sessions, sessionId, now);
    if (context.method === 'DELETE') {
      if (sessionId === null || !(await sessions.close(sessionId, key.id, scope, now))) throw unknownSession();
      sendRaw(context, 204, '', JSON_TYPE);
      return;
    }
    const message = await readMessage(context, services.config.maxBodyBytes);
    if (message === null) return;
    const { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } = await loadMcpProtocolSdk();
    if (message.kind === 'request' && message.request.method === 'initialize') {
      const requested = message.request.params?.protocolVersion;
      const protocolVersion = typeof requested === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
      await openSession(call, sessions, message.request.id, protocolVersion, now);
      return;
    }

    // Every other message belongs to a session this key opened on this endpoint.
    if (sessionId === null) {
      sendRaw(context, 400, errorMessage(message.kind === 'request' ? message.request.id : null, INVALID_REQUEST, 'Mcp-Session-Id is required: send initialize first.'), JSON_TYPE);
      return;
    }
    const session = await sessions.use(sessionId, key.id, scope, now);
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
    if (request.method === 'tools/call' && acceptsEventStream(context)) {
      await streamAnswer(call, request, sessionId);
      return;
    }
    try {
      const result = await answer(call, request);
      sendRaw(context, 200, resultMessage(request.id, result), JSON_TYPE, call.responseHeaders);
    } catch (error) {
      if (!(error instanceof RpcError)) throw error;
      sendRaw(context, 200, errorMessage(request.id, error.code, error.message, error.data), JSON_TYPE, call.responseHeaders);
    }
  };
}

/**
 * A GET resumes a stream this instance holds, from after its `Last-Event-ID`; the endpoint sends nothing unasked, so
 * any other GET is refused.
 */
async function resumeStreamOf(call: McpCall, sessions: ClientSessions, sessionId: string | null, now: number): Promise<void> {
  const { context, services, key, scope } = call;
  const lastEventId = headerOf(context, LAST_EVENT_ID_HEADER);
  if (lastEventId === null) {
    throw new GatewayError('method_not_allowed', 'This MCP endpoint sends nothing unasked: GET only resumes a stream (with Last-Event-ID). POST JSON-RPC messages.', { headers: { Allow: 'POST, DELETE' } });
  }
  if (sessionId === null || (await sessions.use(sessionId, key.id, scope, now)) === null) throw unknownSession();
  const held = streamsOf(services).find(lastEventId, key.id, sessionId, now);
  const resumed = held === null ? false : resumeStream(context, held.stream, held.sequence);
  if (!resumed) throw new GatewayError('not_found', 'No stream with this Last-Event-ID on this instance (it ended too long ago, or another instance holds it): send the request again.');
}

/** The POST's one JSON-RPC message; null when it was not one (answered already with JSON-RPC's parse or request error). */
async function readMessage(context: RequestContext, maxBodyBytes: number): Promise<Exclude<ClientMessage, { kind: 'invalid' }> | null> {
  const body = await readBody(context, maxBodyBytes);
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    sendRaw(context, 400, errorMessage(null, PARSE_ERROR, 'The body is not valid JSON.'), JSON_TYPE);
    return null;
  }
  const message = readClientMessage(parsed);
  if (message.kind === 'invalid') {
    sendRaw(context, 400, errorMessage(message.id, INVALID_REQUEST, message.message), JSON_TYPE);
    return null;
  }
  return message;
}

/** `initialize` opens a session on this endpoint for the key, at the protocol version both sides speak. */
async function openSession(call: McpCall, sessions: ClientSessions, requestId: JsonRpcId, protocolVersion: string, now: number): Promise<void> {
  const { scope } = call;
  const id = await sessions.open(call.key.id, scope, protocolVersion, now);
  const result = {
    protocolVersion,
    capabilities: { tools: { listChanged: false }, prompts: { listChanged: false }, resources: { subscribe: false, listChanged: false } },
    serverInfo: GATEWAY_INFO,
    instructions: scope === null
      ? 'Tools and prompts of several MCP servers, each named <server>__<name>; their resources as mcp-gateway://<server>/<the server\'s URI>.'
      : `Tools and prompts of the MCP server '${scope}', each named ${scope}__<name>; its resources under their own URIs.`,
  };
  sendRaw(call.context, 200, resultMessage(requestId, result), JSON_TYPE, { 'Mcp-Session-Id': id });
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
  const allowed = serversOfKey(key, serversVisibleTo(await services.storage.mcpServers.list(), key.accountId, services.config.mcp.allowAccountServers), policies);
  if (scope === null) return allowed;
  const server = allowed.find((candidate) => candidate.name === scope);
  if (server === undefined) throw new GatewayError('not_found', `No MCP server '${scope}' for this API key.`);
  return [server];
}

async function answer(call: McpCall, request: JsonRpcRequest): Promise<unknown> {
  switch (request.method) {
    case 'ping': return {};
    case 'tools/list': return listTools(call);
    case 'tools/call': return callTool(call, request.params ?? {});
    case 'prompts/list': return listPrompts(call);
    case 'prompts/get': return getPrompt(call, request.params ?? {});
    case 'resources/list': return listResources(call);
    case 'resources/templates/list': return listResourceTemplates(call);
    case 'resources/read': return readResource(call, request.params ?? {});
    // Not offered (the `subscribe` capability is not declared): subscriptions would need the upstream sessions held
    // open between requests, which the gateway does not do.
    default: throw new RpcError(METHOD_NOT_FOUND, `Method not found: ${request.method}`);
  }
}

/**
 * The union of the servers' tools the key may use (mcp-access.ts `toolRule`: a refused tool, or a `read_only` one
 * its server does not declare read-only, is left out), renamed `<server>__<tool>`, their descriptions through the
 * caller's guardrails (a blocked tool is left out and named in `_meta`). A server its health check found down is not
 * asked; one that cannot be reached is left out of the list (logged) rather than failing the others.
 */
async function listTools(call: McpCall): Promise<{ tools: Tool[]; _meta?: Record<string, unknown> }> {
  const blocked: BlockedTool[] = [];
  const usage: GuardrailUsage[] = [];
  const lists = await Promise.all(call.servers.map(async (server) => {
    if (serverDown(server) !== null) return [];
    try {
      const headers = await call.services.storage.mcpServers.headersOf(server.id);
      const listed = await withUpstream(server, headers, call.timeouts, (client) => listUpstreamTools(client, call.timeouts), call.outbound);
      const checked = checkTools(call.guardrails, listed.filter((tool) => ruleAdmits(toolRule(server, tool.name, call.policies), tool)), server.name);
      blocked.push(...checked.blocked);
      usage.push(...checked.usage);
      return checked.tools.map((tool) => ({ ...tool, name: gatewayToolName(server.name, tool.name) }));
    } catch (error) {
      call.services.logger.warn('mcp server did not list its tools', { server: server.name, error: describeError(error) });
      return [];
    }
  }));
  Object.assign(call.responseHeaders, guardrailsHeader(mergeUsage(usage)));
  if (blocked.length === 0) return { tools: lists.flat() };
  call.services.logger.info('mcp tools left out by guardrails', { tools: blocked.map((entry) => `${entry.tool} (${entry.policy})`).join(', ') });
  return { tools: lists.flat(), _meta: { 'unigate/guardrail_blocked_tools': blocked } };
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
  const ran: GuardrailUsage[] = [];
  const outcome = await callToolMetered(services, {
    key, account, server, tool: target.tool, args: args as Record<string, unknown> | undefined, policies: call.policies, outbound: call.outbound, timeouts: call.timeouts,
    headers: await services.storage.mcpServers.headersOf(server.id), requestId: context.requestId, observation: context.observation, endpoint: context.path, startedAt: context.startedAt, family: context.family,
    guardrails: call.guardrails, guardrailsRan: ran, ...(call.onProgress === undefined ? {} : { onProgress: call.onProgress }),
  });
  Object.assign(call.responseHeaders, guardrailsHeader(ran));
  switch (outcome.kind) {
    case 'result': return outcome.result;
    case 'unknown_tool': throw unknownTool(name);
    // The upstream's own protocol errors (an unknown tool, invalid arguments, a timeout) reach the client as such.
    case 'protocol_error': throw new RpcError(outcome.code, outcome.message, outcome.data);
    case 'unreachable': throw new RpcError(INTERNAL_ERROR, outcome.message);
    case 'server_down': throw new RpcError(SERVER_UNAVAILABLE, outcome.message, { code: 'mcp_server_down', server: server.name });
    case 'guardrail_blocked': throw new RpcError(GUARDRAIL_BLOCKED, outcome.message, { code: 'guardrail_blocked', policy: outcome.policy, direction: outcome.direction });
  }
}

function unknownTool(name: string): RpcError {
  return new RpcError(INVALID_PARAMS, `Unknown tool: ${name}`);
}

function acceptsEventStream(context: RequestContext): boolean {
  const accept = context.request.headers.accept;
  return typeof accept === 'string' && accept.toLowerCase().includes('text/event-stream');
}

const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' };

/**
 * A tool call answered as an SSE stream (Streamable HTTP): a priming event (an id and the `retry` to resume after),
 * the upstream's progress as `notifications/progress` with the client's token (when the client sent one), then the
 * answer. Every event is held (resumable-streams.ts), so a client whose connection broke resumes with GET and
 * `Last-Event-ID`; the call runs to its end either way (it is charged as any call that ran). What the guardrails did
 * is on the call's usage row, not in a header: the headers left before the call ran.
 */
async function streamAnswer(call: McpCall, request: JsonRpcRequest, sessionId: string): Promise<void> {
  const { services, context } = call;
  const stream = streamsOf(services).open(call.key.id, sessionId, services.clock.now());
  const response = context.response;
  let attached = true;
  response.on('close', () => { attached = false; });
  const send = (event: StreamEvent, retryMs?: number): void => {
    if (attached && !response.writableEnded) response.write(sseEvent(event, retryMs));
  };
  response.writeHead(200, { ...SSE_HEADERS, 'Mcp-Session-Id': sessionId });
  send(stream.push(''), RESUME_AFTER_MS);
  const token = progressTokenOf(request.params);
  if (token !== undefined) {
    call.onProgress = (progress) => {
      const params = { progressToken: token, progress: progress.progress, ...(progress.total === undefined ? {} : { total: progress.total }), ...(progress.message === undefined ? {} : { message: progress.message }) };
      send(stream.push(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params })));
    };
  }
  let message: string;
  try {
    message = resultMessage(request.id, await answer(call, request));
  } catch (error) {
    if (error instanceof RpcError) message = errorMessage(request.id, error.code, error.message, error.data);
    else {
      services.logger.warn('mcp streamed call failed', { error: describeError(error) });
      message = errorMessage(request.id, INTERNAL_ERROR, error instanceof GatewayError ? error.message : 'The gateway failed on this call.');
    }
  }
  send(stream.push(message));
  stream.end(services.clock.now());
  if (attached) response.end();
}

/** The client's `_meta.progressToken` of a request, if it sent one. */
function progressTokenOf(params: Record<string, unknown> | undefined): string | number | undefined {
  const meta = params?._meta;
  if (meta === null || typeof meta !== 'object') return undefined;
  const token = (meta as Record<string, unknown>).progressToken;
  return typeof token === 'string' || (typeof token === 'number' && Number.isFinite(token)) ? token : undefined;
}

/** A held stream resumed on this GET: the events after `sequence`, then the rest live; false when they are not held. */
function resumeStream(context: RequestContext, stream: HeldStream, sequence: number): boolean {
  const response = context.response;
  const resumed = stream.resumeAfter(sequence, (event) => {
    if (event === null) response.end();
    else if (!response.writableEnded) response.write(sseEvent(event));
  });
  if (resumed === null) return false;
  response.on('close', resumed.unfollow);
  response.writeHead(200, SSE_HEADERS);
  for (const event of resumed.replay) response.write(sseEvent(event));
  if (stream.endedAt !== null) response.end();
  return true;
}
