import type { ChatRequest, ReasoningOptions, WebSearchTool } from '../../ir/chat-request.js';
import { badRequest } from './bad-request.js';
import { decodeOpenAIMessages } from './decode-messages.js';
import { decodeOpenAIResponseFormat, decodeOpenAIToolChoice, decodeOpenAITools } from './decode-tools.js';
import { reportUnmappedFields } from './unmapped-fields.js';
import type { JsonObject } from '../../wire/json-object.js';
import { validateOpenAIChatRequest } from './validate-request.js';

/** Fields this decoder maps to the canonical request; any other non-null field goes to `extensions` with a warning. */
const MAPPED_FIELDS: ReadonlySet<string> = new Set([
  'model', 'messages', 'stream', 'stream_options', 'max_tokens', 'max_completion_tokens', 'temperature', 'top_p', 'stop',
  'seed', 'presence_penalty', 'frequency_penalty', 'tools', 'tool_choice', 'parallel_tool_calls', 'functions',
  'function_call', 'response_format', 'reasoning_effort', 'user', 'safety_identifier', 'n', 'web_search_options',
]);

/** `web_search_options` (OpenAI's search models) → the canonical web search, for other families' equivalents. */
function webSearchOf(raw: unknown): WebSearchTool | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  const web: WebSearchTool = { kind: 'web-search' };
  const location = (raw as { user_location?: { approximate?: Record<string, unknown> } }).user_location?.approximate;
  if (typeof location === 'object' && location !== null) {
    const userLocation: NonNullable<WebSearchTool['userLocation']> = {};
    for (const key of ['city', 'region', 'country', 'timezone'] as const) {
      const value = location[key];
      if (typeof value === 'string') userLocation[key] = value;
    }
    if (Object.keys(userLocation).length > 0) web.userLocation = userLocation;
  }
  return web;
}

function optionalNumber(body: JsonObject, name: string): number | undefined {
  const value = body[name];
  return typeof value === 'number' ? value : undefined;
}

function stopSequencesOf(raw: unknown): string[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw === 'string') return [raw];
  if (Array.isArray(raw) && raw.every((entry): entry is string => typeof entry === 'string')) return raw.length > 0 ? raw : undefined;
  throw badRequest('stop', "'stop' must be a string or an array of strings.");
}

/**
 * `reasoning_effort` → canonical reasoning options. `none` (no reasoning) becomes a zero thinking budget, which is
 * how the other families switch reasoning off; `xhigh`/`max` are clamped to `high`, the canonical maximum.
 */
function reasoningOf(raw: unknown, warnings: string[]): ReasoningOptions | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (raw === 'minimal' || raw === 'low' || raw === 'medium' || raw === 'high') return { effort: raw };
  switch (raw) {
    case 'none':
      return { budgetTokens: 0 };
    case 'xhigh':
    case 'max':
      warnings.push(`'reasoning_effort' ${raw} was sent as high, the highest effort this model's provider takes.`);
      return { effort: 'high' };
    default:
      throw badRequest('reasoning_effort', "'reasoning_effort' must be one of none, minimal, low, medium, high, xhigh.");
  }
}

function checkTypes(body: JsonObject): void {
  if (body.seed !== undefined && body.seed !== null && !Number.isInteger(body.seed)) throw badRequest('seed', "'seed' must be an integer.");
  if (body.user !== undefined && body.user !== null && typeof body.user !== 'string') throw badRequest('user', "'user' must be a string.");
  const parallel = body.parallel_tool_calls;
  if (parallel !== undefined && parallel !== null && typeof parallel !== 'boolean') {
    throw badRequest('parallel_tool_calls', "'parallel_tool_calls' must be a boolean.");
  }
  // One canonical response holds one choice. Same-protocol requests never reach this decoder (they are passed
  // through untouched, n included), so this refusal only concerns models served by another protocol's provider.
  if (typeof body.n === 'number' && body.n > 1) {
    throw badRequest('n', "'n' greater than 1 is not supported for this model: its provider returns one choice per request.");
  }
}

/**
 * An OpenAI chat-completions body → the canonical request, for the translated path. Validation errors are 400s
 * naming the field. Standard fields with no canonical counterpart (logit_bias, logprobs, metadata, store, …) are kept
 * in `extensions` and reported in `warnings`.
 */
export function decodeOpenAIChatRequest(body: JsonObject, hints: { pathModel?: string; stream?: boolean } = {}): ChatRequest {
  const envelope = validateOpenAIChatRequest(body);
  checkTypes(body);
  const warnings: string[] = [];
  const { system, messages } = decodeOpenAIMessages(body.messages as unknown[], warnings);
  const request: ChatRequest = {
    model: envelope.model,
    system,
    messages,
    stream: hints.stream ?? envelope.stream,
    extensions: {},
    warnings,
  };
  if (envelope.maxOutputTokens !== null) request.maxOutputTokens = envelope.maxOutputTokens;
  const temperature = optionalNumber(body, 'temperature');
  if (temperature !== undefined) request.temperature = temperature;
  const topP = optionalNumber(body, 'top_p');
  if (topP !== undefined) request.topP = topP;
  const stopSequences = stopSequencesOf(body.stop);
  if (stopSequences !== undefined) request.stopSequences = stopSequences;
  const seed = optionalNumber(body, 'seed');
  if (seed !== undefined) request.seed = seed;
  const presencePenalty = optionalNumber(body, 'presence_penalty');
  if (presencePenalty !== undefined) request.presencePenalty = presencePenalty;
  const frequencyPenalty = optionalNumber(body, 'frequency_penalty');
  if (frequencyPenalty !== undefined) request.frequencyPenalty = frequencyPenalty;
  const tools = decodeOpenAITools(body);
  if (tools !== undefined) request.tools = tools;
  const webSearch = webSearchOf(body.web_search_options);
  if (webSearch !== undefined) request.hostedTools = [webSearch];
  const toolChoice = decodeOpenAIToolChoice(body, warnings);
  if (toolChoice !== undefined) request.toolChoice = toolChoice;
  if (typeof body.parallel_tool_calls === 'boolean') request.parallelToolCalls = body.parallel_tool_calls;
  const responseFormat = decodeOpenAIResponseFormat(body.response_format);
  if (responseFormat !== undefined) request.responseFormat = responseFormat;
  const reasoning = reasoningOf(body.reasoning_effort, warnings);
  if (reasoning !== undefined) request.reasoning = reasoning;
  // `safety_identifier` replaces the deprecated `user` as the end-user id.
  const user = typeof body.user === 'string' ? body.user : typeof body.safety_identifier === 'string' ? body.safety_identifier : undefined;
  if (user !== undefined) request.user = user;
  reportUnmappedFields(body, MAPPED_FIELDS, warnings, request.extensions);
  return request;
}
