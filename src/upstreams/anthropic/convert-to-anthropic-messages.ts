import type { ContentPart, FilePart, ImagePart, MediaSource, Message, TextPart, ToolResultPart } from '../../ir/message.js';
import type { AnthropicMessageParam, AssistantBlock, DocumentBlock, ImageBlock, TextBlock, ToolResultBlock, UserBlock } from '../../wire/anthropic/anthropic-wire.js';
import { unreachable } from '../../shared/unreachable.js';

const IMAGE_MEDIA_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
/** Written as the user turn when a conversation does not open with one, as Anthropic requires. */
export const PLACEHOLDER_USER_TEXT = '.';

function warn(warnings: string[], warning: string): void {
  if (!warnings.includes(warning)) warnings.push(warning);
}

/** `data:<type>;base64,<data>` URLs (how OpenAI clients inline images) become base64 sources. */
function normalizeSource(source: MediaSource): MediaSource {
  if (source.kind !== 'url' || !source.url.startsWith('data:')) return source;
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(source.url);
  if (match === null) return source;
  return { kind: 'base64', mediaType: match[1] as string, data: match[2] as string };
}

function textBlock(part: TextPart): TextBlock | null {
  if (part.text.length === 0) return null;
  return part.cacheControl === undefined ? { type: 'text', text: part.text } : { type: 'text', text: part.text, cache_control: { ...part.cacheControl } };
}

function imageBlock(raw: MediaSource, warnings: string[]): ImageBlock | null {
  const source = normalizeSource(raw);
  if (source.kind === 'url') return { type: 'image', source: { type: 'url', url: source.url } };
  if (!IMAGE_MEDIA_TYPES.has(source.mediaType)) {
    warn(warnings, `Images of type ${source.mediaType} are not accepted by Anthropic and were dropped.`);
    return null;
  }
  return { type: 'image', source: { type: 'base64', media_type: source.mediaType, data: source.data } };
}

function fileBlock(part: FilePart, warnings: string[]): ImageBlock | DocumentBlock | null {
  const source = normalizeSource(part.source);
  if (source.mediaType?.startsWith('image/') === true) return imageBlock(source, warnings);
  let block: DocumentBlock;
  if (source.kind === 'url') block = { type: 'document', source: { type: 'url', url: source.url } };
  else if (source.mediaType === 'application/pdf') block = { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: source.data } };
  else if (source.mediaType === 'text/plain') {
    block = { type: 'document', source: { type: 'text', media_type: 'text/plain', data: Buffer.from(source.data, 'base64').toString('utf8') } };
  } else {
    warn(warnings, `Files of type ${source.mediaType} are not accepted by Anthropic and were dropped.`);
    return null;
  }
  if (part.filename !== undefined) block.title = part.filename;
  return block;
}

/** Tool arguments as the object Anthropic's `input` must be; anything else becomes `{}` with a warning. */
export function toolInput(argumentsJson: string, warnings: string[]): Record<string, unknown> {
  if (argumentsJson.trim() === '') return {};
  try {
    const parsed = JSON.parse(argumentsJson) as unknown;
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // falls through to the warning
  }
  warn(warnings, 'Tool call arguments that were not a JSON object were sent to Anthropic as {}.');
  return {};
}

function toolResultBlock(part: ToolResultPart, warnings: string[]): ToolResultBlock {
  const content: Array<TextBlock | ImageBlock> = [];
  for (const item of part.content) {
    const block = item.type === 'text' ? textBlock(item) : imageBlock(item.source, warnings);
    if (block !== null) content.push(block);
  }
  const result: ToolResultBlock = { type: 'tool_result', tool_use_id: part.toolCallId };
  if (content.length > 0) result.content = content;
  if (part.isError === true) result.is_error = true;
  return result;
}

