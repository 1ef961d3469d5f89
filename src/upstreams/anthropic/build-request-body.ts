import type { ChatRequest, ResponseFormat, ToolChoice, ToolDefinition, WebSearchTool } from '../../ir/chat-request.js';
import { dropHostedTool } from '../hosted-tools.js';
import type { AnthropicMessageParam, AnthropicRequestBody, AnthropicTool, AnthropicToolChoice, AnthropicWebSearchTool, TextBlock } from '../../wire/anthropic/anthropic-wire.js';
import { hoistSystemMessages } from '../hoist-system-messages.js';
import { convertToAnthropicMessages } from './convert-to-anthropic-messages.js';
import { planThinking } from './map-reasoning.js';
import { unreachable } from '../../shared/unreachable.js';

export interface AnthropicBodyOptions {
  upstreamModel: string;
  /** max_tokens when the caller set none (Anthropic requires it). */
  defaultMaxTokens: number;
  /** The channel's models take `strict` tools and `output_config.format` (Anthropic structured outputs). */
  structuredOutputs: boolean;
  /** Hosted tools are mapped to Anthropic's server tools (the channel's `hosted_tools` setting). */
  hostedTools: boolean;
}

/** OpenAI's web search or Gemini's Google Search → Anthropic's server-side web search tool. */
function webSearchTool(tool: WebSearchTool): AnthropicWebSearchTool {
  const wire: AnthropicWebSearchTool = { type: 'web_search_20250305', name: 'web_search' };
  if (tool.maxUses !== undefined) wire.max_uses = tool.maxUses;
  // Anthropic takes either list, not both; the allowed list is the stricter one.
  if (tool.allowedDomains !== undefined) wire.allowed_domains = tool.allowedDomains;
  else if (tool.blockedDomains !== undefined) wire.blocked_domains = tool.blockedDomains;
  if (tool.userLocation !== undefined) wire.user_location = { type: 'approximate', ...tool.userLocation };
  return wire;
}

function buildHostedTools(request: ChatRequest, options: AnthropicBodyOptions): AnthropicWebSearchTool[] {
  const out: AnthropicWebSearchTool[] = [];
  for (const tool of request.hostedTools ?? []) {
    if (!options.hostedTools) dropHostedTool(request, tool, "the operator switched hosted tool mapping off for this model's channel.");
    else out.push(webSearchTool(tool));
  }
  return out;
}

function warn(warnings: string[], warning: string): void {
  if (!warnings.includes(warning)) warnings.push(warning);
}

/**
 * JSON output without native structured outputs: an instruction appended to the system prompt. Chosen over
 * forcing a tool call because the answer stays a text block in every protocol, streamed as it comes.
 */
export function jsonInstruction(format: Exclude<ResponseFormat, { kind: 'text' }>): string {
  if (format.kind === 'json') return 'Respond with a single valid JSON object only, with no text before or after it and no code fences.';
  const about = [format.name, format.description].filter((value) => value !== undefined && value !== '').join(': ');
  return (
    'Respond with a single valid JSON value only, with no text before or after it and no code fences. ' +
    `It must conform to this JSON Schema${about === '' ? '' : ` (${about})`}:\n${JSON.stringify(format.schema)}`
  );
}

function buildTools(tools: readonly ToolDefinition[], options: AnthropicBodyOptions, warnings: string[]): AnthropicTool[] {
  return tools.map((tool) => {
    const schema = tool.parameters.type === undefined ? { type: 'object', ...tool.parameters } : tool.parameters;
    const wire: AnthropicTool = { name: tool.name, input_schema: schema };
    if (tool.description !== undefined) wire.description = tool.description;
    if (tool.strict === true) {
      if (options.structuredOutputs) wire.strict = true;
      else warn(warnings, "Strict tool schemas were sent as ordinary tools (enable the channel's structured_outputs setting for strict ones).");
    }
    return wire;
  });
}

function buildToolChoice(choice: ToolChoice | undefined, parallelToolCalls: boolean | undefined): AnthropicToolChoice | undefined {
  const disable = parallelToolCalls === false ? { disable_parallel_tool_use: true } : {};
  switch (choice?.kind) {
    case undefined:
      return parallelToolCalls === false ? { type: 'auto', disable_parallel_tool_use: true } : undefined;
    case 'auto':
      return { type: 'auto', ...disable };
    case 'required':
      return { type: 'any', ...disable };
    case 'tool':
      return { type: 'tool', name: choice.name, ...disable };
    case 'none':
      return { type: 'none' };
    default:
      return unreachable(choice, 'tool choice');
  }
}

/** With thinking on, Anthropic wants the last assistant turn of a tool loop to open with its thinking block. */
function thinkingBlocksMissing(messages: readonly AnthropicMessageParam[]): boolean {
  for (let index = messages.length - 1; index >= 0; index--) {
    const turn = messages[index] as AnthropicMessageParam;
    if (turn.role !== 'assistant') continue;
    if (!turn.content.some((block) => block.type === 'tool_use')) return false;
    const first = turn.content[0]?.type;
    return first !== 'thinking' && first !== 'redacted_thinking';
  }
  return false;
}

function buildSystem(request: ChatRequest, instruction: string | null): string | TextBlock[] | undefined {
  const blocks: TextBlock[] = [];
  for (const part of request.system) {
    if (part.text.length === 0) continue;
    blocks.push(part.cacheControl === undefined ? { type: 'text', text: part.text } : { type: 'text', text: part.text, cache_control: { ...part.cacheControl } });
  }
  if (instruction !== null) blocks.push({ type: 'text', text: instruction });
  if (blocks.length === 0) return undefined;
  const only = blocks[0] as TextBlock;
  return blocks.length === 1 && only.cache_control === undefined ? only.text : blocks;
}

