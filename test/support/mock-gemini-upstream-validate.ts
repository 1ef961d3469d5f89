/**
 * Request validation of the mock Gemini upstream, as strict as the real API: unknown fields anywhere (in either
 * proto3 spelling) are rejected, parts must carry exactly one kind of data (an empty text is no data), roles are
 * user|model, function call / response turns must follow each other with matching counts, tool schemas accept
 * only Gemini's Schema keywords, and Gemini 3 models want the thought signature back on the first function call
 * of each step of the current turn. Messages are Google's own wording where known.
 */
import { camel, field, invalid, isObject, snake, unknownField, type JsonObject, type MockModel } from './mock-gemini-upstream-wire.js';

export type MockPart =
  | { kind: 'text'; text: string; thought: boolean; signature?: string }
  | { kind: 'media'; mimeType: string }
  | { kind: 'call'; name: string; args: JsonObject; id?: string; signature?: string }
  | { kind: 'response'; name: string; response: JsonObject; id?: string }
  | { kind: 'other' };

export interface MockContent {
  role: 'user' | 'model';
  parts: MockPart[];
}

export interface Declaration {
  name: string;
  parameters: JsonObject | undefined;
}

export interface GenerateRequest {
  contents: MockContent[];
  system: string;
  declarations: Declaration[];
  mode: 'AUTO' | 'ANY' | 'NONE';
  allowed: string[];
  temperature?: number;
  maxOutputTokens?: number;
  stopSequences: string[];
  responseMimeType?: string;
  includeThoughts: boolean;
  thinkingBudget?: number;
  /** JSON of the tools, for prompt token counting. */
  toolsJson: string;
  /** A `googleSearch` tool was given (Google Search grounding). */
  googleSearch: boolean;
}

const REQUEST_FIELDS = new Set(['model', 'contents', 'systemInstruction', 'tools', 'toolConfig', 'safetySettings', 'generationConfig', 'cachedContent', 'serviceTier', 'store', 'labels']);
const CONTENT_FIELDS = new Set(['role', 'parts']);
const PART_FIELDS = new Set(['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse', 'executableCode', 'codeExecutionResult', 'toolCall', 'toolResponse', 'thought', 'thoughtSignature', 'videoMetadata', 'partMetadata', 'mediaResolution']);
const DATA_FIELDS = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse', 'executableCode', 'codeExecutionResult', 'toolCall', 'toolResponse'];
const GENERATION_FIELDS = new Set([
  'stopSequences', 'responseMimeType', 'responseSchema', 'responseJsonSchema', '_responseJsonSchema', 'responseModalities', 'candidateCount',
  'maxOutputTokens', 'temperature', 'topP', 'topK', 'seed', 'presencePenalty', 'frequencyPenalty', 'responseLogprobs', 'logprobs',
  'enableEnhancedCivicAnswers', 'speechConfig', 'thinkingConfig', 'imageConfig', 'mediaResolution',
]);
const THINKING_FIELDS = new Set(['includeThoughts', 'thinkingBudget', 'thinkingLevel']);
const TOOL_FIELDS = new Set(['functionDeclarations', 'googleSearch', 'googleSearchRetrieval', 'codeExecution', 'urlContext', 'fileSearch', 'computerUse', 'googleMaps']);
const DECLARATION_FIELDS = new Set(['name', 'description', 'parameters', 'parametersJsonSchema', 'response', 'responseJsonSchema', 'behavior']);
const SCHEMA_FIELDS = new Set(['type', 'format', 'title', 'description', 'nullable', 'enum', 'maxItems', 'minItems', 'properties', 'required', 'minProperties', 'maxProperties', 'minLength', 'maxLength', 'pattern', 'example', 'anyOf', 'propertyOrdering', 'default', 'items', 'minimum', 'maximum']);
const SCHEMA_TYPES = new Set(['TYPE_UNSPECIFIED', 'STRING', 'NUMBER', 'INTEGER', 'BOOLEAN', 'ARRAY', 'OBJECT', 'NULL']);
const FUNCTION_NAME = /^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$/;
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;
const PREFIX = '* GenerateContentRequest';

/** Rejects a field outside `known` (after mapping snake_case to camelCase). */
export function checkFields(object: JsonObject, known: ReadonlySet<string>, at: string | null): void {
  for (const key of Object.keys(object)) if (!known.has(camel(key))) throw unknownField(key, at);
}

