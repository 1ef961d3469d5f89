import type { ContentPart, Message, ReasoningPart, TextPart, ToolCallPart, ToolResultPart } from '../../ir/message.js';
import { badRequest } from './bad-request.js';
import { decodeTextContent, decodeUserContentPart } from './decode-content-parts.js';
import { isJsonObject, type JsonObject } from '../../wire/json-object.js';

export interface DecodedConversation {
  system: TextPart[];
  messages: Message[];
}

/** Tool call ids seen so far → tool names, so each tool result knows its tool (Gemini needs the name). */
class ToolCallRegistry {
  readonly #names = new Map<string, string>();
  /** Legacy `function_call`s by function name, newest last (legacy `function` messages answer by name). */
  readonly #legacyByName = new Map<string, string>();

  add(call: ToolCallPart, legacy: boolean): void {
    this.#names.set(call.id, call.name);
    if (legacy) this.#legacyByName.set(call.name, call.id);
  }

  nameOf(id: string): string | undefined {
    return this.#names.get(id);
  }

  legacyIdOf(name: string): string | undefined {
    return this.#legacyByName.get(name);
  }
}

class ConversationBuilder {
  readonly system: TextPart[] = [];
  readonly messages: Message[] = [];
  readonly calls = new ToolCallRegistry();
  #namesWarned = false;

  constructor(private readonly warnings: string[]) {}

