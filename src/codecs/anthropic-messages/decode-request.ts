import type { ChatRequest } from '../../ir/chat-request.js';
import type { DecodeContext } from './decode-content.js';
import { decodeMessages, decodeSystem } from './decode-messages.js';
import { decodeHostedTools, decodeMetadata, decodeReasoning, decodeToolChoice, decodeTools } from './decode-options.js';
import { invalid, optionalBoolean, optionalInteger, optionalNumber, warnOnce } from './request-fields.js';

/** Top-level fields this decoder maps; any other field is kept in `extensions` and reported in `warnings`. */
const MAPPED_FIELDS = new Set([
  'model',
  'max_tokens',
  'messages',
  'system',
  'temperature',
  'top_p',
  'top_k',
  'stop_sequences',
  'stream',
  'tools',
  'tool_choice',
  'thinking',
  'output_config',
  'metadata',
]);

function decodeStopSequences(raw: unknown): string[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!Array.isArray(raw)) throw invalid('stop_sequences', 'Input should be a valid list.');
  return raw.map((value: unknown, index) => {
    if (typeof value !== 'string') throw invalid(`stop_sequences.${index}`, 'Input should be a valid string.');
    return value;
  });
}

function decodeModel(raw: unknown, pathModel: string | undefined): string {
  if (typeof raw === 'string' && raw.trim() !== '') return raw;
  if (raw === undefined && pathModel !== undefined && pathModel !== '') return pathModel;
  throw invalid('model', raw === undefined ? 'Field required.' : 'Input should be a non-empty string.');
}

/**
 * Validates an Anthropic Messages request the way Anthropic does (400 naming the field) and decodes it into the
 * canonical request. Tolerant of what Anthropic may add later: unknown fields and block types are kept in
 * `extensions` with a warning, because the same body may still go to an Anthropic upstream untouched.
 */
export function decodeAnthropicRequest(body: Record<string, unknown>, hints: { pathModel?: string; stream?: boolean }): ChatRequest {
  const warnings: string[] = [];
  const extensions: Record<string, unknown> = {};
  const context: DecodeContext = { warnings, extensions, toolNames: new Map() };

  const model = decodeModel(body.model, hints.pathModel);
  const maxTokens = optionalInteger(body.max_tokens, 'max_tokens', 1);
  if (maxTokens === undefined) throw invalid('max_tokens', 'Field required.');
  const messages = decodeMessages(body.messages, context);
  const system = decodeSystem(body.system, context);
  const stream = optionalBoolean(body.stream, 'stream');
  const temperature = optionalNumber(body.temperature, 'temperature', 0, 1);
  const topP = optionalNumber(body.top_p, 'top_p', 0, 1);
  const topK = optionalInteger(body.top_k, 'top_k', 0);
  const stopSequences = decodeStopSequences(body.stop_sequences);
  const tools = decodeTools(body.tools, context);
  const { toolChoice, parallelToolCalls } = decodeToolChoice(body.tool_choice);
  const { reasoning, responseFormat } = decodeReasoning(body.thinking, body.output_config, maxTokens, context);
  const user = decodeMetadata(body.metadata);

  for (const key of Object.keys(body)) {
    if (MAPPED_FIELDS.has(key)) continue;
    extensions[key] = body[key];
    warnOnce(warnings, `'${key}' is not carried on the translated path.`);
  }

  const request: ChatRequest = {
    model,
    system,
    messages,
    stream: hints.stream ?? stream ?? false,
    maxOutputTokens: maxTokens,
    extensions,
    warnings,
  };
  if (temperature !== undefined) request.temperature = temperature;
  if (topP !== undefined) request.topP = topP;
  if (topK !== undefined) request.topK = topK;
  if (stopSequences !== undefined) request.stopSequences = stopSequences;
  if (tools !== undefined) request.tools = tools;
  const { hosted, dropped } = decodeHostedTools(body.tools);
  if (hosted.length > 0) request.hostedTools = hosted;
  if (dropped.length > 0) request.droppedHostedTools = dropped;
  if (toolChoice !== undefined) request.toolChoice = toolChoice;
  if (parallelToolCalls !== undefined) request.parallelToolCalls = parallelToolCalls;
  if (reasoning !== undefined) request.reasoning = reasoning;
  if (responseFormat !== undefined) request.responseFormat = responseFormat;
  if (user !== undefined) request.user = user;
  return request;
}