export function validateGenerateContent(body: unknown, model: MockModel): GenerateRequest {
  if (!isObject(body)) throw invalid('Invalid JSON payload received. Expected an object.');
  checkFields(body, REQUEST_FIELDS, null);
  const contents = validateContents(field(body, 'contents'));
  checkTurnOrder(contents);
  if (model.requiresSignatures) checkSignatures(contents);
  const request: GenerateRequest = {
    contents,
    system: validateSystem(field(body, 'systemInstruction')),
    declarations: validateTools(field(body, 'tools')),
    mode: 'AUTO',
    allowed: [],
    stopSequences: [],
    includeThoughts: false,
    toolsJson: JSON.stringify(field(body, 'tools') ?? null),
    googleSearch: Array.isArray(field(body, 'tools')) && (field(body, 'tools') as unknown[]).some((tool) => isObject(tool) && field(tool, 'googleSearch') !== undefined),
  };
  // Before Gemini 3 a request cannot combine a built-in tool with function calling.
  if (request.googleSearch && request.declarations.length > 0 && !model.requiresSignatures) {
    throw invalid('Tool use with function calling is unsupported for this model: built-in tools (google_search) and function declarations cannot be combined.');
  }
  validateToolConfig(field(body, 'toolConfig'), request);
  validateGenerationConfig(field(body, 'generationConfig'), request, model);
  return request;
}

export function validateContents(value: unknown): MockContent[] {
  if (!Array.isArray(value) || value.length === 0) throw invalid(`${PREFIX}.contents: contents is not specified\n`);
  return value.map((content: unknown, index) => {
    const at = `contents[${index}]`;
    if (!isObject(content)) throw invalid(`Invalid value at '${at}': expected an object.`);
    checkFields(content, CONTENT_FIELDS, at);
    const role = field(content, 'role') ?? 'user';
    if (role !== 'user' && role !== 'model' && role !== '') throw invalid('Please use a valid role: user, model.');
    const parts = field(content, 'parts');
    if (!Array.isArray(parts) || parts.length === 0) throw invalid(`${PREFIX}.${at}.parts: contents.parts must not be empty.\n`);
    return { role: role === 'model' ? 'model' : 'user', parts: parts.map((part: unknown, partIndex) => validatePart(part, `${at}.parts[${partIndex}]`)) };
  });
}

