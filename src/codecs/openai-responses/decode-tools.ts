import type { HostedTool, ResponseFormat, ToolChoice, ToolDefinition, WebSearchTool } from '../../ir/chat-request.js';
import type { ToolNamespaces } from './tool-namespaces.js';
import { badRequest, isJsonObject, type JsonObject } from './wire-values.js';

function functionTool(tool: JsonObject, param: string, name: string, context?: string): ToolDefinition {
  if (typeof tool.name !== 'string' || tool.name === '') throw badRequest(`${param}.name`, `'${param}.name' is required.`);
  const parameters = tool.parameters ?? { type: 'object', properties: {} };
  if (!isJsonObject(parameters)) throw badRequest(`${param}.parameters`, `'${param}.parameters' must be a JSON Schema object.`);
  const definition: ToolDefinition = { name, parameters };
  const description = [context, typeof tool.description === 'string' ? tool.description : undefined].filter((text) => text !== undefined && text !== '').join('\n\n');
  if (description !== '') definition.description = description;
  if (typeof tool.strict === 'boolean') definition.strict = tool.strict;
  return definition;
}

/** OpenAI's web search tool under its names (the GA name, the preview and the dated one). */
const WEB_SEARCH_TOOLS: ReadonlySet<string> = new Set(['web_search', 'web_search_preview', 'web_search_preview_2025_03_11', 'web_search_2025_08_26']);

/**
 * Tools OpenAI runs on its side. Another provider's channel maps web search and leaves the others out (named in
 * `droppedHostedTools`); tools the client runs itself (custom, shell, computer use) still need an OpenAI channel.
 */
export const HOSTED_TOOLS: ReadonlySet<string> = new Set([...WEB_SEARCH_TOOLS, 'file_search', 'code_interpreter', 'image_generation', 'mcp']);

function stringList(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((item) => typeof item === 'string') ? (value as string[]) : undefined;
}

function webSearchTool(tool: JsonObject): WebSearchTool {
  const web: WebSearchTool = { kind: 'web-search' };
  const allowed = isJsonObject(tool.filters) ? stringList(tool.filters.allowed_domains) : undefined;
  if (allowed !== undefined && allowed.length > 0) web.allowedDomains = allowed;
  const location = tool.user_location;
  if (isJsonObject(location)) {
    const userLocation: NonNullable<WebSearchTool['userLocation']> = {};
    for (const key of ['city', 'region', 'country', 'timezone'] as const) if (typeof location[key] === 'string') userLocation[key] = location[key];
    if (Object.keys(userLocation).length > 0) web.userLocation = userLocation;
  }
  return web;
}

/** The hosted tools of a Responses request: web search in canonical form, the others as dropped (with a warning). */
export function decodeResponsesHostedTools(raw: unknown, warnings: string[]): { hosted: HostedTool[]; dropped: string[] } {
  const hosted: HostedTool[] = [];
  const dropped: string[] = [];
  if (!Array.isArray(raw)) return { hosted, dropped };
  for (const tool of raw) {
    if (!isJsonObject(tool) || typeof tool.type !== 'string' || !HOSTED_TOOLS.has(tool.type)) continue;
    if (WEB_SEARCH_TOOLS.has(tool.type)) hosted.push(webSearchTool(tool));
    else {
      dropped.push(tool.type);
      warnings.push(`The hosted tool '${tool.type}' has no equivalent on this model's provider and was left out.`);
    }
  }
  return { hosted, dropped };
}

/**
 * Responses tools: function tools are translated, and the function tools of a `namespace` group become flat
 * function tools (named by `namespaces`); hosted tools are read by decodeResponsesHostedTools.
 */
