import type { ContentPart, FilePart, ImagePart, MediaSource, Message, TextPart, ToolResultPart } from '../../ir/message.js';
import type { ConverseContentBlock, ConverseDocumentFormat, ConverseImageFormat, ConverseMessage, ConverseToolResultContent } from '../../wire/bedrock/converse-wire.js';

const IMAGE_FORMATS: Record<string, ConverseImageFormat> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/jpg': 'jpeg', 'image/gif': 'gif', 'image/webp': 'webp' };
const DOCUMENT_FORMATS: Record<string, ConverseDocumentFormat> = {
  'application/pdf': 'pdf',
  'text/csv': 'csv',
  'application/msword': 'doc',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.ms-excel': 'xls',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'text/html': 'html',
  'text/plain': 'txt',
  'text/markdown': 'md',
};
/** Written as the user turn when a conversation does not open with one, as Converse requires. */
const PLACEHOLDER_USER_TEXT = '.';

export function warn(warnings: string[], warning: string): void {
  if (!warnings.includes(warning)) warnings.push(warning);
}

/** Tool arguments as the object Converse's `input` must be; anything else becomes `{}` with a warning. */
function toolInput(argumentsJson: string, warnings: string[]): Record<string, unknown> {
  if (argumentsJson.trim() === '') return {};
  try {
    const parsed = JSON.parse(argumentsJson) as unknown;
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // falls through to the warning
  }
  warn(warnings, 'Tool call arguments that were not a JSON object were sent to Bedrock as {}.');
  return {};
}

/** Base64 bytes of a source: inline data, or a `data:` URL. Converse takes no web URLs (only S3 locations). */
function inlineData(source: MediaSource): { mediaType: string; data: string } | null {
  if (source.kind === 'base64') return { mediaType: source.mediaType, data: source.data };
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(source.url);
  return match === null ? null : { mediaType: match[1] as string, data: match[2] as string };
}

function imageBlock(part: ImagePart | FilePart, warnings: string[]): ConverseContentBlock | null {
  const inline = inlineData(part.source);
  if (inline === null) {
    warn(warnings, 'Images given by URL were dropped: Bedrock takes images only as inline bytes.');
    return null;
  }
  const format = IMAGE_FORMATS[inline.mediaType];
  if (format === undefined) {
    warn(warnings, `Images of type ${inline.mediaType} are not accepted by Bedrock and were dropped.`);
    return null;
  }
  return { image: { format, source: { bytes: inline.data } } };
}

/** Bedrock document names allow letters, digits, single spaces, hyphens, parentheses and brackets. */
function documentName(filename: string | undefined, index: number): string {
  const cleaned = (filename ?? '').replace(/\.[^.]*$/, '').replace(/[^A-Za-z0-9\s\-()[\]]/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 200);
  return cleaned === '' ? `document-${index + 1}` : cleaned;
}

function fileBlock(part: FilePart, index: number, warnings: string[]): ConverseContentBlock | null {
  const inline = inlineData(part.source);
  if (inline?.mediaType.startsWith('image/') === true || (inline === null && part.source.mediaType?.startsWith('image/') === true)) return imageBlock(part, warnings);
  if (inline === null) {
    warn(warnings, 'Files given by URL were dropped: Bedrock takes documents only as inline bytes.');
    return null;
  }
  const format = DOCUMENT_FORMATS[inline.mediaType];
  if (format === undefined) {
    warn(warnings, `Files of type ${inline.mediaType} are not accepted by Bedrock and were dropped.`);
    return null;
  }
  return { document: { format, name: documentName(part.filename, index), source: { bytes: inline.data } } };
}

function textBlocks(part: TextPart): ConverseContentBlock[] {
  if (part.text.trim() === '') return [];
  return part.cacheControl === undefined ? [{ text: part.text }] : [{ text: part.text }, { cachePoint: { type: 'default' } }];
}

function toolResultBlock(part: ToolResultPart, warnings: string[]): ConverseContentBlock {
  const content: ConverseToolResultContent[] = [];
  for (const item of part.content) {
    if (item.type === 'text') {
      if (item.text !== '') content.push({ text: item.text });
      continue;
    }
    const image = imageBlock(item, warnings);
    if (image !== null && 'image' in image) content.push({ image: image.image });
  }
  if (content.length === 0) content.push({ text: '' });
  return { toolResult: { toolUseId: part.toolCallId, content, ...(part.isError === true ? { status: 'error' as const } : {}) } };
}

function convertPart(part: ContentPart, role: 'user' | 'assistant', state: { documents: number }, warnings: string[]): ConverseContentBlock[] {
  switch (part.type) {
    case 'text':
      return textBlocks(part);
    case 'image': {
      const block = imageBlock(part, warnings);
      return block === null ? [] : [block];
    }
    case 'file': {
      const block = fileBlock(part, state.documents, warnings);
      if (block !== null && 'document' in block) state.documents += 1;
      return block === null ? [] : [block];
    }
    case 'reasoning':
      if (role !== 'assistant') return [];
      if (part.redactedData !== undefined) return [{ reasoningContent: { redactedContent: part.redactedData } }];
      // Reasoning goes back only with the signature the model gave it; unsigned text would be rejected.
      if (part.signature === undefined || part.text === '') return [];
      return [{ reasoningContent: { reasoningText: { text: part.text, signature: part.signature } } }];
    case 'tool-call':
      return [{ toolUse: { toolUseId: part.id, name: part.name, input: toolInput(part.argumentsJson, warnings) } }];
    case 'tool-result':
      return [toolResultBlock(part, warnings)];
    case 'web-search':
      // A search of an earlier turn: the answer text stays, the search itself was the other upstream's business.
      return [];
    default: {
      const unknown: never = part;
      throw new Error(`unknown content part ${String(unknown)}`);
    }
  }
}

/**
 * Canonical messages → Converse messages: tool results travel in user turns, turns of the same role are merged,
 * the conversation opens with a user turn, and blank text blocks (which Bedrock rejects) are left out.
 */
export function convertToConverseMessages(messages: readonly Message[], warnings: string[]): ConverseMessage[] {
  const turns: ConverseMessage[] = [];
  const state = { documents: 0 };
  for (const message of messages) {
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const content = message.content.flatMap((part) => convertPart(part, role, state, warnings));
    if (content.length === 0) continue;
    const last = turns.at(-1);
    if (last?.role === role) last.content.push(...content);
    else turns.push({ role, content });
  }
  if (turns[0]?.role !== 'user') turns.unshift({ role: 'user', content: [{ text: PLACEHOLDER_USER_TEXT }] });
  return turns;
}
