import type { ChatResponse } from '../../ir/chat-response.js';
import type { Citation, ContentPart, WebSearchPart } from '../../ir/message.js';
import type { AnthropicMessage, AnthropicResponseBlock, AnthropicWebCitation } from '../../wire/anthropic/anthropic-wire.js';
import { signatureOfNextBlock } from '../carried-signature.js';
import { anthropicStopReason } from '../../wire/anthropic/stop-reason.js';
import { usageToAnthropic } from '../../wire/anthropic/usage.js';

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

/** A citation as Anthropic's web_search_result_location; the cited text is the span it covers. */
export function anthropicCitation(citation: Citation, text: string): AnthropicWebCitation {
  return {
    type: 'web_search_result_location',
    url: citation.url,
    title: citation.title ?? null,
    cited_text: citation.citedText ?? text.slice(citation.startIndex ?? 0, citation.endIndex ?? text.length),
    encrypted_index: '',
  };
}

/**
 * A search another provider ran, as Anthropic's server_tool_use and web_search_tool_result blocks (the results'
 * encrypted content is empty: only Anthropic can produce it, and only Anthropic reads it back).
 */
export function webSearchBlocks(part: WebSearchPart): AnthropicResponseBlock[] {
  const id = part.id.startsWith('srvtoolu_') ? part.id : `srvtoolu_${part.id.replace(/[^A-Za-z0-9_]/g, '')}`;
  return [
    { type: 'server_tool_use', id, name: 'web_search', input: { query: part.query ?? '' } },
    {
      type: 'web_search_tool_result',
      tool_use_id: id,
      content: part.sources.map((source) => ({ type: 'web_search_result', url: source.url, title: source.title ?? source.url, encrypted_content: '', page_age: null })),
    },
  ];
}

function encodeBlock(part: ContentPart): AnthropicResponseBlock | AnthropicResponseBlock[] | null {
  switch (part.type) {
    case 'text':
      if (part.text.length === 0) return null;
      return part.citations === undefined || part.citations.length === 0
        ? { type: 'text', text: part.text }
        : { type: 'text', text: part.text, citations: part.citations.map((citation) => anthropicCitation(citation, part.text)) };
    case 'web-search':
      return webSearchBlocks(part);
    case 'reasoning':
      if (part.redactedData !== undefined) return { type: 'redacted_thinking', data: part.redactedData };
      if (part.text === '' && (part.signature ?? '') === '') return null;
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

/**
 * The canonical response as an Anthropic `message` object, naming the public model the caller asked for. Blocks
 * come in the answer's order and end with its text or tool use, as Anthropic's do: the signature of a text or tool
 * call (Gemini's) goes on the thinking block before it when that one has none, else on an empty thinking block
 * inserted before it (see carried-signature.ts).
 */
export function encodeAnthropicMessage(response: ChatResponse, model: string): AnthropicMessage {
  const content: AnthropicResponseBlock[] = [];
  for (const part of response.content) {
    const block = encodeBlock(part);
    if (block === null) continue;
    const signature = part.type === 'text' || part.type === 'tool-call' ? part.signature : undefined;
    if (signature !== undefined && signature !== '') {
      const before = content.at(-1);
      if (before?.type === 'thinking' && before.signature === '') before.signature = signatureOfNextBlock(signature);
      else content.push({ type: 'thinking', thinking: '', signature: signatureOfNextBlock(signature) });
    }
    if (Array.isArray(block)) content.push(...block);
    else content.push(block);
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
