import { randomBytes } from 'node:crypto';
import { GatewayError } from '../errors/gateway-error.js';
import { sendRaw } from '../http/respond.js';
import { EventStream, textPieces } from './event-stream.js';
import { guardrailRefusal, outcomeText, toolRunCaller, type ToolOutcome } from './mcp-tool-runs.js';
import type { McpToolCall } from './mcp-tool-wire.js';
import { ModelRounds, roundError } from './model-rounds.js';
import { findOfferedServers, functionNameOf, listOfferedTools, offerTools, type OfferedTool, type RequestedServer } from './offered-servers.js';
import { runToolUses } from './run-tool-uses.js';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);

/** The beta Anthropic's MCP connector is asked for by (`anthropic-beta`); any revision of it is taken. */
const MCP_BETA = /^mcp-client-/;

function badRequest(param: string, message: string): GatewayError {
  return new GatewayError('bad_request', message, { param });
}

/** The `mcp_servers` of a Messages request, read; servers whose tools are turned off are left out. */
function requestedServers(raw: unknown[]): RequestedServer[] {
  const requested: RequestedServer[] = [];
  raw.forEach((entry, index) => {
    const param = `mcp_servers[${index}]`;
    if (!isObject(entry)) throw badRequest(param, `'${param}' must be an object.`);
    if (entry.type !== 'url') throw badRequest(`${param}.type`, `'${param}.type' must be 'url'.`);
    if (typeof entry.url !== 'string' || entry.url === '') throw badRequest(`${param}.url`, `'${param}.url' is required.`);
    if (typeof entry.name !== 'string' || entry.name === '') throw badRequest(`${param}.name`, `'${param}.name' is required.`);
    const configuration = entry.tool_configuration;
    if (configuration !== undefined && configuration !== null && !isObject(configuration)) throw badRequest(`${param}.tool_configuration`, `'${param}.tool_configuration' must be an object.`);
    if (isObject(configuration) && configuration.enabled === false) return;
    let allowed: Set<string> | null = null;
    if (isObject(configuration) && configuration.allowed_tools !== undefined && configuration.allowed_tools !== null) {
      const list = configuration.allowed_tools;
      if (!Array.isArray(list) || !list.every((name) => typeof name === 'string')) throw badRequest(`${param}.tool_configuration.allowed_tools`, 'allowed_tools must be a list of tool names.');
      allowed = new Set(list as string[]);
    }
    const token = entry.authorization_token;
    if (token !== undefined && token !== null && (typeof token !== 'string' || !/^[\x21-\x7e]{1,8000}$/.test(token))) throw badRequest(`${param}.authorization_token`, 'authorization_token must be a single-line token.');
    requested.push({
      param,
      label: entry.name,
      url: entry.url,
      allows: (tool) => allowed === null || allowed.has(tool.name),
      needsApproval: () => false,
      headers: typeof token === 'string' ? { Authorization: `Bearer ${token}` } : {},
    });
  });
  return requested;
}

/**
 * The conversation for the model: `mcp_tool_use` blocks become the assistant's `tool_use` and `mcp_tool_result`
 * blocks the user's `tool_result`, turns of one role next to each other joined into one.
 */
function readHistory(messages: unknown, tools: ReadonlyMap<string, OfferedTool>): Json[] {
  if (!Array.isArray(messages)) return [];
  const turns: Json[] = [];
  const add = (role: string, block: unknown): void => {
    const previous = turns.at(-1);
    if (previous !== undefined && previous.role === role) (previous.content as unknown[]).push(block);
    else turns.push({ role, content: [block] });
  };
  for (const message of messages) {
    if (!isObject(message)) {
      turns.push(message as Json);
      continue;
    }
    const role = String(message.role);
    const blocks = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : Array.isArray(message.content) ? message.content : [];
    if (blocks.length === 0) {
      turns.push(message);
      continue;
    }
    for (const block of blocks) {
      if (isObject(block) && block.type === 'mcp_tool_use') {
        add('assistant', { type: 'tool_use', id: block.id, name: functionNameOf(tools, String(block.server_name ?? ''), String(block.name ?? '')), input: block.input ?? {} });
      } else if (isObject(block) && block.type === 'mcp_tool_result') {
        add('user', { type: 'tool_result', tool_use_id: block.tool_use_id, content: block.content ?? '', is_error: block.is_error === true });
      } else {
        add(role, block);
      }
    }
  }
  return turns;
}

