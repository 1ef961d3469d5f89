import type { HostedTool, ReasoningOptions, ResponseFormat, ToolChoice, ToolDefinition, WebSearchTool } from '../../ir/chat-request.js';
import type { HostedToolOffer } from '../../ir/hosted-tool-offer.js';
import { keepUnmapped, type DecodeContext } from './decode-content.js';
import { invalid, optionalBoolean, optionalInteger, optionalString, readCacheControl, requireObject, requireString, warnOnce } from './request-fields.js';
import { isJsonObject } from '../../wire/json-object.js';
import { isKeptValue } from '../../wire/kept-members.js';

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;

/** Custom tools → canonical tools; Anthropic's server tools (`type: 'web_search_20250305'`, …) are kept unmapped. */
function isWebSearchTool(tool: Record<string, unknown>): boolean {
  return typeof tool.type === 'string' && tool.type.startsWith('web_search_');
}

function stringList(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === 'string') ? (value as string[]) : undefined;
}

/**
 * The server tools Anthropic bills per call that a request offers, with their `max_uses`: web search
 * (`web_search_20250305` and later) and web fetch (`web_fetch_20250910` and later).
 */
export function hostedToolOfferOfTools(raw: unknown): HostedToolOffer {
  const offer: HostedToolOffer = {};
  if (!Array.isArray(raw)) return offer;
  // Indexed: iterating a kept (frozen) list with for-of allocates an iterator result per tool.
  for (let at = 0; at < raw.length; at += 1) {
    const tool: unknown = raw[at];
    if (!isJsonObject(tool) || typeof tool.type !== 'string') continue;
    const cap = typeof tool.max_uses === 'number' ? tool.max_uses : null;
    if (tool.type.startsWith('web_search_')) offer.webSearch = cap;
    else if (tool.type.startsWith('web_fetch_')) offer.webFetch = cap;
  }
  return offer;
}

/**
 * Anthropic's server-side web search tool (`web_search_20250305` and later) → the canonical hosted tool; the other
 * Anthropic-defined tools (code execution, web fetch, bash, text editor, …) are named as dropped.
 */
export function decodeHostedTools(raw: unknown): { hosted: HostedTool[]; dropped: string[] } {
  const hosted: HostedTool[] = [];
  const dropped: string[] = [];
  if (!Array.isArray(raw)) return { hosted, dropped };
  for (let at = 0; at < raw.length; at += 1) {
    const tool: unknown = raw[at];
    if (!isJsonObject(tool) || typeof tool.type !== 'string' || tool.type === 'custom') continue;
    if (!isWebSearchTool(tool)) {
      dropped.push(tool.type);
      continue;
    }
    const web: WebSearchTool = { kind: 'web-search' };
    if (typeof tool.max_uses === 'number') web.maxUses = tool.max_uses;
    const allowed = stringList(tool.allowed_domains);
    if (allowed !== undefined) web.allowedDomains = allowed;
    const blocked = stringList(tool.blocked_domains);
    if (blocked !== undefined) web.blockedDomains = blocked;
    if (isJsonObject(tool.user_location)) {
      const location: NonNullable<WebSearchTool['userLocation']> = {};
      for (const key of ['city', 'region', 'country', 'timezone'] as const) {
        const value = tool.user_location[key];
        if (typeof value === 'string') location[key] = value;
      }
      if (Object.keys(location).length > 0) web.userLocation = location;
    }
    hosted.push(web);
  }
  return { hosted, dropped };
}

/** What decoding a kept tools value gave: the tools (frozen) and what the decoding added to its context, in order. */
interface DecodedTools {
  readonly tools: ToolDefinition[];
  readonly warnings: readonly string[];
  readonly extensions: ReadonlyArray<[string, unknown]>;
}

const DECODED_TOOLS = new WeakMap<object, DecodedTools>();

/**
 * `tools` → canonical tools. A kept tools value (`isKeptValue`: frozen and shared by every request that sent the same
 * bytes, such as an agent's tools each turn) is decoded once: later requests get the same tools, frozen, and the same
 * warnings and extensions added to their context. A value that fails to decode is decoded (and refused) each time.
 */