function validatePart(part: unknown, at: string): MockPart {
  if (!isObject(part)) throw invalid(`Invalid value at '${at}': expected an object.`);
  checkFields(part, PART_FIELDS, at);
  const signature = field(part, 'thoughtSignature');
  if (signature !== undefined && (typeof signature !== 'string' || !BASE64.test(signature) || signature.length % 4 === 1)) {
    throw invalid(`Invalid value at '${at}.thought_signature' (TYPE_BYTES), Base64 decoding failed for "${String(signature)}"`);
  }
  const data = DATA_FIELDS.filter((name) => {
    const value = field(part, name);
    return value !== undefined && value !== null && value !== '';
  });
  if (data.length === 0 && !(field(part, 'text') === '' && signature !== undefined)) {
    throw invalid(`${PREFIX}.${at}.data: required oneof field 'data' must have one initialized field\n`);
  }
  if (data.length > 1) throw invalid(`Invalid JSON payload received. Oneof field 'data' is already set. Cannot set '${snake(data[1] as string)}'`);
  const sig = typeof signature === 'string' ? { signature } : {};
  switch (data[0] ?? 'text') {
    case 'text': {
      const text = field(part, 'text');
      if (typeof text !== 'string') throw invalid(`Invalid value at '${at}.text' (TYPE_STRING)`);
      return { kind: 'text', text, thought: field(part, 'thought') === true, ...sig };
    }
    case 'inlineData': {
      const inline = field(part, 'inlineData');
      if (!isObject(inline)) throw invalid(`Invalid value at '${at}.inline_data'`);
      checkFields(inline, new Set(['mimeType', 'data', 'displayName']), `${at}.inline_data`);
      const data64 = field(inline, 'data');
      if (typeof data64 !== 'string' || !BASE64.test(data64)) throw invalid(`Invalid value at '${at}.inline_data.data' (TYPE_BYTES), Base64 decoding failed`);
      const mimeType = field(inline, 'mimeType');
      if (typeof mimeType !== 'string' || mimeType === '') throw invalid(`${PREFIX}.${at}.inline_data.mime_type: mime_type is not specified\n`);
      return { kind: 'media', mimeType };
    }
    case 'fileData': {
      const file = field(part, 'fileData');
      if (!isObject(file) || typeof field(file, 'fileUri') !== 'string') throw invalid(`${PREFIX}.${at}.file_data.file_uri: file_uri is not specified\n`);
      checkFields(file, new Set(['mimeType', 'fileUri', 'displayName']), `${at}.file_data`);
      return { kind: 'media', mimeType: String(field(file, 'mimeType') ?? 'application/octet-stream') };
    }
    case 'functionCall': {
      const call = field(part, 'functionCall');
      if (!isObject(call)) throw invalid(`Invalid value at '${at}.function_call'`);
      checkFields(call, new Set(['id', 'name', 'args']), `${at}.function_call`);
      const name = field(call, 'name');
      if (typeof name !== 'string' || name === '') throw invalid(`${PREFIX}.${at}.function_call.name: Name cannot be empty.\n`);
      const args = field(call, 'args') ?? {};
      if (!isObject(args)) throw invalid(`Invalid value at '${at}.function_call.args' (type.googleapis.com/google.protobuf.Struct)`);
      const id = field(call, 'id');
      return { kind: 'call', name, args, ...(typeof id === 'string' ? { id } : {}), ...sig };
    }
    case 'functionResponse': {
      const response = field(part, 'functionResponse');
      if (!isObject(response)) throw invalid(`Invalid value at '${at}.function_response'`);
      checkFields(response, new Set(['id', 'name', 'response', 'parts', 'willContinue', 'scheduling']), `${at}.function_response`);
      const name = field(response, 'name');
      if (typeof name !== 'string' || name === '') throw invalid(`${PREFIX}.${at}.function_response.name: Name cannot be empty.\n`);
      const value = field(response, 'response') ?? {};
      if (!isObject(value)) throw invalid(`Invalid value at '${at}.function_response.response' (type.googleapis.com/google.protobuf.Struct)`);
      const id = field(response, 'id');
      return { kind: 'response', name, response: value, ...(typeof id === 'string' ? { id } : {}) };
    }
    default:
      return { kind: 'other' };
  }
}

function checkTurnOrder(contents: MockContent[]): void {
  contents.forEach((content, index) => {
    const calls = content.parts.filter((part) => part.kind === 'call').length;
    const responses = content.parts.filter((part) => part.kind === 'response').length;
    const previous = contents[index - 1];
    if (calls > 0 && (previous === undefined || previous.role !== 'user')) {
      throw invalid('Please ensure that function call turn comes immediately after a user turn or after a function response turn.');
    }
    if (responses > 0) {
      const previousCalls = previous?.role === 'model' ? previous.parts.filter((part) => part.kind === 'call').length : 0;
      if (previousCalls === 0) throw invalid('Please ensure that function response turn comes immediately after a function call turn.');
      if (previousCalls !== responses) {
        throw invalid('Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.');
      }
    }
  });
}

/** Gemini 3: in the current turn (since the last user content that is not only function responses), every model
 * step's first function call must carry its thought signature. */
function checkSignatures(contents: MockContent[]): void {
  let start = 0;
  contents.forEach((content, index) => {
    if (content.role === 'user' && content.parts.some((part) => part.kind !== 'response')) start = index;
  });
  contents.forEach((content, index) => {
    if (index < start || content.role !== 'model') return;
    const first = content.parts.find((part): part is Extract<MockPart, { kind: 'call' }> => part.kind === 'call');
    if (first !== undefined && first.signature === undefined) {
      throw invalid(
        `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${first.name}\` , position ${index + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`,
      );
    }
  });
}

function validateSystem(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (!isObject(value)) throw invalid("Invalid value at 'system_instruction'");
  checkFields(value, CONTENT_FIELDS, 'system_instruction');
  const parts = field(value, 'parts');
  if (!Array.isArray(parts)) throw invalid(`${PREFIX}.system_instruction.parts: contents.parts must not be empty.\n`);
  return parts
    .map((part: unknown, index) => {
      const validated = validatePart(part, `system_instruction.parts[${index}]`);
      return validated.kind === 'text' ? validated.text : '';
    })
    .join('\n');
}

