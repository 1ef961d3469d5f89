import { GatewayError } from '../../errors/gateway-error.js';
import type { NativeOnlyField } from '../family-route.js';
import type { ChatRequest, ReasoningOptions } from '../../ir/chat-request.js';
import { decodeResponsesInput, OPENAI_ONLY_ITEMS } from './decode-input.js';
import { decodeResponsesHostedTools, decodeResponsesTextFormat, decodeResponsesToolChoice, decodeResponsesTools, HOSTED_TOOLS } from './decode-tools.js';
import { estimateResponsesInputTokens } from './estimate-input-tokens.js';
import { ToolNamespaces } from './tool-namespaces.js';
import { reportUnmappedFields } from '../openai-chat/unmapped-fields.js';
import { badRequest, isJsonObject, optionalBoolean, optionalNumber, optionalString, type JsonObject } from './wire-values.js';


/** What the gateway reads from a Responses request before routing it, validated. */
export interface ResponsesEnvelope {
  model: string;
  stream: boolean;
  maxOutputTokens: number | null;
  /**
   * The first field that needs an OpenAI channel (pass-through): the state lives there, or the feature is OpenAI's
   * own; null when any upstream can serve the request.
   */
  nativeOnly: NativeOnlyField | null;
  promptTokensEstimate: number;
}

/** Fields this decoder maps (or deliberately reads); any other non-null field is kept in `extensions` with a warning. */
const MAPPED_FIELDS: ReadonlySet<string> = new Set([
  'model', 'input', 'instructions', 'stream', 'stream_options', 'max_output_tokens', 'temperature', 'top_p', 'tools',
  'tool_choice', 'parallel_tool_calls', 'text', 'reasoning', 'metadata', 'user', 'safety_identifier', 'store', 'include',
  'previous_response_id', 'conversation', 'prompt', 'background',
]);

const STATE_MESSAGE = 'needs response state stored with OpenAI; this model is served by a provider without it. Send the whole conversation in \'input\' instead';

function nativeOnlyField(body: JsonObject): NativeOnlyField | null {
  if (typeof body.previous_response_id === 'string') return { param: 'previous_response_id', message: `'previous_response_id' ${STATE_MESSAGE} (with 'store': false).` };
  if (body.conversation !== undefined && body.conversation !== null) return { param: 'conversation', message: `'conversation' ${STATE_MESSAGE}.` };
  if (body.prompt !== undefined && body.prompt !== null) return { param: 'prompt', message: "'prompt' refers to a prompt template stored with OpenAI; this model is served by another provider." };
  if (body.background === true) return { param: 'background', message: "'background' responses are stored and polled at OpenAI; this model is served by a provider without them." };
  if (body.store === true) return { param: 'store', message: "'store': true would keep the response for later retrieval, which this model's provider cannot do through the gateway; send 'store': false (or leave it out) and keep the conversation on the client." };
  if (Array.isArray(body.tools)) {
    const index = body.tools.findIndex((tool: unknown) => isJsonObject(tool) && tool.type !== 'function' && tool.type !== 'namespace' && !HOSTED_TOOLS.has(String(tool.type)));
    if (index >= 0) return { param: `tools[${index}].type`, message: `'tools[${index}].type' ${JSON.stringify((body.tools[index] as JsonObject).type)} is a built-in OpenAI tool; this model is served by another provider, which takes only 'function' tools.` };
  }
  if (isJsonObject(body.tool_choice) && body.tool_choice.type !== 'function' && body.tool_choice.type !== 'allowed_tools') {
    return { param: 'tool_choice.type', message: `'tool_choice.type' ${JSON.stringify(body.tool_choice.type)} names a built-in OpenAI tool; this model is served by another provider.` };
  }
  if (Array.isArray(body.input)) {
    const index = body.input.findIndex((item: unknown) => isJsonObject(item) && typeof item.type === 'string' && OPENAI_ONLY_ITEMS.has(item.type));
    if (index >= 0) {
      const type = (body.input[index] as JsonObject).type;
      const message = type === 'item_reference'
        ? `'input[${index}]' is an item_reference, which points at an item stored with OpenAI; this model is served by another provider and the gateway stores no items. Send the items themselves (with the Vercel AI SDK: providerOptions.openai.store = false).`
        : `'input[${index}].type' ${JSON.stringify(type)} needs an OpenAI channel (stored items and built-in tools); this model is served by another provider.`;
      return { param: `input[${index}]`, message };
    }
  }
  return null;
}

