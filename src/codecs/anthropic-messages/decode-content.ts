import type { FilePart, ImagePart, ReasoningPart, TextPart, ToolCallPart, ToolResultPart } from '../../ir/message.js';
import { invalid, optionalBoolean, optionalString, readCacheControl, requireObject, requireString, warnOnce } from './request-fields.js';
import { isJsonObject } from '../../wire/json-object.js';

/** What block decoders share: the request's warnings and extensions, and tool names by tool_use id. */
export interface DecodeContext {
  warnings: string[];
  extensions: Record<string, unknown>;
  toolNames: Map<string, string>;
}

const IMAGE_MEDIA_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

/** Keeps a block the IR cannot hold, by its place, so it is at least reported and never silently lost. */
export function keepUnmapped(context: DecodeContext, param: string, block: unknown, what: string): void {
  context.extensions[param] = block;
  warnOnce(context.warnings, `${what} is not carried on the translated path and was dropped (${param}).`);
}

function dropCacheControl(context: DecodeContext, block: Record<string, unknown>, param: string): void {
  if (block.cache_control === undefined || block.cache_control === null) return;
  readCacheControl(block.cache_control, `${param}.cache_control`);
  warnOnce(context.warnings, 'cache_control is carried on text blocks only; breakpoints on other blocks were dropped.');
}

export function decodeText(block: Record<string, unknown>, param: string, context: DecodeContext): TextPart {
  const text = requireString(block.text, `${param}.text`);
  if (text.length === 0) throw invalid(param, 'text content blocks must be non-empty.');
  if (block.citations !== undefined && block.citations !== null) {
    warnOnce(context.warnings, 'citations on text blocks are not carried on the translated path.');
  }
  const cacheControl = readCacheControl(block.cache_control, `${param}.cache_control`);
  return cacheControl === undefined ? { type: 'text', text } : { type: 'text', text, cacheControl };
}

export function decodeImage(block: Record<string, unknown>, param: string, context: DecodeContext): ImagePart | null {
  const source = requireObject(block.source, `${param}.source`);
  dropCacheControl(context, block, param);
  switch (source.type) {
    case 'base64': {
      const mediaType = requireString(source.media_type, `${param}.source.media_type`);
      if (!IMAGE_MEDIA_TYPES.has(mediaType)) {
        throw invalid(`${param}.source.media_type`, "Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'.");
      }
      return { type: 'image', source: { kind: 'base64', mediaType, data: requireString(source.data, `${param}.source.data`) } };
    }
    case 'url':
      return { type: 'image', source: { kind: 'url', url: requireString(source.url, `${param}.source.url`) } };
    case 'file':
      keepUnmapped(context, param, block, 'An image given by Files API file_id');
      return null;
    default:
      throw invalid(`${param}.source.type`, "Input should be 'base64', 'url' or 'file'.");
  }
}

export function decodeDocument(block: Record<string, unknown>, param: string, context: DecodeContext): FilePart | null {
  const source = requireObject(block.source, `${param}.source`);
  dropCacheControl(context, block, param);
  const title = optionalString(block.title, `${param}.title`);
  if (block.context !== undefined && block.context !== null) warnOnce(context.warnings, 'document context is not carried on the translated path.');
  if (block.citations !== undefined && block.citations !== null) warnOnce(context.warnings, 'document citations are not carried on the translated path.');
  const named = (part: FilePart): FilePart => (title === undefined ? part : { ...part, filename: title });
  switch (source.type) {
    case 'base64': {
      const mediaType = requireString(source.media_type, `${param}.source.media_type`);
      if (mediaType !== 'application/pdf') throw invalid(`${param}.source.media_type`, "Input should be 'application/pdf'.");
      return named({ type: 'file', source: { kind: 'base64', mediaType, data: requireString(source.data, `${param}.source.data`) } });
    }
    case 'url':
      return named({ type: 'file', source: { kind: 'url', url: requireString(source.url, `${param}.source.url`), mediaType: 'application/pdf' } });
    case 'text': {
      const data = requireString(source.data, `${param}.source.data`);
      const encoded = Buffer.from(data, 'utf8').toString('base64');
      return named({ type: 'file', source: { kind: 'base64', mediaType: 'text/plain', data: encoded } });
    }
    case 'content':
    case 'file':
      keepUnmapped(context, param, block, `A document with a '${source.type}' source`);
      return null;
    default:
      throw invalid(`${param}.source.type`, "Input should be 'base64', 'url', 'text', 'content' or 'file'.");
  }
}

export function decodeToolUse(block: Record<string, unknown>, param: string, context: DecodeContext): ToolCallPart {
  const id = requireString(block.id, `${param}.id`);
  const name = requireString(block.name, `${param}.name`);
  const input = block.input;
  if (!isJsonObject(input)) throw invalid(`${param}.input`, 'Input should be an object.');
  dropCacheControl(context, block, param);
  context.toolNames.set(id, name);
  return { type: 'tool-call', id, name, argumentsJson: JSON.stringify(input) };
}

export function decodeToolResult(block: Record<string, unknown>, param: string, context: DecodeContext): ToolResultPart {
  const toolCallId = requireString(block.tool_use_id, `${param}.tool_use_id`);
  const toolName = context.toolNames.get(toolCallId);
  if (toolName === undefined) {
    throw invalid(param, `unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${toolCallId}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`);
  }
  dropCacheControl(context, block, param);
  const isError = optionalBoolean(block.is_error, `${param}.is_error`);
  const content: Array<TextPart | ImagePart> = [];
  const raw = block.content;
  if (typeof raw === 'string') {
    if (raw.length > 0) content.push({ type: 'text', text: raw });
  } else if (Array.isArray(raw)) {
    raw.forEach((item: unknown, index) => {
      const itemParam = `${param}.content.${index}`;
      const inner = requireObject(item, itemParam);
      if (inner.type === 'text') content.push(decodeText(inner, itemParam, context));
      else if (inner.type === 'image') {
        const image = decodeImage(inner, itemParam, context);
        if (image !== null) content.push(image);
      } else if (typeof inner.type === 'string') keepUnmapped(context, itemParam, inner, `A '${inner.type}' block inside a tool_result`);
      else throw invalid(`${itemParam}.type`, 'Field required.');
    });
  } else if (raw !== undefined && raw !== null) {
    throw invalid(`${param}.content`, 'Input should be a string or an array of content blocks.');
  }
  const part: ToolResultPart = { type: 'tool-result', toolCallId, toolName, content };
  if (isError !== undefined) part.isError = isError;
  return part;
}

export function decodeThinking(block: Record<string, unknown>, param: string): ReasoningPart {
  const text = requireString(block.thinking, `${param}.thinking`);
  const signature = requireString(block.signature, `${param}.signature`);
  // An empty signature is what this gateway writes for reasoning from upstreams that sign nothing.
  return signature === '' ? { type: 'reasoning', text } : { type: 'reasoning', text, signature };
}

export function decodeRedactedThinking(block: Record<string, unknown>, param: string): ReasoningPart {
  return { type: 'reasoning', text: '', redactedData: requireString(block.data, `${param}.data`) };
}
