import { dropHostedTool } from '../hosted-tools.js';
import type {
  ChatCompletionCreateParamsBase,
  ChatCompletionMessageParam,
  ChatCompletionTool,
  ChatCompletionToolChoiceOption,
} from 'openai/resources/chat/completions';
import type { ResponseFormatJSONObject, ResponseFormatJSONSchema, ResponseFormatText } from 'openai/resources/shared';
import type { ChatRequest, ReasoningOptions, ResponseFormat, ToolChoice } from '../../ir/chat-request.js';
import { convertToOpenAIMessages, warn } from './convert-to-openai-messages.js';
import { STREAM_USAGE_OPTIONS } from '../../wire/openai/wire.js';

export interface OpenAIRequestOptions {
  upstreamModel: string;
  /** The upstream is OpenAI itself or Azure OpenAI (their model rules apply), not an OpenAI-compatible provider. */
  official: boolean;
  /** The upstream model is an OpenAI reasoning model (see isOpenAIReasoningModel). */
  reasoningModel: boolean;
}

type ReasoningEffort = 'minimal' | 'low' | 'medium' | 'high';

/** OpenAI's `json_schema.name` is required and limited to 64 of [a-zA-Z0-9_-]. */
function schemaName(name: string | undefined): string {
  const cleaned = (name ?? '').replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64);
  return cleaned === '' ? 'response' : cleaned;
}

function responseFormatOf(format: ResponseFormat): ResponseFormatText | ResponseFormatJSONObject | ResponseFormatJSONSchema {
  switch (format.kind) {
    case 'text':
      return { type: 'text' };
    case 'json':
      return { type: 'json_object' };
    case 'json-schema': {
      const spec: ResponseFormatJSONSchema.JSONSchema = { name: schemaName(format.name), schema: format.schema };
      if (format.description !== undefined) spec.description = format.description;
      if (format.strict !== undefined) spec.strict = format.strict;
      return { type: 'json_schema', json_schema: spec };
    }
    default: {
      const unknown: never = format;
      throw new Error(`unknown response format ${String(unknown)}`);
    }
  }
}

function toolChoiceOf(choice: ToolChoice): ChatCompletionToolChoiceOption {
  switch (choice.kind) {
    case 'auto':
    case 'none':
    case 'required':
      return choice.kind;
    case 'tool':
      return { type: 'function', function: { name: choice.name } };
    default: {
      const unknown: never = choice;
      throw new Error(`unknown tool choice ${String(unknown)}`);
    }
  }
}

/**
 * Canonical reasoning options → `reasoning_effort`. A thinking budget (Anthropic, Gemini) becomes an effort by size:
 * under 4,096 tokens low, under 16,384 medium, else high; a zero budget (reasoning off) becomes low, the least every
 * OpenAI reasoning model takes.
 */
function effortOf(reasoning: ReasoningOptions | undefined, warnings: string[]): ReasoningEffort | undefined {
  if (reasoning === undefined) return undefined;
  if (reasoning.effort !== undefined) return reasoning.effort;
  const budget = reasoning.budgetTokens;
  if (budget === undefined) return undefined;
  const effort: ReasoningEffort = budget < 4096 ? 'low' : budget < 16_384 ? 'medium' : 'high';
  warn(warnings, budget <= 0
    ? 'Reasoning cannot be switched off for OpenAI reasoning models; reasoning_effort low was sent.'
    : `The reasoning budget of ${budget} tokens was sent as reasoning_effort ${effort}.`);
  return effort;
}

/**
 * Reasoning models get an effort. Other models: OpenAI's own reject `reasoning_effort` (dropped with a warning);
 * OpenAI-compatible providers get it, as several take it for their reasoning models. Reasoning switched off needs
 * nothing sent to a model that does not reason.
 */
function applyReasoning(body: ChatCompletionCreateParamsBase, request: ChatRequest, options: OpenAIRequestOptions): void {
  const reasoning = request.reasoning;
  if (reasoning === undefined) return;
  const off = reasoning.effort === undefined && reasoning.budgetTokens !== undefined && reasoning.budgetTokens <= 0;
  if (!options.reasoningModel && (off || options.official)) {
    if (!off && (reasoning.effort !== undefined || reasoning.budgetTokens !== undefined)) {
      warn(request.warnings, `'reasoning_effort' was dropped: ${options.upstreamModel} is not a reasoning model.`);
    }
    return;
  }
  const effort = effortOf(reasoning, request.warnings);
  if (effort !== undefined) body.reasoning_effort = effort;
}

