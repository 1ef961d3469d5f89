import type { ResponseFormat, ToolChoice, ToolDefinition } from '../../ir/chat-request.js';
import { badRequest } from './bad-request.js';
import { isJsonObject, type JsonObject } from '../../wire/json-object.js';

function parametersOf(value: unknown, param: string): Record<string, unknown> {
  if (value === undefined || value === null) return { type: 'object', properties: {} };
  if (!isJsonObject(value)) throw badRequest(param, `'${param}' must be a JSON Schema object.`);
  return value;
}

function definitionOf(fn: JsonObject, param: string): ToolDefinition {
  if (typeof fn.name !== 'string' || fn.name === '') throw badRequest(`${param}.name`, `'${param}.name' is required.`);
  const tool: ToolDefinition = { name: fn.name, parameters: parametersOf(fn.parameters, `${param}.parameters`) };
  if (typeof fn.description === 'string') tool.description = fn.description;
  if (typeof fn.strict === 'boolean') tool.strict = fn.strict;
  return tool;
}

/** `tools` plus the deprecated `functions`, as canonical tool definitions. */
export function decodeOpenAITools(body: JsonObject): ToolDefinition[] | undefined {
  const tools: ToolDefinition[] = [];
  if (Array.isArray(body.tools)) {
    body.tools.forEach((tool: unknown, index) => {
      const param = `tools[${index}]`;
      if (!isJsonObject(tool) || tool.type !== 'function') {
        throw badRequest(`${param}.type`, `'${param}.type' must be 'function' for this model (custom tools need an OpenAI model).`);
      }
      if (!isJsonObject(tool.function)) throw badRequest(`${param}.function`, `'${param}.function' is required.`);
      tools.push(definitionOf(tool.function, `${param}.function`));
    });
  }
  if (body.functions !== undefined && body.functions !== null) {
    if (!Array.isArray(body.functions)) throw badRequest('functions', "'functions' must be an array.");
    body.functions.forEach((fn: unknown, index) => {
      if (!isJsonObject(fn)) throw badRequest(`functions[${index}]`, `'functions[${index}]' must be an object.`);
      tools.push(definitionOf(fn, `functions[${index}]`));
    });
  }
  return tools.length > 0 ? tools : undefined;
}

function namedChoice(value: JsonObject, param: string): ToolChoice {
  const fn = value.function;
  if (isJsonObject(fn) && typeof fn.name === 'string') return { kind: 'tool', name: fn.name };
  if (typeof value.name === 'string') return { kind: 'tool', name: value.name };
  throw badRequest(param, `'${param}' must name a function.`);
}

/** `tool_choice` (or the deprecated `function_call`) → canonical tool choice. */
export function decodeOpenAIToolChoice(body: JsonObject, warnings: string[]): ToolChoice | undefined {
  const legacy = body.tool_choice === undefined || body.tool_choice === null;
  const raw = legacy ? body.function_call : body.tool_choice;
  const param = legacy ? 'function_call' : 'tool_choice';
  if (raw === undefined || raw === null) return undefined;
  if (raw === 'auto' || raw === 'none' || raw === 'required') return { kind: raw };
  if (!isJsonObject(raw)) throw badRequest(param, `'${param}' must be 'auto', 'none', 'required' or an object naming a function.`);
  if (raw.type === 'allowed_tools' && isJsonObject(raw.allowed_tools)) {
    // A subset of allowed tools has no canonical form: the mode is kept, the subset is not.
    warnings.push("'tool_choice.allowed_tools' is not translated for this model: every tool stays available.");
    return { kind: raw.allowed_tools.mode === 'required' ? 'required' : 'auto' };
  }
  if (raw.type !== undefined && raw.type !== 'function') {
    throw badRequest(`${param}.type`, `'${param}.type' ${JSON.stringify(raw.type)} is not supported for this model.`);
  }
  return namedChoice(raw, param);
}

/** `response_format` → canonical response format. */
export function decodeOpenAIResponseFormat(raw: unknown): ResponseFormat | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!isJsonObject(raw)) throw badRequest('response_format', "'response_format' must be an object.");
  switch (raw.type) {
    case 'text':
      return { kind: 'text' };
    case 'json_object':
      return { kind: 'json' };
    case 'json_schema': {
      const spec = raw.json_schema;
      if (!isJsonObject(spec)) throw badRequest('response_format.json_schema', "'response_format.json_schema' is required.");
      const schema = spec.schema === undefined || spec.schema === null ? {} : spec.schema;
      if (!isJsonObject(schema)) throw badRequest('response_format.json_schema.schema', "'response_format.json_schema.schema' must be an object.");
      const format: ResponseFormat = { kind: 'json-schema', schema };
      if (typeof spec.name === 'string') format.name = spec.name;
      if (typeof spec.description === 'string') format.description = spec.description;
      if (typeof spec.strict === 'boolean') format.strict = spec.strict;
      return format;
    }
    default:
      throw badRequest('response_format.type', "'response_format.type' must be one of text, json_object, json_schema.");
  }
}
