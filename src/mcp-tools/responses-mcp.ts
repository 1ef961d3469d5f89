import { randomBytes } from 'node:crypto';
import type { GatewayError } from '../errors/gateway-error.js';
import { sendRaw } from '../http/respond.js';
import { EventStream, textPieces } from './event-stream.js';
import type { ToolOutcome } from './mcp-tool-runs.js';
import { guardrailRefusal, outcomeText, toolRunCaller } from './mcp-tool-runs.js';
import type { McpToolCall } from './mcp-tool-wire.js';
import { ModelRounds, roundError } from './model-rounds.js';
import {
  findOfferedServers, functionNameOf, listOfferedTools, offerTools, type OfferedTool, type ServerListing,
} from './offered-servers.js';
import { badRequest, requestedServers } from './responses-mcp-request.js';
import { parseArguments, runToolUses } from './run-tool-uses.js';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);
const itemId = (prefix: string): string => `${prefix}_${randomBytes(16).toString('hex')}`;

function listItem(listing: ServerListing): Json {
  return {
    type: 'mcp_list_tools',
    id: itemId('mcpl'),
    server_label: listing.offered.requested.label,
    tools: listing.tools.map((tool) => ({ name: tool.name, description: tool.description ?? null, input_schema: tool.inputSchema, annotations: tool.annotations ?? null })),
    error: listing.error,
  };
}

function callItem(offered: OfferedTool, argumentsText: string, outcome: ToolOutcome, approvalRequestId: string | null): Json {
  const item: Json = { type: 'mcp_call', id: itemId('mcp'), server_label: offered.offered.requested.label, name: offered.tool.name, arguments: argumentsText, approval_request_id: approvalRequestId };
  switch (outcome.kind) {
    case 'result':
      return { ...item, output: outcomeText(outcome), error: null, status: 'completed' };
    case 'tool_error':
      return { ...item, output: outcomeText(outcome), error: { type: 'mcp_tool_execution_error', content: outcome.result.content }, status: 'failed' };
    case 'protocol_error':
      return { ...item, output: null, error: { type: 'mcp_protocol_error', code: outcome.code, message: outcome.message }, status: 'failed' };
    case 'unreachable':
      return { ...item, output: null, error: { type: 'http_error', code: 502, message: outcome.message }, status: 'failed' };
    case 'guardrail_blocked':
      return { ...item, output: null, error: { type: 'guardrail_blocked', message: outcome.message }, status: 'failed' };
  }
}

/** What the model reads of a past `mcp_call`: its output, or its error. */
function pastCallOutput(item: Json): string {
  if (typeof item.output === 'string') return item.output;
  const error = item.error;
  if (typeof error === 'string') return `Error: ${error}`;
  if (isObject(error) && typeof error.message === 'string') return `Error: ${error.message}`;
  return '';
}

const argumentsText = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value ?? {}));

/** Token counts of the rounds, added up as one response's usage. */
class UsageTotal {
  input = 0;
  output = 0;
  cached = 0;
  reasoning = 0;

  add(usage: unknown): void {
    if (!isObject(usage)) return;
    const number = (value: unknown): number => (typeof value === 'number' ? value : 0);
    this.input += number(usage.input_tokens);
    this.output += number(usage.output_tokens);
    if (isObject(usage.input_tokens_details)) this.cached += number(usage.input_tokens_details.cached_tokens);
    if (isObject(usage.output_tokens_details)) this.reasoning += number(usage.output_tokens_details.reasoning_tokens);
  }

  toJson(): Json {
    return {
      input_tokens: this.input,
      input_tokens_details: { cached_tokens: this.cached },
      output_tokens: this.output,
      output_tokens_details: { reasoning_tokens: this.reasoning },
      total_tokens: this.input + this.output,
    };
  }
}

/** The Responses stream events of the output items, numbered in order. */
class ResponsesEvents {
  #sequence = 0;

  constructor(private readonly stream: EventStream | null) {}

