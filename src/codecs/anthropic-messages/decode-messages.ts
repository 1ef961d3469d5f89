import type { ContentPart, Message, TextPart } from '../../ir/message.js';
import {
  decodeDocument,
  decodeImage,
  decodeRedactedThinking,
  decodeText,
  decodeThinking,
  decodeToolResult,
  decodeToolUse,
  keepUnmapped,
  type DecodeContext,
} from './decode-content.js';
import { restoreCarriedSignatures } from '../carried-signature.js';
import { invalid, requireObject } from './request-fields.js';

type Role = 'user' | 'assistant';

/** Blocks a role may carry, as Anthropic allows them; anything else known to Anthropic is kept unmapped. */
function decodeBlock(role: Role, block: Record<string, unknown>, param: string, context: DecodeContext): ContentPart | null {
  const type = block.type;
  if (typeof type !== 'string') throw invalid(`${param}.type`, 'Field required.');
  switch (type) {
    case 'text':
      return decodeText(block, param, context);
    case 'image':
      return decodeImage(block, param, context);
    case 'document':
      return decodeDocument(block, param, context);
    case 'tool_use':
      if (role !== 'assistant') throw invalid(param, '`tool_use` blocks can only be in `assistant` messages.');
      return decodeToolUse(block, param, context);
    case 'tool_result':
      if (role !== 'user') throw invalid(param, '`tool_result` blocks can only be in `user` messages.');
      return decodeToolResult(block, param, context);
    case 'thinking':
      if (role !== 'assistant') throw invalid(param, '`thinking` blocks can only be in `assistant` messages.');
      return decodeThinking(block, param);
    case 'redacted_thinking':
      if (role !== 'assistant') throw invalid(param, '`redacted_thinking` blocks can only be in `assistant` messages.');
      return decodeRedactedThinking(block, param);
    default:
      keepUnmapped(context, param, block, `A '${type}' block`);
      return null;
  }
}

/**
 * One Anthropic message → canonical messages. A user turn's tool_result blocks become `tool` messages and its
 * other blocks `user` messages, in their order (so [tool_result, text] gives a tool message, then a user one).
 */
function decodeMessage(raw: unknown, index: number, isLast: boolean, context: DecodeContext): Message[] {
  const param = `messages.${index}`;
  const message = requireObject(raw, param);
  const role = message.role;
  if (role === 'system') return [decodeSystemMessage(message.content, param, context)];
  if (role !== 'user' && role !== 'assistant') throw invalid(`${param}.role`, "Input should be 'user', 'assistant' or 'system'.");
  const content = message.content;
  const finalAssistant = isLast && role === 'assistant';
  let parts: ContentPart[];
  if (typeof content === 'string') {
    if (content.length === 0 && !finalAssistant) {
      throw invalid(param, 'all messages must have non-empty content except for the optional final assistant message.');
    }
    parts = content.length === 0 ? [] : [{ type: 'text', text: content } satisfies TextPart];
  } else if (Array.isArray(content)) {
    if (content.length === 0 && !finalAssistant) {
      throw invalid(param, 'all messages must have non-empty content except for the optional final assistant message.');
    }
    parts = [];
    content.forEach((block: unknown, blockIndex) => {
      const blockParam = `${param}.content.${blockIndex}`;
      const part = decodeBlock(role, requireObject(block, blockParam), blockParam, context);
      if (part !== null) parts.push(part);
    });
  } else {
    throw invalid(`${param}.content`, content === undefined ? 'Field required.' : 'Input should be a string or an array of content blocks.');
  }
  if (role === 'assistant') return parts.length === 0 ? [] : [{ role, content: restoreCarriedSignatures(parts) }];
  const out: Message[] = [];
  for (const part of parts) {
    const target = part.type === 'tool-result' ? 'tool' : 'user';
    const last = out.at(-1);
    if (last !== undefined && last.role === target) last.content.push(part);
    else out.push({ role: target, content: [part] });
  }
  return out;
}

/**
 * A mid-conversation system message (what Claude Code sends for models it does not know as Claude): text only, as
 * Anthropic takes it. Its placement rules are left to an Anthropic upstream; other families take it anywhere.
 */
function decodeSystemMessage(content: unknown, param: string, context: DecodeContext): Message {
  if (typeof content === 'string') {
    if (content.length === 0) throw invalid(param, 'all messages must have non-empty content except for the optional final assistant message.');
    return { role: 'system', content: [{ type: 'text', text: content }] };
  }
  if (!Array.isArray(content)) throw invalid(`${param}.content`, content === undefined ? 'Field required.' : 'Input should be a string or an array of content blocks.');
  if (content.length === 0) throw invalid(param, 'all messages must have non-empty content except for the optional final assistant message.');
  const parts = content.map((block: unknown, blockIndex) => {
    const blockParam = `${param}.content.${blockIndex}`;
    const text = requireObject(block, blockParam);
    if (text.type !== 'text') throw invalid(`${blockParam}.type`, "system messages take only 'text' blocks.");
    return decodeText(text, blockParam, context);
  });
  return { role: 'system', content: parts };
}

export function decodeMessages(raw: unknown, context: DecodeContext): Message[] {
  if (raw === undefined) throw invalid('messages', 'Field required.');
  if (!Array.isArray(raw)) throw invalid('messages', 'Input should be a valid list.');
  if (raw.length === 0) throw invalid('messages', 'at least one message is required.');
  const messages: Message[] = [];
  raw.forEach((message: unknown, index) => {
    for (const decoded of decodeMessage(message, index, index === raw.length - 1, context)) messages.push(decoded);
  });
  return messages;
}

/** `system`: a string or an array of text blocks (cache_control kept). */
export function decodeSystem(raw: unknown, context: DecodeContext): TextPart[] {
  if (raw === undefined || raw === null) return [];
  if (typeof raw === 'string') return raw.length === 0 ? [] : [{ type: 'text', text: raw }];
  if (!Array.isArray(raw)) throw invalid('system', 'Input should be a string or an array of text blocks.');
  return raw.map((block: unknown, index) => {
    const param = `system.${index}`;
    const text = requireObject(block, param);
    if (text.type !== 'text') throw invalid(`${param}.type`, "Input should be 'text'.");
    return decodeText(text, param, context);
  });
}