export function decodeTools(raw: unknown, context: DecodeContext): ToolDefinition[] | undefined {
  if (!isKeptValue(raw)) return decodeToolsAnew(raw, context);
  let decoded = DECODED_TOOLS.get(raw);
  if (decoded === undefined) {
    const own: DecodeContext = { warnings: [], extensions: {}, toolNames: new Map() };
    const tools = decodeToolsAnew(raw, own);
    if (tools === undefined) return undefined;
    for (const tool of tools) Object.freeze(tool);
    decoded = { tools: Object.freeze(tools) as ToolDefinition[], warnings: own.warnings, extensions: Object.entries(own.extensions) };
    DECODED_TOOLS.set(raw, decoded);
  }
  for (const warning of decoded.warnings) warnOnce(context.warnings, warning);
  for (const [param, block] of decoded.extensions) context.extensions[param] = block;
  return decoded.tools;
}

function decodeToolsAnew(raw: unknown, context: DecodeContext): ToolDefinition[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!Array.isArray(raw)) throw invalid('tools', 'Input should be a valid list.');
  const tools: ToolDefinition[] = [];
  raw.forEach((item: unknown, index) => {
    const param = `tools.${index}`;
    const tool = requireObject(item, param);
    if (tool.type !== undefined && tool.type !== null && tool.type !== 'custom') {
      // Web search is read by decodeHostedTools; other Anthropic-defined tools have no canonical form.
      if (!isWebSearchTool(tool)) keepUnmapped(context, param, tool, `The server tool '${String(tool.type)}'`);
      return;
    }
    const name = requireString(tool.name, `${param}.name`);
    if (!TOOL_NAME.test(name)) throw invalid(`${param}.name`, "String should match pattern '^[a-zA-Z0-9_-]{1,128}$'.");
    const schema = tool.input_schema;
    if (schema === undefined) throw invalid(`${param}.input_schema`, 'Field required.');
    if (!isJsonObject(schema)) throw invalid(`${param}.input_schema`, 'Input should be an object.');
    if (schema.type !== 'object') throw invalid(`${param}.input_schema.type`, "Input should be 'object'.");
    const definition: ToolDefinition = { name, parameters: schema };
    const description = optionalString(tool.description, `${param}.description`);
    if (description !== undefined) definition.description = description;
    const strict = optionalBoolean(tool.strict, `${param}.strict`);
    if (strict !== undefined) definition.strict = strict;
    if (tool.cache_control !== undefined && tool.cache_control !== null) {
      readCacheControl(tool.cache_control, `${param}.cache_control`);
      warnOnce(context.warnings, 'cache_control on tools is not carried on the translated path.');
    }
    tools.push(definition);
  });
  return tools;
}

export interface DecodedToolChoice {
  toolChoice?: ToolChoice;
  parallelToolCalls?: boolean;
}

export function decodeToolChoice(raw: unknown): DecodedToolChoice {
  if (raw === undefined || raw === null) return {};
  const choice = requireObject(raw, 'tool_choice');
  const disable = optionalBoolean(choice.disable_parallel_tool_use, 'tool_choice.disable_parallel_tool_use');
  const parallel = disable === undefined ? {} : { parallelToolCalls: !disable };
  switch (choice.type) {
    case 'auto':
      return { toolChoice: { kind: 'auto' }, ...parallel };
    case 'any':
      return { toolChoice: { kind: 'required' }, ...parallel };
    case 'none':
      return { toolChoice: { kind: 'none' } };
    case 'tool':
      return { toolChoice: { kind: 'tool', name: requireString(choice.name, 'tool_choice.name') }, ...parallel };
    default:
      throw invalid('tool_choice.type', "Input should be 'auto', 'any', 'tool' or 'none'.");
  }
}

const EFFORTS = new Set(['low', 'medium', 'high']);