function userBlock(part: ContentPart, warnings: string[]): UserBlock | null {
  switch (part.type) {
    case 'text':
      return textBlock(part);
    case 'image':
      return imageBlock((part satisfies ImagePart).source, warnings);
    case 'file':
      return fileBlock(part, warnings);
    case 'tool-result':
      return toolResultBlock(part, warnings);
    case 'reasoning':
    case 'tool-call':
      warn(warnings, `A ${part.type} part in a user message has no place on Anthropic's wire and was dropped.`);
      return null;
    case 'web-search':
      return null;
    default:
      return unreachable(part, 'content part');
  }
}

function assistantBlock(part: ContentPart, warnings: string[]): AssistantBlock | null {
  switch (part.type) {
    case 'text':
      return textBlock(part);
    case 'reasoning':
      if (part.redactedData !== undefined) return { type: 'redacted_thinking', data: part.redactedData };
      if (part.signature !== undefined && part.signature !== '') return { type: 'thinking', thinking: part.text, signature: part.signature };
      warn(warnings, 'Reasoning without an Anthropic signature cannot be sent back to Anthropic and was dropped.');
      return null;
    case 'tool-call':
      return { type: 'tool_use', id: part.id, name: part.name, input: toolInput(part.argumentsJson, warnings) };
    case 'image':
    case 'file':
    case 'tool-result':
      warn(warnings, `A ${part.type} part in an assistant message has no place on Anthropic's wire and was dropped.`);
      return null;
    case 'web-search':
      // A search of an earlier turn: its answer text stays; Anthropic takes back only its own encrypted results.
      return null;
    default:
      return unreachable(part, 'content part');
  }
}

/**
 * Canonical messages → Anthropic turns: `tool` messages become user turns of tool_result blocks, consecutive
 * turns of one role are merged (tool results first in a user turn, as Anthropic requires), empty blocks and turns
 * are dropped, a conversation opening with the assistant gets a placeholder user turn, and trailing whitespace of
 * a final assistant turn (prefill) is trimmed, which Anthropic rejects.
 */
export function convertToAnthropicMessages(messages: readonly Message[], warnings: string[]): AnthropicMessageParam[] {
  const turns: AnthropicMessageParam[] = [];
  for (const message of messages) {
    if (message.role === 'assistant') {
      const content = message.content.map((part) => assistantBlock(part, warnings)).filter((block) => block !== null);
      if (content.length === 0) continue;
      const last = turns.at(-1);
      if (last?.role === 'assistant') last.content.push(...content);
      else turns.push({ role: 'assistant', content });
    } else {
      const content = message.content.map((part) => userBlock(part, warnings)).filter((block) => block !== null);
      if (content.length === 0) continue;
      const last = turns.at(-1);
      if (last?.role === 'user') last.content.push(...content);
      else turns.push({ role: 'user', content });
    }
  }
  for (const turn of turns) {
    if (turn.role === 'user' && turn.content.some((block) => block.type === 'tool_result')) {
      turn.content = [...turn.content.filter((block) => block.type === 'tool_result'), ...turn.content.filter((block) => block.type !== 'tool_result')];
    }
  }
  if (turns[0]?.role !== 'user') {
    turns.unshift({ role: 'user', content: [{ type: 'text', text: PLACEHOLDER_USER_TEXT }] });
    warn(warnings, 'Anthropic needs the conversation to open with a user turn; a placeholder one was added.');
  }
  trimFinalAssistant(turns, warnings);
  return turns;
}

function trimFinalAssistant(turns: AnthropicMessageParam[], warnings: string[]): void {
  const last = turns.at(-1);
  if (last?.role !== 'assistant') return;
  const block = last.content.at(-1);
  if (block?.type !== 'text' || block.text.trimEnd() === block.text) return;
  const trimmed = block.text.trimEnd();
  if (trimmed === '') last.content.pop();
  else block.text = trimmed;
  warn(warnings, 'Trailing whitespace of the final assistant message was trimmed, as Anthropic requires.');
  if (last.content.length === 0) turns.pop();
}