  emit(type: string, fields: Json): void {
    this.stream?.send(type, { type, ...fields, sequence_number: this.#sequence++ });
  }

  /** An item whole: added, its content as deltas where the API streams it, done. */
  item(item: Json, index: number): void {
    if (this.stream === null) return;
    const base = { output_index: index, item_id: item.id };
    switch (item.type) {
      case 'message': {
        this.emit('response.output_item.added', { output_index: index, item: { ...item, content: [], status: 'in_progress' } });
        const content = Array.isArray(item.content) ? item.content : [];
        content.forEach((part: unknown, contentIndex) => {
          if (!isObject(part)) return;
          const at = { ...base, content_index: contentIndex };
          const text = typeof part.text === 'string' ? part.text : typeof part.refusal === 'string' ? part.refusal : '';
          const empty = part.type === 'output_text' ? { ...part, text: '', annotations: [] } : { ...part, refusal: '' };
          this.emit('response.content_part.added', { ...at, part: empty });
          if (part.type === 'output_text') {
            for (const delta of textPieces(text)) this.emit('response.output_text.delta', { ...at, delta, logprobs: [] });
            this.emit('response.output_text.done', { ...at, text, logprobs: [] });
          } else {
            this.emit('response.refusal.delta', { ...at, delta: text });
            this.emit('response.refusal.done', { ...at, refusal: text });
          }
          this.emit('response.content_part.done', { ...at, part });
        });
        break;
      }
      case 'function_call':
        this.emit('response.output_item.added', { output_index: index, item: { ...item, arguments: '', status: 'in_progress' } });
        this.emit('response.function_call_arguments.delta', { ...base, delta: item.arguments });
        this.emit('response.function_call_arguments.done', { ...base, arguments: item.arguments });
        break;
      case 'mcp_list_tools':
        this.emit('response.output_item.added', { output_index: index, item: { ...item, tools: [] } });
        this.emit('response.mcp_list_tools.in_progress', base);
        this.emit(item.error === null ? 'response.mcp_list_tools.completed' : 'response.mcp_list_tools.failed', base);
        break;
      default:
        this.emit('response.output_item.added', { output_index: index, item });
    }
    this.emit('response.output_item.done', { output_index: index, item });
  }

  /** A call the model made, announced before it runs. */
  callStarted(item: Json, index: number): void {
    const base = { output_index: index, item_id: item.id };
    this.emit('response.output_item.added', { output_index: index, item: { ...item, output: null, error: null, status: 'in_progress' } });
    this.emit('response.mcp_call_arguments.delta', { ...base, delta: item.arguments });
    this.emit('response.mcp_call_arguments.done', { ...base, arguments: item.arguments });
    this.emit('response.mcp_call.in_progress', base);
  }

  callEnded(item: Json, index: number): void {
    const base = { output_index: index, item_id: item.id };
    this.emit(item.status === 'completed' ? 'response.mcp_call.completed' : 'response.mcp_call.failed', base);
    this.emit('response.output_item.done', { output_index: index, item });
  }
}

/** A model call of an offered tool in a round's output. */
interface PendingUse {
  callId: string;
  offered: OfferedTool;
  argumentsText: string;
}

/**
 * The conversation the caller sent, for the model: past `mcp_call` items become the function call and output the
 * model made and read; an approved `mcp_approval_request` is run first (its `mcp_call` leads the output), a declined
 * one becomes a call the model is told was declined. The gateway keeps no responses, so an approval's request item
 * must come back with the answer to it.
 */
function readHistory(input: unknown, tools: ReadonlyMap<string, OfferedTool>): { history: unknown[]; approved: Array<{ request: Json; index: number }>; listed: Set<string> } {
  const items: unknown[] = typeof input === 'string' ? [{ role: 'user', content: input }] : Array.isArray(input) ? input : [];
  const answers = new Map<string, Json>();
  const requests = new Set<string>();
  for (const item of items) {
    if (isObject(item) && item.type === 'mcp_approval_response' && typeof item.approval_request_id === 'string') answers.set(item.approval_request_id, item);
    if (isObject(item) && item.type === 'mcp_approval_request' && typeof item.id === 'string') requests.add(item.id);
  }
  for (const [id] of answers) {
    if (!requests.has(id)) throw badRequest('input', `The mcp_approval_response for '${id}' needs its mcp_approval_request item in the input too: this gateway keeps no past responses.`);
  }
  const history: unknown[] = [];
  const approved: Array<{ request: Json; index: number }> = [];
  const listed = new Set<string>();
  for (const item of items) {
    if (!isObject(item) || typeof item.type !== 'string' || !item.type.startsWith('mcp_')) {
      history.push(item);
      continue;
    }
    const label = String(item.server_label ?? '');
    const call = (id: string): Json => ({ type: 'function_call', call_id: id, name: functionNameOf(tools, label, String(item.name ?? '')), arguments: argumentsText(item.arguments) });
    switch (item.type) {
      case 'mcp_list_tools':
        listed.add(label);
        break;
      case 'mcp_call':
        history.push(call(String(item.id)), { type: 'function_call_output', call_id: String(item.id), output: pastCallOutput(item) });
        break;
      case 'mcp_approval_request': {
        const answer = answers.get(String(item.id));
        if (answer === undefined) break;
        history.push(call(String(item.id)));
        if (answer.approve === true) {
          approved.push({ request: item, index: history.length });
          history.push(null);
        } else {
          const reason = typeof answer.reason === 'string' && answer.reason !== '' ? ` Reason: ${answer.reason}` : '';
          history.push({ type: 'function_call_output', call_id: String(item.id), output: `The user declined this tool call.${reason}` });
        }
        break;
      }
      default:
        break;
    }
  }
  return { history, approved, listed };
}

function findTool(tools: ReadonlyMap<string, OfferedTool>, label: string, name: string): OfferedTool | undefined {
  for (const offered of tools.values()) if (offered.offered.requested.label === label && offered.tool.name === name) return offered;
  return undefined;
}

/**
 * One round's request to the model: the conversation so far, the caller's own tools with the offered servers' tools as
 * functions (none: no `tools`), not streamed. The first round keeps the caller's tool choice (an `mcp` one becomes
 * `auto`), later rounds choose freely, and the last may call no tool.
 */
function roundBodyOf(body: Json, input: unknown[], tools: unknown[], round: number, final: boolean): Json {
  const roundBody: Json = { ...body, input, tools, stream: false };
  if (round > 0) roundBody.tool_choice = 'auto';
  if (final) roundBody.tool_choice = 'none';
  if (roundBody.tool_choice === undefined || (isObject(roundBody.tool_choice) && roundBody.tool_choice.type === 'mcp')) roundBody.tool_choice = 'auto';
  if (tools.length === 0) delete roundBody.tools;
  return roundBody;
}

/**
 * A round's output items: calls of the offered servers' tools (`uses`, run by the gateway), the items shown to the
 * caller as they are, and whether the model called one of the caller's own tools (the caller runs those: the loop ends).
 */
function readRoundOutput(items: unknown[], offered: ReadonlyMap<string, OfferedTool>): { uses: PendingUse[]; shown: Json[]; ownCalls: boolean } {
  const uses: PendingUse[] = [];
  const shown: Json[] = [];
  let ownCalls = false;
  for (const item of items) {
    if (!isObject(item)) continue;
    const tool = item.type === 'function_call' && typeof item.name === 'string' ? offered.get(item.name) : undefined;
    if (tool !== undefined) {
      uses.push({ callId: String(item.call_id ?? item.id ?? itemId('call')), offered: tool, argumentsText: argumentsText(item.arguments) });
      continue;
    }
    if (item.type === 'function_call' || item.type === 'custom_tool_call') ownCalls = true;
    shown.push(item);
  }
  return { uses, shown, ownCalls };
}

/** The Responses API's `mcp` tool, served by the gateway for every model. */
export async function serveResponses(call: McpToolCall): Promise<void> {
  const { services, context, body } = call;
  const tools = body.tools as unknown[];
  const caller = await toolRunCaller(services, call.key, call.account, context, body.model);
  const requested = requestedServers(tools);
  const servers = await findOfferedServers(services, call.key, requested, caller.policies);
  const listings = await listOfferedTools(services, caller, servers);
  const ownTools = tools.filter((tool) => !(isObject(tool) && tool.type === 'mcp'));
  const ownNames = new Set(ownTools.flatMap((tool) => (isObject(tool) && typeof tool.name === 'string' ? [tool.name] : [])));
  const offered = offerTools(listings, ownNames);
  const functions = [...offered.values()].map((tool) => ({ type: 'function', name: tool.functionName, description: tool.tool.description ?? '', parameters: tool.tool.inputSchema, strict: false }));
  const { history, approved, listed } = readHistory(body.input, offered);

  const streamed = body.stream === true;
  const stream = streamed ? new EventStream(context) : null;
  const events = new ResponsesEvents(stream);
  const responseId = itemId('resp');
  const createdAt = Math.floor(services.clock.now() / 1000);
  const skeleton: Json = {
    id: responseId, object: 'response', created_at: createdAt, status: 'in_progress', model: body.model, output: [], usage: null, error: null,
    incomplete_details: null, instructions: body.instructions ?? null, metadata: body.metadata ?? {}, tools, tool_choice: body.tool_choice ?? 'auto',
    parallel_tool_calls: body.parallel_tool_calls ?? true, temperature: body.temperature ?? null, top_p: body.top_p ?? null,
  };
  events.emit('response.created', { response: skeleton });
  events.emit('response.in_progress', { response: skeleton });

  /** A guardrail's refusal of a tool result: the family's error answer, or the stream's `response.failed`. */
  const failWith = (error: GatewayError, items: Json[], usageSoFar: Json | null): void => {
    if (stream === null || !stream.open) throw error;
    const failed = { ...skeleton, status: 'failed', output: items, usage: usageSoFar, error: { code: error.code, message: error.message } };
    events.emit('response.failed', { response: failed });
    stream.end();
  };
  const output: Json[] = [];
  const show = (item: Json): void => {
    output.push(item);
    events.item(item, output.length - 1);
  };
  for (const listing of listings) if (!listed.has(listing.offered.requested.label)) show(listItem(listing));

  // Calls the caller approved run before the model is asked again.
  const approvedUses = approved.map(({ request }) => ({ request, offered: findTool(offered, String(request.server_label ?? ''), String(request.name ?? '')) }));
  const approvedOutcomes = await runToolUses(services, caller, approvedUses.flatMap(({ request, offered: tool }) => (tool === undefined ? [] : [{ offered: tool, arguments: parseArguments(request.arguments) }])));
  const refusedApproved = guardrailRefusal(approvedOutcomes);
  if (refusedApproved !== null) return failWith(refusedApproved, [], null);
  let ran = 0;
  approvedUses.forEach(({ request, offered: tool }, index) => {
    const outcome: ToolOutcome = tool === undefined ? { kind: 'protocol_error', code: -32602, message: `Unknown tool: ${String(request.name)}` } : (approvedOutcomes[ran++] as ToolOutcome);
    const slot = approved[index] as { request: Json; index: number };
    history[slot.index] = { type: 'function_call_output', call_id: String(request.id), output: outcomeText(outcome) };
    if (tool !== undefined) show(callItem(tool, argumentsText(request.arguments), outcome, String(request.id)));
  });

  const rounds = new ModelRounds(call.chat, context, context.family, call.rounds);
  const usage = new UsageTotal();
  const appended: unknown[] = [];
  let last: Json | null = null;
  for (;;) {
    // A caller that left is asked nothing more of the model (what ran is billed, round by round).
    if (context.response.destroyed) return;
    const final = rounds.isLast;
    const answer = await rounds.run(roundBodyOf(body, [...history.filter((item) => item !== null), ...appended], [...ownTools, ...functions], rounds.count, final));
    if (!answer.ok) {
      if (stream === null) {
        sendRaw(context, answer.answer.status, answer.answer.body, answer.answer.headers['content-type'] ?? 'application/json');
        return;
      }
      // The round's own error when it has one (a guardrail's refusal stays guardrail_blocked), else a server error.
      const own = roundError(answer.answer);
      const error = own !== null && typeof own.code === 'string' ? { code: own.code, message: own.message } : { code: 'server_error', message: `The model's answer failed (status ${answer.answer.status}).` };
      const failed = { ...skeleton, status: 'failed', output, usage: usage.toJson(), error };
      events.emit('response.failed', { response: failed });
      stream.end();
      return;
    }
    last = answer.json;
    usage.add(last.usage);
    const items = Array.isArray(last.output) ? (last.output as unknown[]) : [];
    const { uses, shown, ownCalls } = readRoundOutput(items, offered);
    for (const item of shown) show(item);
    appended.push(...items);
    if (uses.length === 0) break;
    const waiting = uses.filter((use) => use.offered.offered.requested.needsApproval(use.offered.tool));
    const runNow = uses.filter((use) => !waiting.includes(use));
    const started = runNow.map((use) => {
      const item: Json = { type: 'mcp_call', id: itemId('mcp'), server_label: use.offered.offered.requested.label, name: use.offered.tool.name, arguments: use.argumentsText, approval_request_id: null };
      output.push(item);
      events.callStarted(item, output.length - 1);
      return { item, index: output.length - 1 };
    });
    const outcomes = await runToolUses(services, caller, runNow.map((use) => ({ offered: use.offered, arguments: parseArguments(use.argumentsText) })));
    const refused = guardrailRefusal(outcomes);
    if (refused !== null) return failWith(refused, output, usage.toJson());
    runNow.forEach((use, index) => {
      const outcome = outcomes[index] as ToolOutcome;
      const slot = started[index] as { item: Json; index: number };
      const item = { ...callItem(use.offered, use.argumentsText, outcome, null), id: slot.item.id };
      output[slot.index] = item;
      events.callEnded(item, slot.index);
      appended.push({ type: 'function_call_output', call_id: use.callId, output: outcomeText(outcome) });
    });
    for (const use of waiting) {
      show({ type: 'mcp_approval_request', id: itemId('mcpr'), server_label: use.offered.offered.requested.label, name: use.offered.tool.name, arguments: use.argumentsText });
    }
    if (waiting.length > 0 || ownCalls || final) break;
  }

  const response: Json = { ...(last ?? {}), ...skeleton, status: last?.status ?? 'completed', incomplete_details: last?.incomplete_details ?? null, output, usage: usage.toJson() };
  if (stream !== null) {
    events.emit(response.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response });
    stream.end();
    return;
  }
  sendRaw(context, 200, JSON.stringify(response), 'application/json');
}