/** `output_config.effort` → canonical effort; `xhigh` and `max` have no canonical level and become `high`. */
function decodeEffort(raw: unknown, context: DecodeContext): ReasoningOptions['effort'] {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'string') throw invalid('output_config.effort', 'Input should be a valid string.');
  if (EFFORTS.has(raw)) return raw as 'low' | 'medium' | 'high';
  if (raw === 'xhigh' || raw === 'max') {
    warnOnce(context.warnings, `output_config.effort '${raw}' is carried as 'high' on the translated path.`);
    return 'high';
  }
  throw invalid('output_config.effort', "Input should be 'low', 'medium', 'high', 'xhigh' or 'max'.");
}

export interface DecodedReasoning {
  reasoning?: ReasoningOptions;
  responseFormat?: ResponseFormat;
}

/**
 * `thinking` and `output_config` → canonical reasoning and response format. `enabled` gives a token budget,
 * `disabled` a budget of 0 (explicitly off), `adaptive` the effort (or thoughts included); `display: 'omitted'`
 * asks for no thinking text. `output_config.format` is a JSON-schema response format.
 */
export function decodeReasoning(thinkingRaw: unknown, outputRaw: unknown, maxTokens: number, context: DecodeContext): DecodedReasoning {
  const decoded: DecodedReasoning = {};
  let effort: ReasoningOptions['effort'];
  if (outputRaw !== undefined && outputRaw !== null) {
    const output = requireObject(outputRaw, 'output_config');
    effort = decodeEffort(output.effort, context);
    if (output.format !== undefined && output.format !== null) {
      const format = requireObject(output.format, 'output_config.format');
      if (format.type !== 'json_schema') throw invalid('output_config.format.type', "Input should be 'json_schema'.");
      const schema = format.schema;
      if (!isJsonObject(schema)) throw invalid('output_config.format.schema', 'Input should be an object.');
      decoded.responseFormat = { kind: 'json-schema', schema };
    }
    for (const key of Object.keys(output)) {
      if (key !== 'effort' && key !== 'format') keepUnmapped(context, `output_config.${key}`, output[key], `output_config.${key}`);
    }
  }
  if (thinkingRaw === undefined || thinkingRaw === null) {
    if (effort !== undefined) decoded.reasoning = { effort };
    return decoded;
  }
  const thinking = requireObject(thinkingRaw, 'thinking');
  const display = thinking.display;
  if (display !== undefined && display !== null && display !== 'summarized' && display !== 'omitted') {
    throw invalid('thinking.display', "Input should be 'summarized' or 'omitted'.");
  }
  const omitted = display === 'omitted' ? { includeThoughts: false } : {};
  switch (thinking.type) {
    case 'enabled': {
      const budget = optionalInteger(thinking.budget_tokens, 'thinking.enabled.budget_tokens', 1024);
      if (budget === undefined) throw invalid('thinking.enabled.budget_tokens', 'Field required.');
      if (budget >= maxTokens) throw invalid('max_tokens', '`max_tokens` must be greater than `thinking.budget_tokens`.');
      decoded.reasoning = { budgetTokens: budget, ...(effort === undefined ? {} : { effort }), ...omitted };
      return decoded;
    }
    case 'disabled':
      decoded.reasoning = { budgetTokens: 0 };
      return decoded;
    case 'adaptive':
      decoded.reasoning = effort === undefined ? { includeThoughts: display !== 'omitted' } : { effort, ...omitted };
      return decoded;
    default:
      if (typeof thinking.type === 'string') {
        keepUnmapped(context, 'thinking', thinking, `thinking type '${thinking.type}'`);
        if (effort !== undefined) decoded.reasoning = { effort };
        return decoded;
      }
      throw invalid('thinking.type', "Input should be 'enabled', 'disabled' or 'adaptive'.");
  }
}

/** `metadata`: Anthropic accepts `user_id` only. */
export function decodeMetadata(raw: unknown): string | undefined {
  if (raw === undefined || raw === null) return undefined;
  const metadata = requireObject(raw, 'metadata');
  for (const key of Object.keys(metadata)) {
    if (key !== 'user_id') throw invalid(`metadata.${key}`, 'Extra inputs are not permitted.');
  }
  return optionalString(metadata.user_id, 'metadata.user_id');
}