/** Token counts of the rounds, added up as one message's usage. */
function addUsage(total: Json, usage: unknown): void {
  if (!isObject(usage)) return;
  for (const name of ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens']) {
    const value = usage[name];
    if (typeof value === 'number') total[name] = (typeof total[name] === 'number' ? (total[name] as number) : 0) + value;
  }
}

/** The Messages stream events of the content blocks, numbered in order. */
class MessageEvents {
  #index = 0;

  constructor(private readonly stream: EventStream | null) {}

  emit(type: string, fields: Json): void {
    this.stream?.send(type, { type, ...fields });
  }

  block(block: Json): void {
    if (this.stream === null) return;
    const index = this.#index++;
    switch (block.type) {
      case 'text':
        this.emit('content_block_start', { index, content_block: { ...block, text: '' } });
        for (const text of textPieces(String(block.text ?? ''))) this.emit('content_block_delta', { index, delta: { type: 'text_delta', text } });
        break;
      case 'thinking':
        this.emit('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
        this.emit('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: String(block.thinking ?? '') } });
        this.emit('content_block_delta', { index, delta: { type: 'signature_delta', signature: String(block.signature ?? '') } });
        break;
      case 'tool_use':
      case 'mcp_tool_use':
        this.emit('content_block_start', { index, content_block: { ...block, input: {} } });
        this.emit('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input ?? {}) } });
        break;
      default:
        this.emit('content_block_start', { index, content_block: block });
    }
    this.emit('content_block_stop', { index });
  }
}

function resultBlock(id: string, outcome: ToolOutcome): Json {
  return { type: 'mcp_tool_result', tool_use_id: id, is_error: outcome.kind !== 'result', content: [{ type: 'text', text: outcomeText(outcome) }] };
}

/** The `anthropic-beta` header of a round: the MCP connector's beta left out (the gateway serves it; the model never sees it). */
function withoutMcpBeta(name: string, value: string): string | null {
  if (name !== 'anthropic-beta') return value;
  const kept = value.split(',').map((beta) => beta.trim()).filter((beta) => beta !== '' && !MCP_BETA.test(beta));
  return kept.length === 0 ? null : kept.join(',');
}


/** Anthropic's MCP connector (`mcp_servers`), served by the gateway for every model. */
export async function serveMessages(call: McpToolCall): Promise<void> {
  const { services, context, body } = call;
  const betas = String(context.request.headers['anthropic-beta'] ?? '').split(',').map((beta) => beta.trim());
  if (!betas.some((beta) => MCP_BETA.test(beta))) {
    throw badRequest('mcp_servers', "'mcp_servers' needs the MCP connector's beta: send the header 'anthropic-beta: mcp-client-2025-04-04'.");
  }
  const caller = await toolRunCaller(services, call.key, call.account, context, body.model);
  const servers = await findOfferedServers(services, call.key, requestedServers(body.mcp_servers as unknown[]), caller.policies);
  const listings = await listOfferedTools(services, caller, servers);
  const failed = listings.find((listing) => listing.error !== null);
  if (failed !== undefined) throw new GatewayError('upstream_error', failed.error ?? 'An MCP server could not list its tools.');
  const ownTools = Array.isArray(body.tools) ? (body.tools as unknown[]) : [];
  const ownNames = new Set(ownTools.flatMap((tool) => (isObject(tool) && typeof tool.name === 'string' ? [tool.name] : [])));
  const offered = offerTools(listings, ownNames);
  const functions = [...offered.values()].map((tool) => ({ name: tool.functionName, description: tool.tool.description ?? '', input_schema: tool.tool.inputSchema }));
  const history = readHistory(body.messages, offered);
  const { mcp_servers: _servers, ...rest } = body;

  const stream = body.stream === true ? new EventStream(context) : null;
  const events = new MessageEvents(stream);
  const messageId = `msg_${randomBytes(12).toString('hex')}`;
  events.emit('message_start', { message: { id: messageId, type: 'message', role: 'assistant', model: body.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 0, output_tokens: 0 } } });

  const rounds = new ModelRounds(call.chat, context, context.family, call.rounds, withoutMcpBeta);
  const usage: Json = {};
  const content: Json[] = [];
  const appended: Json[] = [];
  let last: Json | null = null;
  for (;;) {
    // A caller that left is asked nothing more of the model (what ran is billed, round by round).
    if (context.response.destroyed) return;
    const final = rounds.isLast;
    const roundBody: Json = { ...rest, messages: [...history, ...appended], stream: false };
    if (functions.length > 0 || ownTools.length > 0) roundBody.tools = [...ownTools, ...functions];
    if (rounds.count > 0 && roundBody.tool_choice !== undefined) roundBody.tool_choice = { type: 'auto' };
    if (final && roundBody.tools !== undefined) roundBody.tool_choice = { type: 'none' };
    const answer = await rounds.run(roundBody);
    if (!answer.ok) {
      if (stream === null) {
        sendRaw(context, answer.answer.status, answer.answer.body, answer.answer.headers['content-type'] ?? 'application/json');
        return;
      }
      // The round's own error when it has one (a guardrail's refusal stays guardrail_blocked), else an API error.
      events.emit('error', { error: roundError(answer.answer) ?? { type: 'api_error', message: `The model's answer failed (status ${answer.answer.status}).` } });
      stream.end();
      return;
    }
    last = answer.json;
    addUsage(usage, last.usage);
    const blocks = Array.isArray(last.content) ? (last.content as unknown[]).filter(isObject) : [];
    const uses: Array<{ block: Json; tool: OfferedTool }> = [];
    let ownCalls = false;
    for (const block of blocks) {
      const tool = block.type === 'tool_use' && typeof block.name === 'string' ? offered.get(block.name) : undefined;
      const shown = tool === undefined ? block : { type: 'mcp_tool_use', id: block.id, name: tool.tool.name, server_name: tool.offered.requested.label, input: block.input ?? {} };
      if (tool !== undefined) uses.push({ block, tool });
      else if (block.type === 'tool_use') ownCalls = true;
      content.push(shown);
      events.block(shown);
    }
    appended.push({ role: 'assistant', content: blocks });
    if (uses.length === 0) break;
    const outcomes = await runToolUses(services, caller, uses.map((use) => ({ offered: use.tool, arguments: use.block.input })));
    const refused = guardrailRefusal(outcomes);
    if (refused !== null) {
      // A guardrail stopped a tool's result: the family's error answer, or its stream's error event.
      if (stream === null || !stream.open) throw refused;
      events.emit('error', { error: { type: 'invalid_request_error', message: refused.message } });
      stream.end();
      return;
    }
    const results = uses.map((use, index) => ({ id: String(use.block.id), outcome: outcomes[index] as ToolOutcome }));
    for (const { id, outcome } of results) {
      const block = resultBlock(id, outcome);
      content.push(block);
      events.block(block);
    }
    appended.push({ role: 'user', content: results.map(({ id, outcome }) => ({ type: 'tool_result', tool_use_id: id, content: outcomeText(outcome), is_error: outcome.kind !== 'result' })) });
    if (ownCalls || final) break;
  }

  const stopReason = last?.stop_reason ?? 'end_turn';
  const message: Json = { ...(last ?? {}), id: messageId, model: body.model, content, stop_reason: stopReason, usage: { ...(isObject(last?.usage) ? last.usage : {}), ...usage } };
  if (stream !== null) {
    events.emit('message_delta', { delta: { stop_reason: stopReason, stop_sequence: last?.stop_sequence ?? null }, usage });
    events.emit('message_stop', {});
    stream.end();
    return;
  }
  sendRaw(context, 200, JSON.stringify(message), 'application/json');
}
