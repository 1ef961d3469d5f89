import { GatewayError } from '../../errors/gateway-error.js';
import { isJsonObject } from '../../wire/json-object.js';

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function']);

export interface OpenAIChatEnvelope {
  model: string;
  stream: boolean;
  /** The caller asked for the usage chunk (`stream_options.include_usage`). */
  includeUsage: boolean;
  maxOutputTokens: number | null;
}

function invalid(param: string, message: string): GatewayError {
  return new GatewayError('bad_request', message, { param });
}

function checkNumber(body: Record<string, unknown>, name: string, min: number, max: number): void {
  const value = body[name];
  if (value === undefined || value === null) return;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw invalid(name, `'${name}' must be a number from ${min} to ${max}.`);
  }
}

function checkPositiveInteger(body: Record<string, unknown>, name: string): number | null {
  const value = body[name];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) throw invalid(name, `'${name}' must be a positive integer.`);
  return value;
}

/**
 * Checks a chat-completions body (model, non-empty messages with known roles, temperature 0 to 2, tools) and the
 * standard field types, naming the bad field. Only the fields the gateway acts on are read; every other standard
 * field is forwarded untouched.
 */
export function validateOpenAIChatRequest(body: Record<string, unknown>): OpenAIChatEnvelope {
  const model = body.model;
  if (typeof model !== 'string' || model.trim() === '') throw invalid('model', "'model' is required and must be a non-empty string.");
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) throw invalid('messages', "'messages' is required and must be a non-empty array.");
  messages.forEach((message: unknown, index) => {
    const param = `messages[${index}]`;
    if (!isJsonObject(message)) throw invalid(param, `'${param}' must be an object with 'role' and 'content'.`);
    if (typeof message.role !== 'string' || !ROLES.has(message.role)) {
      throw invalid(`${param}.role`, `'${param}.role' must be one of system, developer, user, assistant, tool.`);
    }
    const content = message.content;
    // An assistant turn may be only tool calls, a refusal, or a reference to earlier audio output.
    const contentAllowedMissing = message.role === 'assistant'
      && (message.tool_calls !== undefined || message.function_call !== undefined || message.refusal !== undefined || message.audio !== undefined);
    if (content === undefined || content === null) {
      if (!contentAllowedMissing) throw invalid(`${param}.content`, `'${param}.content' is required.`);
    } else if (typeof content !== 'string' && !Array.isArray(content)) {
      throw invalid(`${param}.content`, `'${param}.content' must be a string or an array of content parts.`);
    } else if (Array.isArray(content)) {
      content.forEach((part: unknown, partIndex) => {
        if (!isJsonObject(part) || typeof part.type !== 'string') {
          throw invalid(`${param}.content[${partIndex}]`, `'${param}.content[${partIndex}]' must be an object with a 'type'.`);
        }
      });
    }
  });
  const stream = body.stream;
  if (stream !== undefined && stream !== null && typeof stream !== 'boolean') throw invalid('stream', "'stream' must be a boolean.");
  checkNumber(body, 'temperature', 0, 2);
  checkNumber(body, 'top_p', 0, 1);
  checkNumber(body, 'presence_penalty', -2, 2);
  checkNumber(body, 'frequency_penalty', -2, 2);
  const maxTokens = checkPositiveInteger(body, 'max_tokens');
  const maxCompletionTokens = checkPositiveInteger(body, 'max_completion_tokens');
  checkPositiveInteger(body, 'n');
  if (body.tools !== undefined && body.tools !== null) {
    if (!Array.isArray(body.tools)) throw invalid('tools', "'tools' must be an array.");
    body.tools.forEach((tool: unknown, index) => {
      if (!isJsonObject(tool) || typeof tool.type !== 'string') throw invalid(`tools[${index}]`, `'tools[${index}]' must be an object with a 'type'.`);
      if (tool.type === 'function') {
        const fn = tool.function;
        if (!isJsonObject(fn) || typeof fn.name !== 'string' || fn.name === '') {
          throw invalid(`tools[${index}].function.name`, `'tools[${index}].function.name' is required.`);
        }
      }
    });
  }
  const streamOptions = body.stream_options;
  if (streamOptions !== undefined && streamOptions !== null && !isJsonObject(streamOptions)) {
    throw invalid('stream_options', "'stream_options' must be an object.");
  }
  return {
    model,
    stream: stream === true,
    includeUsage: isJsonObject(streamOptions) && streamOptions.include_usage === true,
    maxOutputTokens: maxCompletionTokens ?? maxTokens,
  };
}