function validateTools(value: unknown): Declaration[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalid("Invalid value at 'tools': expected a list.");
  return value.flatMap((tool: unknown, index) => {
    const at = `tools[${index}]`;
    if (!isObject(tool)) throw invalid(`Invalid value at '${at}'`);
    checkFields(tool, TOOL_FIELDS, at);
    const declarations = field(tool, 'functionDeclarations');
    if (declarations === undefined) return [];
    if (!Array.isArray(declarations)) throw invalid(`Invalid value at '${at}.function_declarations'`);
    return declarations.map((declaration: unknown, position) => validateDeclaration(declaration, `${at}.function_declarations[${position}]`));
  });
}

function validateDeclaration(declaration: unknown, at: string): Declaration {
  if (!isObject(declaration)) throw invalid(`Invalid value at '${at}'`);
  checkFields(declaration, DECLARATION_FIELDS, at);
  const name = field(declaration, 'name');
  if (typeof name !== 'string' || !FUNCTION_NAME.test(name)) {
    throw invalid(
      `${PREFIX}.${at}.name: Invalid function name. Must start with a letter or an underscore. Must be a-z, A-Z, 0-9, or contain underscores, dots, colons and dashes, with a maximum length of 64.\n`,
    );
  }
  const parameters = field(declaration, 'parameters');
  const jsonSchema = field(declaration, 'parametersJsonSchema');
  if (parameters !== undefined && jsonSchema !== undefined) {
    throw invalid(`${PREFIX}.${at}: parameters and parameters_json_schema are mutually exclusive.\n`);
  }
  if (parameters !== undefined) validateSchema(parameters, `${at}.parameters`);
  const schema = parameters ?? jsonSchema;
  return { name, parameters: isObject(schema) ? schema : undefined };
}

export function validateSchema(schema: unknown, at: string): void {
  if (!isObject(schema)) throw invalid(`Invalid value at '${at}' (type.googleapis.com/google.ai.generativelanguage.v1beta.Schema)`);
  checkFields(schema, SCHEMA_FIELDS, at);
  const type = schema.type;
  if (Array.isArray(type)) throw invalid(`Invalid JSON payload received. Proto field is not repeating, cannot start list at '${at}.type'.`);
  if (type !== undefined && (typeof type !== 'string' || !SCHEMA_TYPES.has(type.toUpperCase()))) {
    throw invalid(`Invalid value at '${at}.type' (type.googleapis.com/google.ai.generativelanguage.v1beta.Type), "${String(type)}"`);
  }
  const upper = typeof type === 'string' ? type.toUpperCase() : undefined;
  const properties = schema.properties;
  if (properties !== undefined) {
    if (!isObject(properties)) throw invalid(`Invalid value at '${at}.properties'`);
    if (upper === 'OBJECT' && Object.keys(properties).length === 0) throw invalid(`${PREFIX}.${at}.properties: should be non-empty for OBJECT type\n`);
    for (const [name, child] of Object.entries(properties)) validateSchema(child, `${at}.properties[${name}].value`);
  }
  if (schema.items !== undefined) validateSchema(schema.items, `${at}.items`);
  if (Array.isArray(schema.anyOf)) schema.anyOf.forEach((child: unknown, index) => validateSchema(child, `${at}.any_of[${index}]`));
  if (schema.enum !== undefined && (!Array.isArray(schema.enum) || !schema.enum.every((value) => typeof value === 'string'))) {
    throw invalid(`Invalid value at '${at}.enum' (TYPE_STRING)`);
  }
  if (upper === 'STRING' && typeof schema.format === 'string' && schema.format !== 'enum' && schema.format !== 'date-time') {
    throw invalid(`${PREFIX}.${at}.format: only 'enum' and 'date-time' are supported for STRING type\n`);
  }
}