  warnName(message: JsonObject): void {
    if (this.#namesWarned || typeof message.name !== 'string') return;
    this.#namesWarned = true;
    this.warnings.push("'messages[].name' is not translated for this model and was ignored.");
  }

  addSystem(parts: TextPart[]): void {
    if (this.messages.length > 0) {
      this.warnings.push('A system message after the start of the conversation was moved to the system prompt.');
    }
    this.system.push(...parts);
  }

  /** Consecutive tool results form one canonical `tool` message (one turn answering several calls). */
  addToolResult(result: ToolResultPart): void {
    const last = this.messages.at(-1);
    if (last?.role === 'tool') last.content.push(result);
    else this.messages.push({ role: 'tool', content: [result] });
  }
}

/**
 * Gemini's thought signature of a call, where Google's OpenAI-compatible API puts it and clients keep it:
 * `extra_content.google.thought_signature` (this gateway's answers put it there too).
 */
function googleThoughtSignature(call: JsonObject): string | undefined {
  const extra = call.extra_content;
  const google = isJsonObject(extra) ? extra.google : undefined;
  const signature = isJsonObject(google) ? google.thought_signature : undefined;
  return typeof signature === 'string' && signature !== '' ? signature : undefined;
}

function toolCallsOf(message: JsonObject, param: string, builder: ConversationBuilder): ToolCallPart[] {
  const calls: ToolCallPart[] = [];
  const raw = message.tool_calls;
  if (raw !== undefined && raw !== null) {
    if (!Array.isArray(raw)) throw badRequest(`${param}.tool_calls`, `'${param}.tool_calls' must be an array.`);
    raw.forEach((call: unknown, index) => {
      const callParam = `${param}.tool_calls[${index}]`;
      if (!isJsonObject(call) || typeof call.id !== 'string') throw badRequest(`${callParam}.id`, `'${callParam}.id' is required.`);
      if (call.type !== undefined && call.type !== 'function') {
        throw badRequest(`${callParam}.type`, `'${callParam}.type' ${JSON.stringify(call.type)} is not supported for this model; only function tool calls are.`);
      }
      const fn = call.function;
      if (!isJsonObject(fn) || typeof fn.name !== 'string') throw badRequest(`${callParam}.function.name`, `'${callParam}.function.name' is required.`);
      const part: ToolCallPart = { type: 'tool-call', id: call.id, name: fn.name, argumentsJson: typeof fn.arguments === 'string' ? fn.arguments : '' };
      const signature = googleThoughtSignature(call);
      if (signature !== undefined) part.signature = signature;
      builder.calls.add(part, false);
      calls.push(part);
    });
  }
  const legacy = message.function_call;
  if (isJsonObject(legacy) && typeof legacy.name === 'string') {
    const part: ToolCallPart = {
      type: 'tool-call',
      id: `call_legacy_${builder.messages.length}`,
      name: legacy.name,
      argumentsJson: typeof legacy.arguments === 'string' ? legacy.arguments : '',
    };
    builder.calls.add(part, true);
    calls.push(part);
  }
  return calls;
}

function decodeAssistant(message: JsonObject, param: string, builder: ConversationBuilder, warnings: string[]): void {
  const content: ContentPart[] = [];
  // `reasoning_content` is what this gateway (like several OpenAI-compatible providers) sends reasoning text in.
  if (typeof message.reasoning_content === 'string' && message.reasoning_content !== '') {
    const reasoning: ReasoningPart = { type: 'reasoning', text: message.reasoning_content };
    content.push(reasoning);
  }
  const texts = decodeTextContent(message.content, `${param}.content`, true);
  if (texts.length === 0 && typeof message.refusal === 'string' && message.refusal !== '') texts.push({ type: 'text', text: message.refusal });
  // Empty text carries nothing; clients often send `content: ""` next to tool calls.
  content.push(...texts.filter((part) => part.text !== ''));
  content.push(...toolCallsOf(message, param, builder));
  if (isJsonObject(message.audio)) warnings.push(`'${param}.audio' (a reference to earlier audio output) is not translated for this model and was ignored.`);
  builder.messages.push({ role: 'assistant', content });
}

function decodeUser(message: JsonObject, param: string, builder: ConversationBuilder): void {
  const raw = message.content;
  const content: ContentPart[] = typeof raw === 'string'
    ? [{ type: 'text', text: raw }]
    : (raw as unknown[]).map((part, index) => decodeUserContentPart(part as JsonObject, `${param}.content[${index}]`));
  builder.messages.push({ role: 'user', content });
}

function decodeTool(message: JsonObject, param: string, builder: ConversationBuilder): void {
  const id = message.tool_call_id;
  if (typeof id !== 'string' || id === '') throw badRequest(`${param}.tool_call_id`, `'${param}.tool_call_id' is required.`);
  const toolName = builder.calls.nameOf(id);
  if (toolName === undefined) {
    throw badRequest(`${param}.tool_call_id`, `'${param}.tool_call_id' ${JSON.stringify(id)} does not match a tool call of an earlier assistant message.`);
  }
  builder.addToolResult({ type: 'tool-result', toolCallId: id, toolName, content: decodeTextContent(message.content, `${param}.content`, false) });
}

function decodeLegacyFunction(message: JsonObject, param: string, builder: ConversationBuilder): void {
  const name = message.name;
  const id = typeof name === 'string' ? builder.calls.legacyIdOf(name) : undefined;
  if (typeof name !== 'string' || id === undefined) {
    throw badRequest(`${param}.name`, `'${param}.name' must name a function called by an earlier assistant message.`);
  }
  builder.addToolResult({ type: 'tool-result', toolCallId: id, toolName: name, content: decodeTextContent(message.content, `${param}.content`, false) });
}

/**
 * `messages` (already checked by validateOpenAIChatRequest) → canonical system prompt and conversation.
 * system and developer messages become the system prompt; tool results learn their tool's name from the call.
 */
export function decodeOpenAIMessages(raw: readonly unknown[], warnings: string[]): DecodedConversation {
  const builder = new ConversationBuilder(warnings);
  raw.forEach((entry, index) => {
    const message = entry as JsonObject;
    const param = `messages[${index}]`;
    switch (message.role) {
      case 'system':
      case 'developer':
        builder.warnName(message);
        builder.addSystem(decodeTextContent(message.content, `${param}.content`, false));
        break;
      case 'user':
        builder.warnName(message);
        decodeUser(message, param, builder);
        break;
      case 'assistant':
        builder.warnName(message);
        decodeAssistant(message, param, builder, warnings);
        break;
      case 'tool':
        decodeTool(message, param, builder);
        break;
      case 'function':
        decodeLegacyFunction(message, param, builder);
        break;
      default:
        throw badRequest(`${param}.role`, `'${param}.role' is not supported.`);
    }
  });
  return { system: builder.system, messages: builder.messages };
}
