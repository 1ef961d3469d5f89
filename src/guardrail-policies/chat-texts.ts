/**
 * The texts of a canonical chat request and answer that guardrails read: the request's text and tool results, the
 * answer's text and readable reasoning, and the request as OpenAI chat messages (what an external guardrail is shown).
 */
import type { ChatRequest } from '../ir/chat-request.js';
import type { ContentPart, ReasoningPart, TextPart, ToolCallPart } from '../ir/message.js';

/** A tool call as an external guardrail is shown it: OpenAI's chat shape, its arguments as the model wrote them. */
export interface ShownToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** A message as an external guardrail is shown it: OpenAI's chat shape (an assistant turn's tool calls included). */
export interface ShownMessage {
  role: string;
  content: string;
  tool_calls?: ShownToolCall[];
}

/** Text parts of the request the input policies read and may mask, and its tool results. */
export function inputParts(chat: ChatRequest): { texts: TextPart[]; toolResults: string[] } {
  const texts: TextPart[] = [...chat.system];
  const toolResults: string[] = [];
  for (const message of chat.messages) {
    for (const part of message.content) {
      if (part.type === 'text') texts.push(part);
      else if (part.type === 'tool-result') {
        for (const inner of part.content) {
          if (inner.type !== 'text') continue;
          texts.push(inner);
          toolResults.push(inner.text);
        }
      }
    }
  }
  return { texts, toolResults };
}

export function textPartsOf(content: readonly ContentPart[]): TextPart[] {
  return content.filter((part): part is TextPart => part.type === 'text');
}

/** A text the output policies read: the answer's text, and its reasoning where the family carries it. */
export type ReadText = TextPart | ReasoningPart;

/** The answer's text and readable reasoning parts (an encrypted reasoning block has no text to read). */
export function answerTexts(content: readonly ContentPart[]): ReadText[] {
  return content.filter((part): part is ReadText => part.type === 'text' || (part.type === 'reasoning' && part.redactedData === undefined && part.text !== ''));
}

/** A reasoning block whose text the gateway changed no longer matches its provider's signature: the signature goes. */
export function dropStaleSignatures(parts: readonly ReadText[], before: readonly string[]): void {
  parts.forEach((part, index) => {
    if (part.type === 'reasoning' && part.signature !== undefined && part.text !== before[index]) delete part.signature;
  });
}

/** The tool calls among `content`, as an external guardrail is shown them. */
export function toolCallsOf(content: readonly ContentPart[]): ShownToolCall[] {
  return content
    .filter((part): part is ToolCallPart => part.type === 'tool-call')
    .map((part) => ({ id: part.id, type: 'function', function: { name: part.name, arguments: part.argumentsJson } }));
}

/**
 * The request's text as OpenAI chat messages (what an external guardrail is shown), after the built-in masking:
 * every message's text, tool results as the tool's message, and the arguments of earlier turns' tool calls.
 */
export function messagesOf(chat: ChatRequest): ShownMessage[] {
  const messages: ShownMessage[] = [];
  const system = chat.system.map((part) => part.text).join('\n');
  if (system !== '') messages.push({ role: 'system', content: system });
  for (const message of chat.messages) {
    const texts: string[] = [];
    for (const part of message.content) {
      if (part.type === 'text') texts.push(part.text);
      else if (part.type === 'tool-result') for (const inner of part.content) if (inner.type === 'text') texts.push(inner.text);
    }
    const calls = toolCallsOf(message.content);
    if (texts.length > 0 || calls.length > 0) messages.push({ role: message.role, content: texts.join('\n'), ...(calls.length === 0 ? {} : { tool_calls: calls }) });
  }
  return messages;
}

/** One direction's text as a model-backed check reads it: the texts, then each tool call's arguments, a line each. */
export function shownText(texts: readonly string[], calls: readonly ShownToolCall[]): string {
  return [...texts, ...calls.map((call) => call.function.arguments)].filter((text) => text !== '').join('\n');
}