function validateToolConfig(value: unknown, request: GenerateRequest): void {
  if (value === undefined || value === null) return;
  if (!isObject(value)) throw invalid("Invalid value at 'tool_config'");
  checkFields(value, new Set(['functionCallingConfig', 'retrievalConfig', 'includeServerSideToolInvocations']), 'tool_config');
  const config = field(value, 'functionCallingConfig');
  if (config === undefined) return;
  if (!isObject(config)) throw invalid("Invalid value at 'tool_config.function_calling_config'");
  checkFields(config, new Set(['mode', 'allowedFunctionNames', 'streamFunctionCallArguments']), 'tool_config.function_calling_config');
  const mode = field(config, 'mode') ?? 'AUTO';
  if (mode !== 'AUTO' && mode !== 'ANY' && mode !== 'NONE' && mode !== 'VALIDATED' && mode !== 'MODE_UNSPECIFIED') {
    throw invalid(`Invalid value at 'tool_config.function_calling_config.mode' (type.googleapis.com/google.ai.generativelanguage.v1beta.FunctionCallingConfig.Mode), "${String(mode)}"`);
  }
  const allowed = field(config, 'allowedFunctionNames');
  if (Array.isArray(allowed) && allowed.length > 0 && mode !== 'ANY' && mode !== 'VALIDATED') {
    throw invalid(`${PREFIX}.tool_config.function_calling_config.allowed_function_names: allowed_function_names can only be set when mode is ANY.\n`);
  }
  request.mode = mode === 'ANY' || mode === 'NONE' ? mode : 'AUTO';
  request.allowed = Array.isArray(allowed) ? allowed.filter((name): name is string => typeof name === 'string') : [];
}

function validateGenerationConfig(value: unknown, request: GenerateRequest, model: MockModel): void {
  if (value === undefined || value === null) return;
  if (!isObject(value)) throw invalid("Invalid value at 'generation_config'");
  checkFields(value, GENERATION_FIELDS, 'generation_config');
  const number = (name: string, min: number, max: number): number | undefined => {
    const raw = field(value, name);
    if (raw === undefined || raw === null) return undefined;
    if (typeof raw !== 'number' || raw < min || raw > max) {
      throw invalid(`${PREFIX}.generation_config.${snake(name)}: ${snake(name)} must be in the range [${min}, ${max}].\n`);
    }
    return raw;
  };
  request.temperature = number('temperature', 0, 2);
  number('topP', 0, 1);
  number('topK', 1, 1000);
  number('candidateCount', 1, 8);
  request.maxOutputTokens = number('maxOutputTokens', 1, model.outputTokenLimit);
  const stops = field(value, 'stopSequences');
  if (stops !== undefined) {
    if (!Array.isArray(stops) || !stops.every((stop) => typeof stop === 'string')) throw invalid("Invalid value at 'generation_config.stop_sequences'");
    if (stops.length > 5) throw invalid(`${PREFIX}.generation_config.stop_sequences: the number of stop_sequences must not exceed 5.\n`);
    request.stopSequences = stops as string[];
  }
  const mimeType = field(value, 'responseMimeType');
  if (mimeType !== undefined) request.responseMimeType = String(mimeType);
  const responseSchema = field(value, 'responseSchema');
  const responseJsonSchema = field(value, 'responseJsonSchema') ?? value._responseJsonSchema;
  if (responseSchema !== undefined && responseJsonSchema !== undefined) {
    throw invalid(`${PREFIX}.generation_config: response_schema and response_json_schema are mutually exclusive.\n`);
  }
  if (responseSchema !== undefined) validateSchema(responseSchema, 'generation_config.response_schema');
  if ((responseSchema !== undefined || responseJsonSchema !== undefined) && mimeType !== 'application/json' && mimeType !== 'text/x.enum') {
    throw invalid(`${PREFIX}.generation_config.response_mime_type: response_mime_type must be application/json or text/x.enum when a response schema is set.\n`);
  }
  const thinking = field(value, 'thinkingConfig');
  if (thinking !== undefined) {
    if (!isObject(thinking)) throw invalid("Invalid value at 'generation_config.thinking_config'");
    checkFields(thinking, THINKING_FIELDS, 'generation_config.thinking_config');
    const budget = field(thinking, 'thinkingBudget');
    const level = field(thinking, 'thinkingLevel');
    if (budget !== undefined && level !== undefined) throw invalid('You can only set one of thinking budget and thinking level.');
    if (level !== undefined && !model.requiresSignatures) throw invalid('Thinking level is not supported for this model.');
    if (budget !== undefined && !model.thinking && budget !== 0) throw invalid(`Thinking is not supported for models/${model.name}.`);
    if (typeof budget === 'number') request.thinkingBudget = budget;
    request.includeThoughts = field(thinking, 'includeThoughts') === true;
  }
}
