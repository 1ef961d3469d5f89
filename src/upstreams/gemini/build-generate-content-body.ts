import { dropHostedTool } from '../hosted-tools.js';
import type { ChatRequest, ResponseFormat, ToolChoice, ToolDefinition } from '../../ir/chat-request.js';
import { buildContents } from './build-contents.js';
import { cleanSchemaForGemini, RecursiveSchemaError } from './clean-schema.js';
import type { JsonObject } from '../../wire/gemini/gemini-wire.js';
import { thinkingConfig, usesThinkingLevel } from './thinking-config.js';
import { sourceVariant, toolsSourceOf } from '../../wire/tools-source.js';
import { jsonWithTail, ToolListCache } from '../tool-list-cache.js';

/** Gemini rejects more than 5 stop sequences. */
export const MAX_STOP_SEQUENCES = 5;

/** Channel settings of a `gemini` channel (besides `api_version`, read by the URL builder). */
export interface GeminiChannelSettings {
  /**
   * `openapi` (default): tool parameters and response schemas are converted to Gemini's `Schema` (accepted by every
   * model). `json-schema`: sent unchanged as `parametersJsonSchema` / `responseJsonSchema` (Gemini 2.5 and later).
   */
  schemaMode: 'openapi' | 'json-schema';
  /** Send Google's placeholder signature on function calls that have none (default: on for Gemini 3 and later). */
  dummyThoughtSignatures: boolean;
  /** Hosted tools are mapped to Gemini's own (web search → Google Search grounding); the channel's `hosted_tools`. */
  hostedTools: boolean;
  /** The model combines Google Search with function calling in one request (Gemini 3 and later). */
  combinesSearchWithFunctions: boolean;
}

export function readGeminiSettings(settings: Record<string, unknown>, upstreamModel: string, hostedTools = true): GeminiChannelSettings {
  return {
    schemaMode: settings.schema_mode === 'json-schema' ? 'json-schema' : 'openapi',
    dummyThoughtSignatures: typeof settings.dummy_thought_signatures === 'boolean' ? settings.dummy_thought_signatures : usesThinkingLevel(upstreamModel),
    hostedTools,
    combinesSearchWithFunctions: usesThinkingLevel(upstreamModel),
  };
}

/** Hosted tools → Gemini built-in tools: web search becomes Google Search grounding where the model allows it. */
function hostedTools(request: ChatRequest, settings: GeminiChannelSettings, hasFunctions: boolean): JsonObject[] {
  const out: JsonObject[] = [];
  for (const tool of request.hostedTools ?? []) {
    if (!settings.hostedTools) dropHostedTool(request, tool, "the operator switched hosted tool mapping off for this model's channel.");
    else if (hasFunctions && !settings.combinesSearchWithFunctions) dropHostedTool(request, tool, 'Gemini models before Gemini 3 cannot combine Google Search with function calling.');
    else {
      if (tool.allowedDomains !== undefined || tool.blockedDomains !== undefined || tool.userLocation !== undefined) {
        if (!request.warnings.includes(GROUNDING_OPTIONS_WARNING)) request.warnings.push(GROUNDING_OPTIONS_WARNING);
      }
      if (!out.some((existing) => 'googleSearch' in existing)) out.push({ googleSearch: {} });
    }
  }
  return out;
}

const GROUNDING_OPTIONS_WARNING = 'Web search domain filters and user location have no Google Search equivalent and were not applied.';

/**
 * Canonical request → `GenerateContentRequest`. What Gemini cannot take is clamped or dropped with a line in
 * `warnings`: more than 5 stop sequences, `parallelToolCalls`, `user`, `strict`, schema keywords outside Gemini's
 * `Schema`. Zero presence/frequency penalties (a no-op many OpenAI clients send) are left out, since several Gemini
 * models reject any penalty field.
 */
export function buildGenerateContentBody(request: ChatRequest, upstreamModel: string, settings: GeminiChannelSettings, warnings: string[]): JsonObject {
  const { body, declarations, hosted, toolConfig } = generateContentParts(request, upstreamModel, settings, warnings, (tools) => declareFunctions(tools, settings, warnings));
  const tools: JsonObject[] = declarations === undefined ? [] : [{ functionDeclarations: declarations }];
  tools.push(...hosted);
  if (tools.length > 0) body.tools = tools;
  if (toolConfig !== undefined) body.toolConfig = toolConfig;
  return body;
}