export function decodeResponsesTools(raw: unknown, namespaces: ToolNamespaces): ToolDefinition[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!Array.isArray(raw)) throw badRequest('tools', "'tools' must be an array.");
  const tools: ToolDefinition[] = [];
  raw.forEach((tool: unknown, index) => {
    const param = `tools[${index}]`;
    if (!isJsonObject(tool)) throw badRequest(param, `'${param}' must be an object.`);
    if (tool.type === 'function') {
      tools.push(functionTool(tool, param, String(tool.name)));
      return;
    }
    if (tool.type === 'namespace') {
      if (typeof tool.name !== 'string' || tool.name === '') throw badRequest(`${param}.name`, `'${param}.name' is required.`);
      if (!Array.isArray(tool.tools)) throw badRequest(`${param}.tools`, `'${param}.tools' must be an array of function tools.`);
      const context = typeof tool.description === 'string' && tool.description !== '' ? `(${tool.name}: ${tool.description})` : undefined;
      tool.tools.forEach((member: unknown, memberIndex) => {
        const memberParam = `${param}.tools[${memberIndex}]`;
        if (!isJsonObject(member) || member.type !== 'function') throw badRequest(`${memberParam}.type`, `'${memberParam}.type' must be 'function': a namespace groups function tools.`);
        tools.push(functionTool(member, memberParam, namespaces.flat(tool.name as string, String(member.name)), context));
      });
      return;
    }
    if (typeof tool.type === 'string' && HOSTED_TOOLS.has(tool.type)) return;
    throw badRequest(`${param}.type`, `'${param}.type' ${JSON.stringify(tool.type)} is a built-in OpenAI tool; this model is served by another provider, which takes only 'function' tools.`);
  });
  return tools.length > 0 ? tools : undefined;
}

/** `tool_choice`: a mode, a named function, or `allowed_tools` (its mode kept, its subset reported as dropped). */
export function decodeResponsesToolChoice(raw: unknown, warnings: string[]): ToolChoice | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (raw === 'auto' || raw === 'none' || raw === 'required') return { kind: raw };
  if (!isJsonObject(raw)) throw badRequest('tool_choice', "'tool_choice' must be 'auto', 'none', 'required' or an object.");
  if (raw.type === 'function') {
    if (typeof raw.name !== 'string' || raw.name === '') throw badRequest('tool_choice.name', "'tool_choice.name' is required.");
    return { kind: 'tool', name: raw.name };
  }
  if (raw.type === 'allowed_tools') {
    warnings.push("'tool_choice.tools' of allowed_tools is not translated for this model: every tool stays available.");
    return { kind: raw.mode === 'required' ? 'required' : 'auto' };
  }
  throw badRequest('tool_choice.type', `'tool_choice.type' ${JSON.stringify(raw.type)} names a built-in OpenAI tool; this model is served by another provider.`);
}

/** `text.format` (text, json_object, json_schema with the schema inline) → canonical response format. */
export function decodeResponsesTextFormat(text: unknown, warnings: string[]): ResponseFormat | undefined {
  if (text === undefined || text === null) return undefined;
  if (!isJsonObject(text)) throw badRequest('text', "'text' must be an object.");
  if (text.verbosity !== undefined && text.verbosity !== null) warnings.push("'text.verbosity' is not translated for this model and was ignored.");
  const format = text.format;
  if (format === undefined || format === null) return undefined;
  if (!isJsonObject(format)) throw badRequest('text.format', "'text.format' must be an object.");
  switch (format.type) {
    case 'text':
      return { kind: 'text' };
    case 'json_object':
      return { kind: 'json' };
    case 'json_schema': {
      if (!isJsonObject(format.schema)) throw badRequest('text.format.schema', "'text.format.schema' must be a JSON Schema object.");
      const decoded: ResponseFormat = { kind: 'json-schema', schema: format.schema };
      if (typeof format.name === 'string') decoded.name = format.name;
      if (typeof format.description === 'string') decoded.description = format.description;
      if (typeof format.strict === 'boolean') decoded.strict = format.strict;
      return decoded;
    }
    default:
      throw badRequest('text.format.type', "'text.format.type' must be one of text, json_object, json_schema.");
  }
}
