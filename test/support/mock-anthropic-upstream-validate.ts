/**
 * Request validation of the mock Anthropic upstream, as strict as api.anthropic.com: unknown fields are
 * rejected ("Extra inputs are not permitted"), max_tokens is required, the conversation opens with a user turn
 * and (by default) alternates, every tool_use is answered by tool_result blocks at the start of the next user
 * turn, text blocks are non-empty, sampling ranges hold, and thinking follows Anthropic's rules (budget >= 1024
 * and < max_tokens, temperature 1, no top_k, top_p >= 0.95, no forced tool use, a tool loop's last assistant
 * turn opens with its signed thinking block).
 *
 * Today's API merges consecutive same-role turns instead of rejecting them; `requireAlternation: false` mimics
 * that. The default stays strict because a gateway should never rely on the merge.
 */
import { allowOnly, checkBlock, checkCacheControl, checkText, isObject, requireString, type Block, type JsonObject } from './mock-anthropic-upstream-blocks.js';
import { invalidRequest } from './mock-anthropic-upstream-wire.js';

export { isObject, type Block, type JsonObject } from './mock-anthropic-upstream-blocks.js';

export interface Turn {
  role: 'user' | 'assistant';
  blocks: Block[];
}

export interface Tool {
  name: string;
  description: string;
  schema: JsonObject;
  cacheControl: boolean;
}

export interface MessagesRequest {
  model: string;
  maxTokens: number;
  stream: boolean;
  system: Array<{ text: string; cacheControl: boolean }>;
  turns: Turn[];
  /** Mid-conversation system messages (`role: "system"` inside messages), by their index in `messages`. */
  systemMessages: Array<{ index: number; text: string }>;
  tools: Tool[];
  /** The server-side web search tool was given (`web_search_20250305`), with its max_uses. */
  webSearch: { maxUses: number | null } | null;
  /** The server-side web fetch tool was given (`web_fetch_20250910`), with its max_uses. */
  webFetch: { maxUses: number | null } | null;
  toolChoice: { type: 'auto' | 'any' | 'tool' | 'none'; name?: string; disableParallel: boolean } | null;
  /** adaptive: the model decides per turn whether to think, so a turn without a thinking block is valid */
  thinking: { budgetTokens: number; omitted: boolean; adaptive?: boolean } | null;
  stopSequences: string[];
  jsonSchema: JsonObject | null;
  body: JsonObject;
}

export interface ValidateOptions {
  /** count_tokens: no max_tokens or generation fields. */
  countTokens: boolean;
  requireAlternation: boolean;
  /** The model takes `role: "system"` messages (the mid-conversation-system beta header was sent). */
  midConversationSystem?: boolean;
}

export const MID_CONVERSATION_SYSTEM_BETA = 'mid-conversation-system-2026-04-07';

/** Models that take mid-conversation system messages without the beta header, as Anthropic documents for Opus 4.8. */
export function takesSystemMessagesNatively(model: string): boolean {
  return /^claude-opus-4-8/.test(model);
}

/**
 * Anthropic's placement rules for a mid-conversation system message: not first, right after a user turn, followed
 * by an assistant turn or nothing, never two in a row; text only. Without the beta the role is refused in
 * Anthropic's own words, which Claude Code recognises to fall back to system reminders in user turns.
 */
function checkSystemMessage(raw: JsonObject, index: number, all: unknown[], allowed: boolean): string {
  if (!allowed) throw invalidRequest("role 'system' is not supported on this model");
  const path = `messages.${index}`;
  const previous = all[index - 1];
  const next = all[index + 1];
  const roleOf = (value: unknown): unknown => (isObject(value) ? value.role : undefined);
  if (index === 0) throw invalidRequest(`${path}: a system message cannot be the first message; use the top-level \`system\` parameter`);
  if (roleOf(previous) !== 'user') throw invalidRequest(`${path}: a system message must follow a user message`);
  if (next !== undefined && roleOf(next) !== 'assistant') throw invalidRequest(`${path}: a system message must be the last message or be followed by an assistant message`);
  if (typeof raw.content === 'string') {
    if (raw.content === '') throw invalidRequest(`${path}: all messages must have non-empty content except for the optional final assistant message`);
    return raw.content;
  }
  if (!Array.isArray(raw.content) || raw.content.length === 0) throw invalidRequest(`${path}.content: Input should be a valid string or a non-empty list`);
  return raw.content.map((block: unknown, blockIndex) => {
    if (!isObject(block) || block.type !== 'text') throw invalidRequest(`${path}.content.${blockIndex}.type: Input should be 'text'`);
    const text = checkText(block, `${path}.content.${blockIndex}`);
    return text.type === 'text' ? text.text : '';
  }).join('\n');
}