/** Validates the fields every path relies on; the translated path decodes the rest on demand. */
export function validateResponsesRequest(body: JsonObject): ResponsesEnvelope {
  if (typeof body.model !== 'string' || body.model === '') throw badRequest('model', "'model' is required.");
  const stream = optionalBoolean(body, 'stream') ?? false;
  const maxOutputTokens = body.max_output_tokens;
  if (maxOutputTokens !== undefined && maxOutputTokens !== null && (!Number.isInteger(maxOutputTokens) || (maxOutputTokens as number) < 1)) {
    throw badRequest('max_output_tokens', "'max_output_tokens' must be a positive integer.");
  }
  optionalNumber(body, 'temperature', 0, 2);
  optionalNumber(body, 'top_p', 0, 1);
  optionalBoolean(body, 'parallel_tool_calls');
  optionalBoolean(body, 'store');
  optionalString(body, 'previous_response_id');
  const instructions = body.instructions;
  if (instructions !== undefined && instructions !== null && typeof instructions !== 'string' && !Array.isArray(instructions)) {
    throw badRequest('instructions', "'instructions' must be a string.");
  }
  optionalString(body, 'user');
  if (body.metadata !== undefined && body.metadata !== null && !isJsonObject(body.metadata)) throw badRequest('metadata', "'metadata' must be an object.");
  if (body.reasoning !== undefined && body.reasoning !== null && !isJsonObject(body.reasoning)) throw badRequest('reasoning', "'reasoning' must be an object.");
  const nativeOnly = nativeOnlyField(body);
  if (body.input === undefined || body.input === null) {
    if (nativeOnly === null) throw badRequest('input', "'input' is required.");
  } else if (typeof body.input !== 'string' && !Array.isArray(body.input)) {
    throw badRequest('input', "'input' must be a string or an array of input items.");
  }
  return {
    model: body.model,
    stream,
    maxOutputTokens: typeof maxOutputTokens === 'number' ? maxOutputTokens : null,
    nativeOnly,
    promptTokensEstimate: estimateResponsesInputTokens(body),
  };
}

/** `reasoning.effort` → canonical options: `none` is a zero thinking budget, `xhigh` is clamped to high. */
function reasoningOf(raw: unknown, warnings: string[]): ReasoningOptions | undefined {
  if (!isJsonObject(raw)) return undefined;
  const effort = raw.effort;
  if (effort === undefined || effort === null) return undefined;
  if (effort === 'minimal' || effort === 'low' || effort === 'medium' || effort === 'high') return { effort, includeThoughts: raw.summary !== undefined && raw.summary !== null };
  if (effort === 'none') return { budgetTokens: 0 };
  if (effort === 'xhigh') {
    warnings.push("'reasoning.effort' xhigh was sent as high, the highest effort this model's provider takes.");
    return { effort: 'high', includeThoughts: raw.summary !== undefined && raw.summary !== null };
  }
  throw badRequest('reasoning.effort', "'reasoning.effort' must be one of none, minimal, low, medium, high, xhigh.");
}

/**
 * A Responses request body → the canonical request, for channels that do not speak the Responses API. Fields that
 * need OpenAI's stored state or built-in tools are refused with `unsupported_parameter`; other standard fields with no
 * canonical counterpart are kept in `extensions` and reported in `warnings`.
 */
export function decodeResponsesRequest(body: JsonObject, hints: { stream?: boolean } = {}): ChatRequest {
  const envelope = validateResponsesRequest(body);
  if (envelope.nativeOnly !== null) throw new GatewayError('unsupported_parameter', envelope.nativeOnly.message, { param: envelope.nativeOnly.param });
  const warnings: string[] = [];
  if (Array.isArray(body.instructions)) throw badRequest('instructions', "'instructions' must be a string.");
  const namespaces = new ToolNamespaces(body.tools);
  const { system, messages } = decodeResponsesInput(body.input, optionalString(body, 'instructions'), warnings, namespaces);
  const request: ChatRequest = { model: envelope.model, system, messages, stream: hints.stream ?? envelope.stream, extensions: {}, warnings };
  if (envelope.maxOutputTokens !== null) request.maxOutputTokens = envelope.maxOutputTokens;
  const temperature = optionalNumber(body, 'temperature', 0, 2);
  if (temperature !== undefined) request.temperature = temperature;
  const topP = optionalNumber(body, 'top_p', 0, 1);
  if (topP !== undefined) request.topP = topP;
  const tools = decodeResponsesTools(body.tools, namespaces);
  if (tools !== undefined) request.tools = tools;
  const { hosted, dropped } = decodeResponsesHostedTools(body.tools, warnings);
  if (hosted.length > 0) request.hostedTools = hosted;
  if (dropped.length > 0) request.droppedHostedTools = dropped;
  const toolChoice = decodeResponsesToolChoice(body.tool_choice, warnings);
  if (toolChoice !== undefined) request.toolChoice = toolChoice;
  const parallel = optionalBoolean(body, 'parallel_tool_calls');
  if (parallel !== undefined) request.parallelToolCalls = parallel;
  const responseFormat = decodeResponsesTextFormat(body.text, warnings);
  if (responseFormat !== undefined) request.responseFormat = responseFormat;
  const reasoning = reasoningOf(body.reasoning, warnings);
  if (reasoning !== undefined) request.reasoning = reasoning;
  const user = optionalString(body, 'user') ?? optionalString(body, 'safety_identifier');
  if (user !== undefined) request.user = user;
  reportUnmappedFields(body, MAPPED_FIELDS, warnings, request.extensions);
  return request;
}