/**
 * The canonical request → an Anthropic Messages body. Everything the IR has is mapped; what Anthropic cannot
 * take is changed or dropped with a line in `request.warnings`:
 * temperature above 1 is clamped to 1 (Anthropic's range is 0..1); seed and presence/frequency penalties are
 * dropped; JSON response formats become a system instruction unless the channel has structured outputs; with
 * thinking on, temperature/top_k are dropped and top_p raised to 0.95, as Anthropic requires; forced tool use
 * wins over thinking.
 */
export function buildAnthropicBody(original: ChatRequest, options: AnthropicBodyOptions): AnthropicRequestBody {
  // A translated request has no anthropic-beta header to allow positional system messages: they join `system`.
  const request = hoistSystemMessages(original);
  const warnings = request.warnings;
  const messages = convertToAnthropicMessages(request.messages, warnings);
  const functionTools = request.tools !== undefined && request.tools.length > 0 ? buildTools(request.tools, options, warnings) : [];
  const allTools = [...functionTools, ...buildHostedTools(request, options)];
  const tools = allTools.length > 0 ? allTools : undefined;
  const toolChoice = tools === undefined ? undefined : buildToolChoice(request.toolChoice, request.parallelToolCalls);
  if (tools === undefined && request.toolChoice !== undefined && request.toolChoice.kind !== 'none' && request.toolChoice.kind !== 'auto') {
    warn(warnings, 'tool_choice was dropped: the request has no tools.');
  }

  let thinking = planThinking(request.reasoning, request.maxOutputTokens, options.defaultMaxTokens, warnings);
  if (thinking !== null && (toolChoice?.type === 'any' || toolChoice?.type === 'tool')) {
    warn(warnings, 'Thinking was not enabled: Anthropic does not think while a tool call is forced.');
    thinking = null;
  }
  if (thinking !== null && thinkingBlocksMissing(messages)) {
    warn(warnings, 'Thinking was not enabled: the last assistant tool call carries no Anthropic thinking block.');
    thinking = null;
  }

  let instruction: string | null = null;
  let outputFormat: AnthropicRequestBody['output_config'];
  const format = request.responseFormat;
  if (format !== undefined && format.kind !== 'text') {
    if (format.kind === 'json-schema' && options.structuredOutputs) outputFormat = { format: { type: 'json_schema', schema: format.schema } };
    else {
      instruction = jsonInstruction(format);
      warn(warnings, 'The JSON response format was emulated with a system instruction.');
    }
  }

  const body: AnthropicRequestBody = {
    model: options.upstreamModel,
    max_tokens: thinking?.maxTokens ?? request.maxOutputTokens ?? options.defaultMaxTokens,
    messages,
  };
  const system = buildSystem(request, instruction);
  if (system !== undefined) body.system = system;

  if (request.temperature !== undefined) {
    if (thinking !== null) {
      if (request.temperature !== 1) warn(warnings, 'temperature was dropped: Anthropic takes only the default while thinking.');
    } else if (request.temperature > 1) {
      warn(warnings, "temperature was clamped to 1, the top of Anthropic's 0..1 range.");
      body.temperature = 1;
    } else body.temperature = Math.max(0, request.temperature);
  }
  if (request.topP !== undefined) {
    if (thinking !== null && request.topP < 0.95) {
      warn(warnings, 'top_p was raised to 0.95, the lowest Anthropic takes while thinking.');
      body.top_p = 0.95;
    } else body.top_p = request.topP;
  }
  if (request.topK !== undefined) {
    if (thinking !== null) warn(warnings, 'top_k was dropped: Anthropic does not take it while thinking.');
    else body.top_k = request.topK;
  }
  if (request.stopSequences !== undefined) {
    const stops = request.stopSequences.filter((stop) => stop.trim() !== '');
    if (stops.length < request.stopSequences.length) warn(warnings, 'Blank stop sequences were dropped.');
    if (stops.length > 0) body.stop_sequences = stops;
  }
  if (request.stream) body.stream = true;
  if (tools !== undefined) body.tools = tools;
  if (toolChoice !== undefined) body.tool_choice = toolChoice;
  if (thinking !== null) body.thinking = { type: 'enabled', budget_tokens: thinking.budgetTokens };
  if (request.user !== undefined) body.metadata = { user_id: request.user };
  if (outputFormat !== undefined) body.output_config = outputFormat;
  if (request.seed !== undefined) warn(warnings, 'seed was dropped: Anthropic has no seed.');
  if (request.presencePenalty !== undefined) warn(warnings, 'presence_penalty was dropped: Anthropic has none.');
  if (request.frequencyPenalty !== undefined) warn(warnings, 'frequency_penalty was dropped: Anthropic has none.');
  return body;
}

/** The count_tokens body: what shapes the prompt, without the generation fields the endpoint rejects. */
export function buildAnthropicCountTokensBody(request: ChatRequest, options: AnthropicBodyOptions): Record<string, unknown> {
  const full = buildAnthropicBody({ ...request, stream: false, warnings: [...request.warnings] }, options);
  const body: Record<string, unknown> = { model: full.model, messages: full.messages };
  if (full.system !== undefined) body.system = full.system;
  if (full.tools !== undefined) body.tools = full.tools;
  if (full.tool_choice !== undefined) body.tool_choice = full.tool_choice;
  if (full.thinking !== undefined) body.thinking = full.thinking;
  if (full.output_config !== undefined) body.output_config = full.output_config;
  return body;
}