const MESSAGE_FIELDS = ['model', 'max_tokens', 'messages', 'system', 'temperature', 'top_p', 'top_k', 'stop_sequences', 'stream', 'tools', 'tool_choice', 'thinking', 'metadata', 'service_tier', 'output_config', 'container', 'mcp_servers', 'context_management', 'inference_geo', 'cache_control'];
const COUNT_FIELDS = ['model', 'messages', 'system', 'tools', 'tool_choice', 'thinking', 'output_config', 'mcp_servers', 'context_management'];
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;

function number(body: JsonObject, name: string, min: number, max: number): number | undefined {
  const value = body[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw invalidRequest(`${name}: Input should be a valid number`);
  if (value < min) throw invalidRequest(`${name}: Input should be greater than or equal to ${min}`);
  if (value > max) throw invalidRequest(`${name}: Input should be less than or equal to ${max}`);
  return value;
}

function integer(body: JsonObject, name: string, min: number): number | undefined {
  const value = body[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value)) throw invalidRequest(`${name}: Input should be a valid integer`);
  if (value < min) throw invalidRequest(`${name}: Input should be greater than or equal to ${min}`);
  return value;
}

function checkSystem(value: unknown): MessagesRequest['system'] {
  if (value === undefined) return [];
  if (typeof value === 'string') return value === '' ? [] : [{ text: value, cacheControl: false }];
  if (!Array.isArray(value)) throw invalidRequest('system: Input should be a valid string or list');
  return value.map((item: unknown, index) => {
    if (!isObject(item) || item.type !== 'text') throw invalidRequest(`system.${index}.type: Input should be 'text'`);
    const block = checkText(item, `system.${index}`);
    return { text: block.type === 'text' ? block.text : '', cacheControl: block.type === 'text' && block.cacheControl };
  });
}

function checkTurns(value: unknown, requireAlternation: boolean, midConversationSystem: boolean, systemMessages: MessagesRequest['systemMessages']): Turn[] {
  if (value === undefined) throw invalidRequest('messages: Field required');
  if (!Array.isArray(value)) throw invalidRequest('messages: Input should be a valid list');
  if (value.length === 0) throw invalidRequest('messages: at least one message is required');
  const turns: Turn[] = [];
  value.forEach((raw: unknown, index) => {
    const path = `messages.${index}`;
    if (!isObject(raw)) throw invalidRequest(`${path}: Input should be a valid dictionary`);
    allowOnly(raw, path, ['role', 'content']);
    const role = raw.role;
    if (role === 'system') {
      systemMessages.push({ index, text: checkSystemMessage(raw, index, value, midConversationSystem) });
      return;
    }
    if (role !== 'user' && role !== 'assistant') throw invalidRequest(`${path}.role: Input should be 'user' or 'assistant'`);
    const isLast = index === value.length - 1;
    let blocks: Block[];
    if (typeof raw.content === 'string') {
      blocks = raw.content === '' ? [] : [checkText({ type: 'text', text: raw.content }, `${path}.content`)];
    } else if (Array.isArray(raw.content)) {
      blocks = raw.content.map((block: unknown, blockIndex) => checkBlock(role, block, `${path}.content.${blockIndex}`));
    } else {
      throw invalidRequest(`${path}.content: ${raw.content === undefined ? 'Field required' : 'Input should be a valid string or list'}`);
    }
    if (blocks.length === 0 && !(isLast && role === 'assistant')) {
      throw invalidRequest(`${path}: all messages must have non-empty content except for the optional final assistant message`);
    }
    const previous = turns.at(-1);
    if (previous === undefined && role !== 'user') throw invalidRequest('messages: first message must use the "user" role');
    if (previous?.role === role) {
      if (requireAlternation) throw invalidRequest(`messages: roles must alternate between "user" and "assistant", but found multiple "${role}" roles in a row`);
      previous.blocks.push(...blocks);
    } else turns.push({ role, blocks });
  });
  const last = turns.at(-1);
  const lastBlock = last?.blocks.at(-1);
  if (last?.role === 'assistant' && lastBlock?.type === 'text' && lastBlock.text !== lastBlock.text.trimEnd()) {
    throw invalidRequest('messages: final assistant content cannot end with trailing whitespace');
  }
  checkToolPairing(turns);
  return turns;
}

