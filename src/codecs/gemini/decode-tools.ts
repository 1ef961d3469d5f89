import type { HostedTool } from '../../ir/chat-request.js';
import type { ToolChoice, ToolDefinition } from '../../ir/chat-request.js';
import { camelCase, isJsonObject, readField, type JsonObject } from '../../wire/gemini/gemini-wire.js';
import { invalidArgument } from './invalid-argument.js';
import { jsonSchemaFromGemini } from './openapi-schema.js';

/** Gemini's rule for function names: a letter or underscore, then letters, digits, `_ . : -`, 64 at most. */
const FUNCTION_NAME = /^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$/;

/**
 * `tools[].functionDeclarations[]` → canonical tool definitions; Google Search grounding → the canonical web search
 * (into `hosted`). Other built-in tools (codeExecution, urlContext, …) have no canonical form: they go to
 * `extensions.tools` with a warning and are named in `dropped`.
 */
export function decodeTools(value: unknown, extensions: JsonObject, warnings: string[], hosted: HostedTool[] = [], dropped: string[] = []): ToolDefinition[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw invalidArgument('tools', "'tools' must be an array.");
  const definitions: ToolDefinition[] = [];
  const builtIn: JsonObject[] = [];
  value.forEach((tool: unknown, index) => {
    const param = `tools[${index}]`;
    if (!isJsonObject(tool)) throw invalidArgument(param, `'${param}' must be an object.`);
    for (const [key, field] of Object.entries(tool)) {
      const name = camelCase(key);
      if (name === 'functionDeclarations') definitions.push(...decodeDeclarations(field, `${param}.functionDeclarations`, warnings));
      else if (name === 'googleSearch' || name === 'googleSearchRetrieval') hosted.push({ kind: 'web-search' });
      else {
        dropped.push(name);
        builtIn.push({ [name]: field });
        warnings.push(`${param}.${name} (a built-in Gemini tool) is not supported in translation and was not applied.`);
      }
    }
  });
  if (builtIn.length > 0) extensions.tools = builtIn;
  return definitions.length === 0 ? undefined : definitions;
}

function decodeDeclarations(value: unknown, param: string, warnings: string[]): ToolDefinition[] {
  if (!Array.isArray(value)) throw invalidArgument(param, `'${param}' must be an array.`);
  return value.map((declaration: unknown, index) => {
    const at = `${param}[${index}]`;
    if (!isJsonObject(declaration)) throw invalidArgument(at, `'${at}' must be an object with a name.`);
    const name = readField(declaration, 'name');
    if (typeof name !== 'string' || !FUNCTION_NAME.test(name)) {
      throw invalidArgument(
        `${at}.name`,
        `'${at}.name' must start with a letter or an underscore and hold only letters, digits, underscores, dots, colons and dashes (64 at most).`,
      );
    }
    const description = readField(declaration, 'description');
    if (description !== undefined && description !== null && typeof description !== 'string') {
      throw invalidArgument(`${at}.description`, `'${at}.description' must be a string.`);
    }
    const definition: ToolDefinition = { name, parameters: decodeParameters(declaration, at) };
    if (typeof description === 'string' && description !== '') definition.description = description;
    for (const ignored of ['response', 'responseJsonSchema', 'behavior']) {
      if (readField(declaration, ignored) !== undefined) warnings.push(`${at}.${ignored} has no equivalent in translation and was not applied.`);
    }
    return definition;
  });
}

function decodeParameters(declaration: JsonObject, at: string): Record<string, unknown> {
  const jsonSchema = readField(declaration, 'parametersJsonSchema');
  const openApi = readField(declaration, 'parameters');
  if (jsonSchema !== undefined && jsonSchema !== null && openApi !== undefined && openApi !== null) {
    throw invalidArgument(`${at}.parameters`, `'${at}' may set parameters or parametersJsonSchema, not both.`);
  }
  for (const [name, schema] of [['parametersJsonSchema', jsonSchema], ['parameters', openApi]] as const) {
    if (schema !== undefined && schema !== null && !isJsonObject(schema)) throw invalidArgument(`${at}.${name}`, `'${at}.${name}' must be an object.`);
  }
  if (isJsonObject(jsonSchema)) return jsonSchema;
  if (isJsonObject(openApi)) return jsonSchemaFromGemini(openApi);
  return { type: 'object', properties: {} };
}

/**
 * `toolConfig.functionCallingConfig` → canonical tool choice. AUTO → auto, NONE → none, ANY → required, or the
 * one tool when `allowedFunctionNames` names exactly one. A subset of several names and VALIDATED mode cannot be
 * expressed: they fall back to required / auto with a warning.
 */
export function decodeToolConfig(value: unknown, extensions: JsonObject, warnings: string[]): ToolChoice | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isJsonObject(value)) throw invalidArgument('toolConfig', "'toolConfig' must be an object.");
  for (const key of Object.keys(value)) {
    const name = camelCase(key);
    if (name === 'functionCallingConfig') continue;
    extensions[`toolConfig.${name}`] = value[key];
    warnings.push(`toolConfig.${name} has no equivalent in translation and was not applied.`);
  }
  const config = readField(value, 'functionCallingConfig');
  if (config === undefined || config === null) return undefined;
  const param = 'toolConfig.functionCallingConfig';
  if (!isJsonObject(config)) throw invalidArgument(param, `'${param}' must be an object.`);
  const mode = readField(config, 'mode') ?? 'MODE_UNSPECIFIED';
  const allowed = readField(config, 'allowedFunctionNames');
  if (allowed !== undefined && allowed !== null && (!Array.isArray(allowed) || !allowed.every((name) => typeof name === 'string'))) {
    throw invalidArgument(`${param}.allowedFunctionNames`, `'${param}.allowedFunctionNames' must be an array of strings.`);
  }
  const names = Array.isArray(allowed) ? (allowed as string[]) : [];
  if (readField(config, 'streamFunctionCallArguments') !== undefined) {
    warnings.push(`${param}.streamFunctionCallArguments is not supported in translation; function calls arrive whole.`);
  }
  switch (mode) {
    case 'MODE_UNSPECIFIED':
    case 'AUTO':
      if (names.length > 0) warnings.push(`${param}.allowedFunctionNames applies only with mode ANY and was not applied.`);
      return mode === 'AUTO' ? { kind: 'auto' } : undefined;
    case 'NONE':
      return { kind: 'none' };
    case 'ANY': {
      const only = names.length === 1 ? names[0] : undefined;
      if (only !== undefined) return { kind: 'tool', name: only };
      if (names.length > 1) warnings.push(`${param}.allowedFunctionNames with several names cannot be translated; any tool may be called.`);
      return { kind: 'required' };
    }
    case 'VALIDATED':
      warnings.push(`${param}.mode VALIDATED has no equivalent in translation; AUTO was used.`);
      return { kind: 'auto' };
    default:
      throw invalidArgument(`${param}.mode`, `'${param}.mode' must be one of AUTO, ANY, NONE, VALIDATED.`);
  }
}