/** Sampling parameters OpenAI's reasoning models reject; dropped with a warning (temperature 1, the default, stays). */
function applySampling(body: ChatCompletionCreateParamsBase, request: ChatRequest, options: OpenAIRequestOptions): void {
  const warnings = request.warnings;
  const reasoningModel = options.reasoningModel;
  const drop = (field: string): void => warn(warnings, `'${field}' was dropped: ${options.upstreamModel} is a reasoning model and does not take it.`);
  if (request.temperature !== undefined) {
    if (!reasoningModel || request.temperature === 1) body.temperature = request.temperature;
    else drop('temperature');
  }
  if (request.topP !== undefined) {
    if (reasoningModel) drop('top_p');
    else body.top_p = request.topP;
  }
  if (request.presencePenalty !== undefined) {
    if (reasoningModel) drop('presence_penalty');
    else body.presence_penalty = request.presencePenalty;
  }
  if (request.frequencyPenalty !== undefined) {
    if (reasoningModel) drop('frequency_penalty');
    else body.frequency_penalty = request.frequencyPenalty;
  }
  if (request.stopSequences !== undefined && request.stopSequences.length > 0) {
    if (reasoningModel) drop('stop');
    else body.stop = request.stopSequences;
  }
  if (request.topK !== undefined) warn(warnings, "'top_k' was dropped: OpenAI models do not take it.");
}

function applyTools(body: ChatCompletionCreateParamsBase, request: ChatRequest): void {
  // Chat completions run no hosted tools (web search exists only on OpenAI's own search models and its Responses API).
  for (const tool of request.hostedTools ?? []) dropHostedTool(request, tool, 'chat completions upstreams run no hosted tools.');
  const tools = request.tools ?? [];
  if (tools.length === 0) {
    if (request.toolChoice !== undefined && request.toolChoice.kind !== 'none' && request.toolChoice.kind !== 'auto') {
      warn(request.warnings, 'tool_choice was dropped: the request has no tools.');
    }
    return;
  }
  body.tools = tools.map((tool): ChatCompletionTool => {
    const definition: ChatCompletionTool & { type: 'function' } = { type: 'function', function: { name: tool.name, parameters: tool.parameters } };
    if (tool.description !== undefined) definition.function.description = tool.description;
    if (tool.strict !== undefined) definition.function.strict = tool.strict;
    return definition;
  });
  if (request.toolChoice !== undefined) body.tool_choice = toolChoiceOf(request.toolChoice);
  if (request.parallelToolCalls !== undefined) body.parallel_tool_calls = request.parallelToolCalls;
}

function mentionsJson(messages: readonly ChatCompletionMessageParam[]): boolean {
  return messages.some((message) => {
    const content = message.content;
    if (typeof content === 'string') return /json/i.test(content);
    return Array.isArray(content) && content.some((part) => part.type === 'text' && /json/i.test(part.text));
  });
}

/**
 * OpenAI refuses `json_object` unless a message mentions JSON; callers of other protocols ask for JSON without
 * saying so in the prompt, so the system message gets a one-line instruction in that case.
 */
function ensureJsonMentioned(messages: ChatCompletionMessageParam[], warnings: string[]): void {
  if (mentionsJson(messages)) return;
  const instruction = 'Respond in JSON.';
  const first = messages[0];
  if (first?.role === 'system' && typeof first.content === 'string') first.content = `${first.content}\n\n${instruction}`;
  else messages.unshift({ role: 'system', content: instruction });
  warn(warnings, "The system prompt was given a 'Respond in JSON.' line: OpenAI's JSON mode requires the prompt to mention JSON.");
}

/**
 * The canonical request → an OpenAI chat-completions body. What the upstream cannot take is dropped or changed with
 * a line in `request.warnings`. Reasoning models get `max_completion_tokens` and no non-default sampling; other models
 * get `max_tokens`, which every OpenAI-compatible provider understands. Streams ask for the usage chunk.
 */
export function convertToOpenAIChatRequest(request: ChatRequest, options: OpenAIRequestOptions): ChatCompletionCreateParamsBase {
  const warnings = request.warnings;
  const messages = convertToOpenAIMessages(request);
  const body: ChatCompletionCreateParamsBase = { model: options.upstreamModel, messages };
  if (request.stream) {
    body.stream = true;
    body.stream_options = { ...STREAM_USAGE_OPTIONS };
  }
  if (request.maxOutputTokens !== undefined) {
    if (options.reasoningModel) body.max_completion_tokens = request.maxOutputTokens;
    else body.max_tokens = request.maxOutputTokens;
  }
  applySampling(body, request, options);
  if (request.seed !== undefined) body.seed = request.seed;
  applyTools(body, request);
  if (request.responseFormat !== undefined) {
    body.response_format = responseFormatOf(request.responseFormat);
    if (options.official && request.responseFormat.kind === 'json') ensureJsonMentioned(messages, warnings);
  }
  applyReasoning(body, request, options);
  if (request.user !== undefined) body.user = request.user;
  return body;
}