/** Every tool_use is answered at the start of the next user turn; every tool_result answers the turn before. */
function checkToolPairing(turns: Turn[]): void {
  turns.forEach((turn, index) => {
    if (turn.role === 'user') {
      const previous = turns[index - 1];
      const offered = new Set(previous?.blocks.flatMap((block) => (block.type === 'tool_use' ? [block.id] : [])) ?? []);
      let leading = true;
      turn.blocks.forEach((block, blockIndex) => {
        if (block.type !== 'tool_result') {
          leading = false;
          return;
        }
        if (!offered.has(block.toolUseId)) {
          throw invalidRequest(`messages.${index}.content.${blockIndex}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${block.toolUseId}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`);
        }
        if (!leading) throw invalidRequest(`messages.${index}: \`tool_result\` blocks must come first in the content, before any other block.`);
      });
      return;
    }
    const ids = turn.blocks.flatMap((block) => (block.type === 'tool_use' ? [block.id] : []));
    if (ids.length === 0) return;
    if (new Set(ids).size !== ids.length) throw invalidRequest(`messages.${index}: \`tool_use\` ids must be unique`);
    const next = turns[index + 1];
    if (next === undefined) return;
    const answered = new Set(next.blocks.flatMap((block) => (block.type === 'tool_result' ? [block.toolUseId] : [])));
    const missing = ids.filter((id) => !answered.has(id));
    if (missing.length > 0) {
      throw invalidRequest(`messages.${index + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`);
    }
  });
}

function checkTools(value: unknown): Tool[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw invalidRequest('tools: Input should be a valid list');
  const tools = value.map((raw: unknown, index): Tool => {
    const path = `tools.${index}`;
    if (!isObject(raw)) throw invalidRequest(`${path}: Input should be a valid dictionary`);
    if (raw.type !== undefined && raw.type !== 'custom') return { name: String(raw.name ?? raw.type), description: '', schema: {}, cacheControl: false };
    // defer_loading: tool search (Claude Code sends it on its deferred tools)
    allowOnly(raw, `${path}.custom`, ['type', 'name', 'description', 'input_schema', 'cache_control', 'strict', 'defer_loading']);
    if (raw.defer_loading !== undefined && typeof raw.defer_loading !== 'boolean') throw invalidRequest(`${path}.custom.defer_loading: Input should be a valid boolean`);
    const name = requireString(raw.name, `${path}.custom.name`);
    if (!TOOL_NAME.test(name)) throw invalidRequest(`${path}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`);
    const schema = raw.input_schema;
    if (!isObject(schema)) throw invalidRequest(`${path}.custom.input_schema: Field required`);
    if (schema.type !== 'object') throw invalidRequest(`${path}.custom.input_schema.type: Input should be 'object'`);
    if (raw.strict !== undefined && typeof raw.strict !== 'boolean') throw invalidRequest(`${path}.custom.strict: Input should be a valid boolean`);
    const description = raw.description === undefined ? '' : requireString(raw.description, `${path}.custom.description`);
    return { name, description, schema, cacheControl: checkCacheControl(raw.cache_control, `${path}.custom.cache_control`) };
  });
  if (new Set(tools.map((tool) => tool.name)).size !== tools.length) throw invalidRequest('tools: Tool names must be unique.');
  return tools;
}