/** Gemini's function declarations of `tools`, with a warning for what each one loses. */
function declareFunctions(tools: readonly ToolDefinition[], settings: GeminiChannelSettings, warnings: string[]): JsonObject[] {
  return tools.map((tool, index) => functionDeclaration(tool, index, settings, warnings));
}

/**
 * The UTF-8 of `,"tools":[{"functionDeclarations":[…]}` and the warnings the declarations gave, by the caller's bytes
 * of the tool list, the protocol that decoded them and the schema mode (the only setting the declarations read).
 */
const declaredTools = new ToolListCache<{ head: Buffer; warnings: readonly string[] }>(64, 256 * 1024);

/**
 * `buildGenerateContentBody` as the JSON text to send: the same members (`tools` written last), the same warnings.
 * A tool list decoded from a caller's bytes is declared as it was for the same bytes and schema mode before.
 */
export function generateContentBodyBytes(request: ChatRequest, upstreamModel: string, settings: GeminiChannelSettings, warnings: string[]): string | Buffer {
  const source = toolsSourceOf(request.tools);
  if (source === undefined) return JSON.stringify(buildGenerateContentBody(request, upstreamModel, settings, warnings));
  let declared: Readonly<{ head: Buffer; warnings: readonly string[] }> | undefined;
  const { body, hosted, toolConfig } = generateContentParts(request, upstreamModel, settings, warnings, (tools) => {
    declared = declaredTools.get(source.bytes, `${sourceVariant(source)} ${settings.schemaMode}`, () => {
      const own: string[] = [];
      const text = JSON.stringify(declareFunctions(tools, settings, own));
      return { head: Buffer.from(`,"tools":[{"functionDeclarations":${text}}`), warnings: Object.freeze(own) };
    });
    warnings.push(...declared.warnings);
    return [];
  });
  if (toolConfig !== undefined) body.toolConfig = toolConfig;
  if (declared === undefined) return JSON.stringify(hosted.length > 0 ? { ...body, tools: hosted } : body);
  return jsonWithTail(body, declared.head, `${hosted.map((tool) => `,${JSON.stringify(tool)}`).join('')}]}`);
}

interface GenerateContentParts {
  /** Every member but `tools` and `toolConfig`. */
  body: JsonObject;
  declarations: JsonObject[] | undefined;
  hosted: JsonObject[];
  toolConfig: JsonObject | undefined;
}

function generateContentParts(
  request: ChatRequest,
  upstreamModel: string,
  settings: GeminiChannelSettings,
  warnings: string[],
  declare: (tools: readonly ToolDefinition[]) => JsonObject[],
): GenerateContentParts {
  const { contents, systemInstruction } = buildContents(request, { dummySignatures: settings.dummyThoughtSignatures }, warnings);
  const body: JsonObject = { contents };
  if (systemInstruction !== undefined) body.systemInstruction = systemInstruction;
  const generationConfig = buildGenerationConfig(request, upstreamModel, settings, warnings);
  if (Object.keys(generationConfig).length > 0) body.generationConfig = generationConfig;
  const hasFunctions = request.tools !== undefined && request.tools.length > 0;
  const declarations = hasFunctions ? declare(request.tools ?? []) : undefined;
  const hosted = hostedTools(request, settings, hasFunctions);
  // Gemini rejects a function-calling config without function declarations.
  const toolConfig = hasFunctions ? buildToolConfig(request.toolChoice) : undefined;
  if (request.parallelToolCalls !== undefined) warnings.push('parallel_tool_calls has no Gemini equivalent and was not applied.');
  if (request.user !== undefined) warnings.push('the end-user id has no Gemini equivalent and was not sent.');
  return { body, declarations, hosted, toolConfig };
}

