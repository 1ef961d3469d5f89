import { dropHostedTool } from '../hosted-tools.js';
import { hoistSystemMessages } from '../hoist-system-messages.js';
import type { ChatRequest, ToolChoice, ToolDefinition } from '../../ir/chat-request.js';
import { jsonInstruction } from '../anthropic/build-request-body.js';
import { planThinking } from '../anthropic/map-reasoning.js';
import { convertToConverseMessages, warn } from './convert-to-converse-messages.js';
import type { ConverseMessage, ConverseRequestBody, ConverseSystemBlock, ConverseTool, ConverseToolChoice } from '../../wire/bedrock/converse-wire.js';

export interface ConverseBodyOptions {
  upstreamModel: string;
  /** The output cap when reasoning is on and the caller gave none. */
  defaultMaxTokens: number;
}

/** Anthropic's Claude models, by model id, inference profile (`us.anthropic.…`) or ARN. */
export function isAnthropicModel(upstreamModel: string): boolean {
  return /(^|[.:/])anthropic\.|claude/i.test(upstreamModel);
}

function toolSpec(tool: ToolDefinition): ConverseTool {
  const schema = tool.parameters.type === undefined ? { type: 'object', ...tool.parameters } : tool.parameters;
  return { toolSpec: { name: tool.name, ...(tool.description === undefined || tool.description === '' ? {} : { description: tool.description }), inputSchema: { json: schema } } };
}

function toolChoiceOf(choice: ToolChoice | undefined, warnings: string[]): ConverseToolChoice | undefined {
  switch (choice?.kind) {
    case undefined:
    case 'auto':
      return undefined;
    case 'none':
      warn(warnings, "tool_choice 'none' was sent as 'auto': Bedrock's Converse API cannot forbid tool use.");
      return undefined;
    case 'required':
      return { any: {} };
    case 'tool':
      return { tool: { name: choice.name } };
    default: {
      const unknown: never = choice;
      throw new Error(`unknown tool choice ${String(unknown)}`);
    }
  }
}

/** Names of the tools a conversation already used: Converse needs a toolConfig whenever they appear. */
function toolNamesUsed(messages: readonly ConverseMessage[]): string[] {
  const names = new Set<string>();
  for (const message of messages) for (const block of message.content) if ('toolUse' in block) names.add(block.toolUse.name);
  return [...names];
}

function buildSystem(request: ChatRequest, instruction: string | null): ConverseSystemBlock[] | undefined {
  const blocks: ConverseSystemBlock[] = [];
  for (const part of request.system) {
    if (part.text.trim() === '') continue;
    blocks.push({ text: part.text });
    if (part.cacheControl !== undefined) blocks.push({ cachePoint: { type: 'default' } });
  }
  if (instruction !== null) blocks.push({ text: instruction });
  return blocks.length === 0 ? undefined : blocks;
}

/**
 * The canonical request → a Converse body. Sampling goes into `inferenceConfig`; top_k and thinking, which only
 * Claude takes, into `additionalModelRequestFields`. What Bedrock cannot take is dropped with a line in
 * `request.warnings`: seed and penalties, top_k and reasoning on other models, sampling while Claude thinks, and
 * JSON response formats, which become a system instruction.
 */
export function buildConverseBody(original: ChatRequest, options: ConverseBodyOptions): ConverseRequestBody {
  // Converse has no positional system message and runs no hosted tools (web search).
  const request = hoistSystemMessages(original);
  for (const tool of original.hostedTools ?? []) dropHostedTool(original, tool, 'Bedrock Converse runs no hosted tools.');
  const warnings = request.warnings;
  const anthropic = isAnthropicModel(options.upstreamModel);
  const messages = convertToConverseMessages(request.messages, warnings);
  const body: ConverseRequestBody = { messages };

  let instruction: string | null = null;
  const format = request.responseFormat;
  if (format !== undefined && format.kind !== 'text') {
    instruction = jsonInstruction(format);
    warn(warnings, 'The JSON response format was emulated with a system instruction.');
  }
  const system = buildSystem(request, instruction);
  if (system !== undefined) body.system = system;

  const tools = request.tools ?? [];
  const used = toolNamesUsed(messages);
  if (tools.length > 0) {
    const toolChoice = toolChoiceOf(request.toolChoice, warnings);
    body.toolConfig = { tools: tools.map(toolSpec), ...(toolChoice === undefined ? {} : { toolChoice }) };
  } else if (used.length > 0) {
    body.toolConfig = { tools: used.map((name) => toolSpec({ name, parameters: { type: 'object', properties: {} } })) };
  }

  const forcedTool = body.toolConfig?.toolChoice !== undefined;
  let thinking = anthropic && !forcedTool ? planThinking(request.reasoning, request.maxOutputTokens, options.defaultMaxTokens, warnings) : null;
  if (!anthropic && request.reasoning !== undefined && (request.reasoning.effort !== undefined || (request.reasoning.budgetTokens ?? 0) > 0)) {
    warn(warnings, `Reasoning options were dropped: they are sent to Bedrock only for Claude models.`);
  }
  if (forcedTool && anthropic && request.reasoning !== undefined) warn(warnings, 'Thinking was not enabled: Claude does not think while a tool call is forced.');
  if (thinking !== null && messages.some((message) => message.role === 'assistant' && message.content.some((block) => 'toolUse' in block) && !message.content.some((block) => 'reasoningContent' in block))) {
    warn(warnings, 'Thinking was not enabled: an assistant tool call in the conversation carries no reasoning block.');
    thinking = null;
  }

  const inference: NonNullable<ConverseRequestBody['inferenceConfig']> = {};
  const maxTokens = thinking?.maxTokens ?? request.maxOutputTokens;
  if (maxTokens !== undefined) inference.maxTokens = maxTokens;
  if (request.temperature !== undefined) {
    if (thinking !== null) warn(warnings, 'temperature was dropped: Claude takes only the default while thinking.');
    else if (request.temperature > 1) {
      warn(warnings, "temperature was clamped to 1, the top of Bedrock models' 0..1 range.");
      inference.temperature = 1;
    } else inference.temperature = request.temperature;
  }
  if (request.topP !== undefined) {
    if (thinking !== null) warn(warnings, 'top_p was dropped: Claude does not take it while thinking.');
    else inference.topP = request.topP;
  }
  if (request.stopSequences !== undefined) {
    const stops = request.stopSequences.filter((stop) => stop !== '');
    if (stops.length > 0) inference.stopSequences = stops;
  }
  if (Object.keys(inference).length > 0) body.inferenceConfig = inference;

  const additional: Record<string, unknown> = {};
  if (request.topK !== undefined) {
    if (anthropic && thinking === null) additional.top_k = request.topK;
    else warn(warnings, 'top_k was dropped: Bedrock takes it only from Claude models that are not thinking.');
  }
  if (thinking !== null) additional.thinking = { type: 'enabled', budget_tokens: thinking.budgetTokens };
  if (Object.keys(additional).length > 0) body.additionalModelRequestFields = additional;

  if (request.seed !== undefined) warn(warnings, "seed was dropped: Bedrock's Converse API has no seed.");
  if (request.presencePenalty !== undefined) warn(warnings, "presence_penalty was dropped: Bedrock's Converse API has none.");
  if (request.frequencyPenalty !== undefined) warn(warnings, "frequency_penalty was dropped: Bedrock's Converse API has none.");
  if (request.parallelToolCalls === false) warn(warnings, "parallel_tool_calls was dropped: Bedrock's Converse API has no such switch.");
  return body;
}