function checkToolChoice(value: unknown, tools: Tool[]): MessagesRequest['toolChoice'] {
  if (value === undefined) return null;
  if (!isObject(value)) throw invalidRequest('tool_choice: Input should be a valid dictionary');
  const type = value.type;
  if (type !== 'auto' && type !== 'any' && type !== 'tool' && type !== 'none') {
    throw invalidRequest(`tool_choice: Input tag '${String(type)}' found using 'type' does not match any of the expected tags: 'auto', 'any', 'tool', 'none'`);
  }
  allowOnly(value, `tool_choice.${type}`, type === 'none' ? ['type'] : type === 'tool' ? ['type', 'name', 'disable_parallel_tool_use'] : ['type', 'disable_parallel_tool_use']);
  if (tools.length === 0 && type !== 'none') throw invalidRequest('tool_choice: tool_choice may only be specified while providing tools.');
  const disableParallel = value.disable_parallel_tool_use === true;
  if (type !== 'tool') return { type, disableParallel };
  const name = requireString(value.name, 'tool_choice.tool.name');
  if (!tools.some((tool) => tool.name === name)) throw invalidRequest(`tool_choice.tool.name: Tool '${name}' not found in provided tools`);
  return { type, name, disableParallel };
}

function checkThinking(body: JsonObject, maxTokens: number, countTokens: boolean): MessagesRequest['thinking'] {
  const value = body.thinking;
  if (value === undefined) return null;
  if (!isObject(value)) throw invalidRequest('thinking: Input should be a valid dictionary');
  if (value.type === 'disabled') return null;
  if (value.type === 'adaptive') return { budgetTokens: 2048, omitted: value.display === 'omitted', adaptive: true };
  if (value.type !== 'enabled') throw invalidRequest(`thinking: Input tag '${String(value.type)}' found using 'type' does not match any of the expected tags: 'enabled', 'disabled', 'adaptive'`);
  allowOnly(value, 'thinking.enabled', ['type', 'budget_tokens', 'display']);
  const budget = value.budget_tokens;
  if (budget === undefined) throw invalidRequest('thinking.enabled.budget_tokens: Field required');
  if (typeof budget !== 'number' || !Number.isInteger(budget)) throw invalidRequest('thinking.enabled.budget_tokens: Input should be a valid integer');
  if (budget < 1024) throw invalidRequest('thinking.enabled.budget_tokens: Input should be greater than or equal to 1024');
  if (!countTokens && budget >= maxTokens) throw invalidRequest('`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size');
  return { budgetTokens: budget, omitted: value.display === 'omitted' };
}

/** Anthropic's rules while thinking is on. */
function checkThinkingRules(body: JsonObject, request: MessagesRequest): void {
  if (request.thinking === null) return;
  if (body.temperature !== undefined && body.temperature !== 1) throw invalidRequest('`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#feature-compatibility');
  if (body.top_k !== undefined) throw invalidRequest('`top_k` must be unset when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#feature-compatibility');
  if (typeof body.top_p === 'number' && body.top_p < 0.95) throw invalidRequest('`top_p` must be greater than or equal to 0.95 or unset when thinking is enabled.');
  if (request.toolChoice?.type === 'any' || request.toolChoice?.type === 'tool') throw invalidRequest('Thinking may not be enabled when tool_choice forces tool use.');
  for (let index = request.turns.length - 1; index >= 0 && request.thinking.adaptive !== true; index--) {
    const turn = request.turns[index]!;
    if (turn.role !== 'assistant') continue;
    if (!turn.blocks.some((block) => block.type === 'tool_use')) break;
    const first = turn.blocks[0]?.type;
    if (first !== 'thinking' && first !== 'redacted_thinking') {
      throw invalidRequest(`messages.${index}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(first)}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns.`);
    }
    break;
  }
}

function checkJsonSchema(value: unknown): JsonObject | null {
  if (value === undefined) return null;
  if (!isObject(value)) throw invalidRequest('output_config: Input should be a valid dictionary');
  allowOnly(value, 'output_config', ['effort', 'format']);
  if (value.format === undefined || value.format === null) return null;
  if (!isObject(value.format) || value.format.type !== 'json_schema' || !isObject(value.format.schema)) {
    throw invalidRequest("output_config.format: Input should be {type: 'json_schema', schema: {...}}");
  }
  return value.format.schema;
}