function buildGenerationConfig(request: ChatRequest, upstreamModel: string, settings: GeminiChannelSettings, warnings: string[]): JsonObject {
  const config: JsonObject = {};
  if (request.temperature !== undefined) {
    config.temperature = Math.min(Math.max(request.temperature, 0), 2);
    if (config.temperature !== request.temperature) warnings.push(`temperature ${request.temperature} was clamped to Gemini's range 0..2.`);
  }
  if (request.topP !== undefined) config.topP = request.topP;
  if (request.topK !== undefined) config.topK = request.topK;
  if (request.maxOutputTokens !== undefined) config.maxOutputTokens = request.maxOutputTokens;
  const stops = (request.stopSequences ?? []).filter((stop) => stop !== '');
  if (stops.length > 0) {
    config.stopSequences = stops.slice(0, MAX_STOP_SEQUENCES);
    if (stops.length > MAX_STOP_SEQUENCES) warnings.push(`Gemini takes at most ${MAX_STOP_SEQUENCES} stop sequences; the rest were dropped.`);
  }
  if (request.seed !== undefined) config.seed = request.seed;
  if (request.presencePenalty !== undefined && request.presencePenalty !== 0) config.presencePenalty = request.presencePenalty;
  if (request.frequencyPenalty !== undefined && request.frequencyPenalty !== 0) config.frequencyPenalty = request.frequencyPenalty;
  Object.assign(config, responseFormatConfig(request.responseFormat, settings, warnings));
  const thinking = thinkingConfig(request.reasoning, upstreamModel);
  if (thinking !== undefined) config.thinkingConfig = thinking;
  return config;
}

function responseFormatConfig(format: ResponseFormat | undefined, settings: GeminiChannelSettings, warnings: string[]): JsonObject {
  if (format === undefined || format.kind === 'text') return {};
  if (format.kind === 'json') return { responseMimeType: 'application/json' };
  if (format.strict !== undefined) warnings.push('strict structured output has no Gemini switch; the schema was sent as it is.');
  if (settings.schemaMode === 'json-schema') return { responseMimeType: 'application/json', responseJsonSchema: format.schema };
  try {
    const { schema, removed } = cleanSchemaForGemini(format.schema);
    if (removed.length > 0) warnings.push(`response schema: keywords Gemini does not accept were removed: ${removed.join(', ')}.`);
    return schema === undefined ? { responseMimeType: 'application/json' } : { responseMimeType: 'application/json', responseSchema: schema };
  } catch (error) {
    if (!(error instanceof RecursiveSchemaError)) throw error;
    return { responseMimeType: 'application/json', responseJsonSchema: format.schema };
  }
}

function functionDeclaration(tool: ToolDefinition, index: number, settings: GeminiChannelSettings, warnings: string[]): JsonObject {
  const declaration: JsonObject = { name: tool.name };
  if (tool.description !== undefined && tool.description !== '') declaration.description = tool.description;
  if (tool.strict !== undefined) warnings.push(`tools[${index}] (${tool.name}): strict has no Gemini equivalent and was not applied.`);
  if (settings.schemaMode === 'json-schema') {
    declaration.parametersJsonSchema = tool.parameters;
    return declaration;
  }
  try {
    const { schema, removed } = cleanSchemaForGemini(tool.parameters);
    if (removed.length > 0) warnings.push(`tools[${index}] (${tool.name}): schema keywords Gemini does not accept were removed: ${removed.join(', ')}.`);
    if (schema !== undefined) declaration.parameters = schema;
  } catch (error) {
    if (!(error instanceof RecursiveSchemaError)) throw error;
    declaration.parametersJsonSchema = tool.parameters;
  }
  return declaration;
}

/** auto → AUTO, none → NONE, required → ANY, one tool → ANY restricted to that name. */
function buildToolConfig(choice: ToolChoice | undefined): JsonObject | undefined {
  if (choice === undefined) return undefined;
  switch (choice.kind) {
    case 'auto':
      return { functionCallingConfig: { mode: 'AUTO' } };
    case 'none':
      return { functionCallingConfig: { mode: 'NONE' } };
    case 'required':
      return { functionCallingConfig: { mode: 'ANY' } };
    case 'tool':
      return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.name] } };
    default: {
      const unknown: never = choice;
      throw new Error(`unknown tool choice ${JSON.stringify(unknown)}`);
    }
  }
}
