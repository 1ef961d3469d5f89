/**
 * Request validation of the mock OpenAI upstream for POST /v1/chat/completions, with the messages,
 * `param` and `code` values api.openai.com uses. Throws MockHttpError on the first problem found.
 */
import { invalidRequest, isReasoningModel, modelNotFoundError, type MockHttpError } from './mock-openai-upstream-wire.js';

export type JsonObject = Record<string, unknown>;

export interface ChatMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool' | 'function';
  content: unknown;
  name?: string;
  tool_call_id?: string;
  tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
}

export interface ToolDef {
  name: string;
  parameters: unknown;
  /** Responses API: the namespace tool this function belongs to. */
  namespace?: string;
}

export type ToolChoice = 'none' | 'auto' | 'required' | { name: string } | undefined;

export interface ChatRequest {
  body: JsonObject;
  model: string;
  messages: ChatMessage[];
  stream: boolean;
  includeUsage: boolean;
  n: number;
  maxTokens: number | undefined;
  stop: string[];
  tools: ToolDef[];
  toolChoice: ToolChoice;
  parallelToolCalls: boolean;
  responseFormat: { type: 'text' } | { type: 'json_object' } | { type: 'json_schema'; schema: unknown };
  reasoningEffort: string | undefined;
}

/** Top-level parameters api.openai.com accepts on chat completions (from the official SDK's types). */
export const KNOWN_CHAT_PARAMS: ReadonlySet<string> = new Set([
  'messages', 'model', 'audio', 'frequency_penalty', 'function_call', 'functions', 'logit_bias', 'logprobs',
  'max_completion_tokens', 'max_tokens', 'metadata', 'modalities', 'moderation', 'n', 'parallel_tool_calls',
  'prediction', 'presence_penalty', 'prompt_cache_key', 'prompt_cache_options', 'prompt_cache_retention',
  'reasoning_effort', 'response_format', 'safety_identifier', 'seed', 'service_tier', 'stop', 'store', 'stream',
  'stream_options', 'temperature', 'tool_choice', 'tools', 'top_logprobs', 'top_p', 'user', 'verbosity',
  'web_search_options',
]);

const ROLES = ['system', 'assistant', 'user', 'function', 'tool', 'developer'] as const;
const PART_TYPES = ['text', 'image_url', 'input_audio', 'refusal', 'audio', 'file'] as const;

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function jsonTypeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'an integer' : 'a decimal';
  if (typeof v === 'string') return 'a string';
  if (typeof v === 'boolean') return 'a boolean';
  return 'an object';
}

function invalidType(param: string, expected: string, got: unknown): MockHttpError {
  return invalidRequest(`Invalid type for '${param}': expected ${expected}, but got ${jsonTypeName(got)} instead.`, param, 'invalid_type');
}

function missing(param: string): MockHttpError {
  return invalidRequest(`Missing required parameter: '${param}'.`, param, 'missing_required_parameter');
}

function invalidValue(param: string, value: unknown, supported: readonly string[]): MockHttpError {
  const list = supported.map((s) => `'${s}'`);
  const text = list.length > 1 ? `${list.slice(0, -1).join(', ')}, and ${list[list.length - 1]}` : (list[0] ?? '');
  return invalidRequest(`Invalid value: '${String(value)}'. Supported values are: ${text}.`, param, 'invalid_value');
}

function checkNumber(body: JsonObject, param: string, min: number, max: number, integer: boolean): number | undefined {
  const v = body[param];
  if (v === undefined || v === null) return undefined;
  const kind = integer ? 'integer' : 'decimal';
  if (typeof v !== 'number' || !Number.isFinite(v) || (integer && !Number.isInteger(v))) {
    throw invalidType(param, `${integer ? 'an' : 'a'} ${kind}`, v);
  }
  if (v < min) {
    throw invalidRequest(`Invalid '${param}': ${kind} below minimum value. Expected a value >= ${min}, but got ${v} instead.`, param, `${kind}_below_min_value`);
  }
  if (v > max) {
    throw invalidRequest(`Invalid '${param}': ${kind} above maximum value. Expected a value <= ${max}, but got ${v} instead.`, param, `${kind}_above_max_value`);
  }
  return v;
}

function validateContent(msg: JsonObject, i: number, required: boolean): void {
  const content = msg.content;
  const param = `messages[${i}].content`;
  if (content === undefined || content === null) {
    if (required) throw missing(param);
    return;
  }
  if (typeof content === 'string') return;
  if (!Array.isArray(content)) throw invalidType(param, 'one of a string or array of objects', content);
  content.forEach((part, j) => {
    if (!isObject(part)) throw invalidType(`${param}[${j}]`, 'an object', part);
    if (typeof part.type !== 'string') throw missing(`${param}[${j}].type`);
    if (!(PART_TYPES as readonly string[]).includes(part.type)) throw invalidValue(`${param}[${j}].type`, part.type, PART_TYPES);
    if (part.type === 'text' && typeof part.text !== 'string') throw missing(`${param}[${j}].text`);
    if (part.type === 'image_url' && !(isObject(part.image_url) && typeof part.image_url.url === 'string')) {
      throw missing(`${param}[${j}].image_url.url`);
    }
  });
}