function webSearchOf(value: unknown): MessagesRequest['webSearch'] {
  if (!Array.isArray(value)) return null;
  const tool = value.find((raw: unknown) => isObject(raw) && typeof raw.type === 'string' && raw.type.startsWith('web_search_'));
  if (!isObject(tool)) return null;
  const index = value.indexOf(tool);
  allowOnly(tool, `tools.${index}.web_search`, ['type', 'name', 'max_uses', 'allowed_domains', 'blocked_domains', 'user_location', 'cache_control']);
  if (tool.name !== 'web_search') throw invalidRequest(`tools.${index}.web_search.name: Input should be 'web_search'`);
  if (tool.allowed_domains !== undefined && tool.blocked_domains !== undefined) throw invalidRequest(`tools.${index}: Cannot specify both allowed_domains and blocked_domains`);
  return { maxUses: typeof tool.max_uses === 'number' ? tool.max_uses : null };
}

function webFetchOf(value: unknown): MessagesRequest['webFetch'] {
  if (!Array.isArray(value)) return null;
  const tool = value.find((raw: unknown) => isObject(raw) && typeof raw.type === 'string' && raw.type.startsWith('web_fetch_'));
  if (!isObject(tool)) return null;
  const index = value.indexOf(tool);
  allowOnly(tool, `tools.${index}.web_fetch`, ['type', 'name', 'max_uses', 'allowed_domains', 'blocked_domains', 'citations', 'max_content_tokens', 'cache_control']);
  if (tool.name !== 'web_fetch') throw invalidRequest(`tools.${index}.web_fetch.name: Input should be 'web_fetch'`);
  return { maxUses: typeof tool.max_uses === 'number' ? tool.max_uses : null };
}

export function validateMessagesRequest(raw: unknown, options: ValidateOptions): MessagesRequest {
  if (!isObject(raw)) throw invalidRequest('Request body must be a JSON object.');
  const body = raw;
  for (const key of Object.keys(body)) {
    if (!(options.countTokens ? COUNT_FIELDS : MESSAGE_FIELDS).includes(key)) throw invalidRequest(`${key}: Extra inputs are not permitted`);
  }
  const model = requireString(body.model, 'model');
  let maxTokens = 0;
  if (!options.countTokens) {
    const value = integer(body, 'max_tokens', 1);
    if (value === undefined) throw invalidRequest('max_tokens: Field required');
    maxTokens = value;
  }
  const systemMessages: MessagesRequest['systemMessages'] = [];
  const turns = checkTurns(body.messages, options.requireAlternation, options.midConversationSystem === true, systemMessages);
  const system = checkSystem(body.system);
  number(body, 'temperature', 0, 1);
  number(body, 'top_p', 0, 1);
  integer(body, 'top_k', 0);
  if (body.stream !== undefined && typeof body.stream !== 'boolean') throw invalidRequest('stream: Input should be a valid boolean');
  let stopSequences: string[] = [];
  if (body.stop_sequences !== undefined) {
    if (!Array.isArray(body.stop_sequences)) throw invalidRequest('stop_sequences: Input should be a valid list');
    stopSequences = body.stop_sequences.map((value: unknown, index) => requireString(value, `stop_sequences.${index}`));
    if (stopSequences.some((value) => value.trim() === '')) throw invalidRequest('stop_sequences: each stop sequence must contain non-whitespace characters');
  }
  if (body.metadata !== undefined) {
    if (!isObject(body.metadata)) throw invalidRequest('metadata: Input should be a valid dictionary');
    allowOnly(body.metadata, 'metadata', ['user_id']);
    if (body.metadata.user_id !== undefined && body.metadata.user_id !== null) requireString(body.metadata.user_id, 'metadata.user_id');
  }
  const tools = checkTools(body.tools);
  const toolChoice = checkToolChoice(body.tool_choice, tools);
  const request: MessagesRequest = {
    model,
    maxTokens,
    stream: body.stream === true,
    system,
    turns,
    systemMessages,
    tools,
    webSearch: webSearchOf(body.tools),
    webFetch: webFetchOf(body.tools),
    toolChoice,
    thinking: checkThinking(body, maxTokens, options.countTokens),
    stopSequences,
    jsonSchema: checkJsonSchema(body.output_config),
    body,
  };
  checkThinkingRules(body, request);
  return request;
}
