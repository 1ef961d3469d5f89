import type { ChatResponse } from '../../ir/chat-response.js';
import type { ContentPart } from '../../ir/message.js';
import type { AnthropicMessage, AnthropicResponseBlock } from './anthropic-messages-api.js';
import { anthropicStopReason } from './map-finish-reason.js';
import { usageToAnthropic } from './read-usage.js';

/** Anthropic message ids start with `msg_`; ids from other upstreams get the prefix. */
export function anthropicMessageId(id: string): string {
  return id.startsWith('msg_') ? id : `msg_${id}`;
}

/** Tool arguments as the object Anthropic's `input` must be; text that is not a JSON object becomes `{}`. */
export function toolInputObject(argumentsJson: string): Record<string, unknown> {
  if (argumentsJson.trim() === '') return {};
  try {
    const parsed = JSON.parse(argumentsJson) as unknown;
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function encodeBlock(part: ContentPart): AnthropicResponseBlock | null {
  switch (part.type) {
    case 'text':
      return part.text.length === 0 ? null : { type: 'text', text: part.text };
    case 'reasoning':
      if (part.redactedData !== undefined) return { type: 'redacted_thinking', data: part.redactedData };
      return { type: 'thinking', thinking: part.text, signature: part.signature ?? '' };
    case 'tool-call':
      return { type: 'tool_use', id: part.id, name: part.name, input: toolInputObject(part.argumentsJson) };
    case 'image':
    case 'file':
    case 'tool-result':
      // An assistant message on Anthropic's wire carries none of these.
      return null;
    default: {
      const unknown: never = part;
      throw new Error(`unknown content part ${String(unknown)}`);
    }
  }
}

/** The canonical response as an Anthropic `message` object, naming the public model the caller asked for. */
export function encodeAnthropicMessage(response: ChatResponse, model: string): AnthropicMessage {
  const content: AnthropicResponseBlock[] = [];
  for (const part of response.content) {
    const block = encodeBlock(part);
    if (block !== null) content.push(block);
  }
  const hasToolCalls = content.some((block) => block.type === 'tool_use');
  return {
    id: anthropicMessageId(response.id),
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: anthropicStopReason(response.finishReason, hasToolCalls),
    // The canonical finish reason does not carry the matched stop sequence.
    stop_sequence: null,
    usage: usageToAnthropic(response.usage),
  };
}

export function encodeAnthropicResponse(response: ChatResponse, model: string): string {
  return JSON.stringify(encodeAnthropicMessage(response, model));
}