function validateMessages(raw: unknown): ChatMessage[] {
  if (raw === undefined) throw missing('messages');
  if (!Array.isArray(raw)) throw invalidType('messages', 'an array of objects', raw);
  if (raw.length === 0) {
    throw invalidRequest("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.", 'messages', 'empty_array');
  }
  raw.forEach((m, i) => {
    if (!isObject(m)) throw invalidType(`messages[${i}]`, 'an object', m);
    if (m.role === undefined) throw missing(`messages[${i}].role`);
    if (!(ROLES as readonly unknown[]).includes(m.role)) throw invalidValue(`messages[${i}].role`, m.role, ROLES);
    const hasToolCalls = Array.isArray(m.tool_calls) && m.tool_calls.length > 0;
    validateContent(m, i, !(m.role === 'assistant' && (hasToolCalls || m.function_call !== undefined || m.refusal !== undefined)));
    if (m.role === 'tool' && typeof m.tool_call_id !== 'string') throw missing(`messages[${i}].tool_call_id`);
    if (m.tool_calls !== undefined) {
      if (m.role !== 'assistant') throw invalidRequest(`Invalid parameter: 'tool_calls' is only allowed for messages with role 'assistant'.`, `messages[${i}].tool_calls`);
      if (!Array.isArray(m.tool_calls)) throw invalidType(`messages[${i}].tool_calls`, 'an array of objects', m.tool_calls);
      m.tool_calls.forEach((tc, j) => {
        const p = `messages[${i}].tool_calls[${j}]`;
        if (!isObject(tc)) throw invalidType(p, 'an object', tc);
        if (typeof tc.id !== 'string') throw missing(`${p}.id`);
        if (tc.type !== 'function') throw invalidValue(`${p}.type`, tc.type, ['function']);
        if (!isObject(tc.function) || typeof tc.function.name !== 'string') throw missing(`${p}.function.name`);
        if (typeof tc.function.arguments !== 'string') throw missing(`${p}.function.arguments`);
      });
    }
  });
  const messages = raw as ChatMessage[];
  // Tool messages must answer a preceding assistant tool call, and every tool call must be answered.
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role === 'assistant' && m.tool_calls && m.tool_calls.length > 0) {
      const answered = new Set<string>();
      for (let k = i + 1; k < messages.length && messages[k]!.role === 'tool'; k++) answered.add(messages[k]!.tool_call_id ?? '');
      const unanswered = m.tool_calls.map((tc) => tc.id).filter((id) => !answered.has(id));
      if (unanswered.length > 0) {
        throw invalidRequest(
          `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${unanswered.join(', ')}`,
          `messages.[${i}].role`,
        );
      }
    }
    if (m.role === 'tool') {
      let k = i - 1;
      while (k >= 0 && messages[k]!.role === 'tool') k--;
      const owner = k >= 0 ? messages[k]! : undefined;
      const ids = owner?.role === 'assistant' ? (owner.tool_calls ?? []).map((tc) => tc.id) : [];
      if (!ids.includes(m.tool_call_id ?? '')) {
        throw invalidRequest(
          "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          `messages.[${i}].role`,
        );
      }
    }
  }
  return messages;
}

function validateTools(body: JsonObject): ToolDef[] {
  const raw = body.tools;
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw invalidType('tools', 'an array of objects', raw);
  return raw.map((t, i) => {
    if (!isObject(t)) throw invalidType(`tools[${i}]`, 'an object', t);
    if (t.type !== 'function') throw invalidValue(`tools[${i}].type`, t.type, ['function', 'custom']);
    if (!isObject(t.function)) throw missing(`tools[${i}].function`);
    const name = t.function.name;
    if (typeof name !== 'string') throw missing(`tools[${i}].function.name`);
    if (!/^[a-zA-Z0-9_-]{1,64}$/.test(name)) {
      throw invalidRequest(
        `Invalid 'tools[${i}].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`,
        `tools[${i}].function.name`,
        'invalid_value',
      );
    }
    return { name, parameters: t.function.parameters };
  });
}

function validateToolChoice(body: JsonObject, tools: ToolDef[]): ToolChoice {
  const tc = body.tool_choice;
  if (tc === undefined || tc === null) return undefined;
  if (tools.length === 0) {
    throw invalidRequest("Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.", 'tool_choice');
  }
  if (tc === 'none' || tc === 'auto' || tc === 'required') return tc;
  if (typeof tc === 'string') throw invalidValue('tool_choice', tc, ['none', 'auto', 'required']);
  if (isObject(tc) && tc.type === 'function' && isObject(tc.function) && typeof tc.function.name === 'string') {
    const name = tc.function.name;
    if (!tools.some((t) => t.name === name)) {
      throw invalidRequest(`Invalid value for 'tool_choice': function '${name}' is not one of the functions in 'tools'.`, 'tool_choice');
    }
    return { name };
  }
  throw invalidType('tool_choice', "one of 'none', 'auto', 'required' or an object", tc);
}

function validateResponseFormat(body: JsonObject, messages: ChatMessage[]): ChatRequest['responseFormat'] {
  const rf = body.response_format;
  if (rf === undefined || rf === null) return { type: 'text' };
  if (!isObject(rf)) throw invalidType('response_format', 'an object', rf);
  if (rf.type === 'text') return { type: 'text' };
  if (rf.type === 'json_object') {
    const mentionsJson = messages.some((m) => /json/i.test(typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? '')));
    if (!mentionsJson) {
      throw invalidRequest("'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.", 'messages');
    }
    return { type: 'json_object' };
  }
  if (rf.type === 'json_schema') {
    if (!isObject(rf.json_schema)) throw missing('response_format.json_schema');
    if (typeof rf.json_schema.name !== 'string') throw missing('response_format.json_schema.name');
    return { type: 'json_schema', schema: rf.json_schema.schema };
  }
  throw invalidValue('response_format.type', rf.type, ['json_schema', 'json_object', 'text']);
}

export function validateChatRequest(raw: unknown, options: { strictParams: boolean }): ChatRequest {
  if (!isObject(raw)) throw invalidRequest(`Invalid type for request body: expected an object, but got ${jsonTypeName(raw)} instead.`);
  const body = raw;
  if (options.strictParams) {
    const unknown = Object.keys(body).filter((k) => !KNOWN_CHAT_PARAMS.has(k));
    if (unknown.length === 1) throw invalidRequest(`Unrecognized request argument supplied: ${unknown[0]}`);
    if (unknown.length > 1) throw invalidRequest(`Unrecognized request arguments supplied: ${unknown.join(', ')}`);
  }
  if (body.model === undefined || body.model === null || body.model === '') throw invalidRequest('you must provide a model parameter');
  if (typeof body.model !== 'string') throw invalidType('model', 'a string', body.model);
  const model = body.model;
  const messages = validateMessages(body.messages);

  const temperature = checkNumber(body, 'temperature', 0, 2, false);
  checkNumber(body, 'top_p', 0, 1, false);
  checkNumber(body, 'presence_penalty', -2, 2, false);
  checkNumber(body, 'frequency_penalty', -2, 2, false);
  checkNumber(body, 'top_logprobs', 0, 20, true);
  const n = checkNumber(body, 'n', 1, 128, true) ?? 1;
  const maxTokens = checkNumber(body, 'max_tokens', 1, Number.MAX_SAFE_INTEGER, true);
  const maxCompletionTokens = checkNumber(body, 'max_completion_tokens', 1, Number.MAX_SAFE_INTEGER, true);

  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') throw invalidType('stream', 'a boolean', body.stream);
  const stream = body.stream === true;
  let includeUsage = false;
  if (body.stream_options !== undefined && body.stream_options !== null) {
    if (!stream) throw invalidRequest("The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'stream_options');
    if (!isObject(body.stream_options)) throw invalidType('stream_options', 'an object', body.stream_options);
    includeUsage = body.stream_options.include_usage === true;
  }

  let stop: string[] = [];
  if (typeof body.stop === 'string') stop = [body.stop];
  else if (Array.isArray(body.stop)) {
    if (body.stop.length > 4) {
      throw invalidRequest(`Invalid 'stop': array too long. Expected an array with maximum length 4, but got an array with length ${body.stop.length} instead.`, 'stop', 'array_above_max_length');
    }
    stop = body.stop.filter((s): s is string => typeof s === 'string' && s.length > 0);
  } else if (body.stop !== undefined && body.stop !== null) throw invalidType('stop', 'one of a string or array of strings', body.stop);

  if (isReasoningModel(model)) {
    if (maxTokens !== undefined) {
      throw invalidRequest("Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", 'max_tokens', 'unsupported_parameter');
    }
    if (temperature !== undefined && temperature !== 1) {
      throw invalidRequest(`Unsupported value: 'temperature' does not support ${temperature} with this model. Only the default (1) value is supported.`, 'temperature', 'unsupported_value');
    }
  }

  const tools = validateTools(body);
  const toolChoice = validateToolChoice(body, tools);
  const responseFormat = validateResponseFormat(body, messages);
  if (model.startsWith('unknown-')) throw modelNotFoundError(model);

  return {
    body,
    model,
    messages,
    stream,
    includeUsage,
    n,
    maxTokens: maxCompletionTokens ?? maxTokens,
    stop,
    tools,
    toolChoice,
    parallelToolCalls: body.parallel_tool_calls !== false,
    responseFormat,
    reasoningEffort: typeof body.reasoning_effort === 'string' ? body.reasoning_effort : undefined,
  };
}
