/**
 * Content-block checks of the mock Anthropic upstream, as strict as the real API: block types per role,
 * non-empty text, image/document sources, tool_use ids, and thinking signatures the mock itself issued.
 */
import { invalidRequest, isMockRedactedData, verifyThinking } from './mock-anthropic-upstream-wire.js';

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export type Block =
  | { type: 'text'; text: string; cacheControl: boolean }
  | { type: 'image'; cacheControl: boolean }
  | { type: 'document'; cacheControl: boolean }
  | { type: 'tool_use'; id: string; name: string; input: JsonObject; cacheControl: boolean }
  | { type: 'tool_result'; toolUseId: string; text: string; isError: boolean; cacheControl: boolean }
  | { type: 'thinking'; thinking: string }
  | { type: 'redacted_thinking' };

const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const TOOL_USE_ID = /^[a-zA-Z0-9_-]+$/;

export function allowOnly(object: JsonObject, path: string, allowed: readonly string[]): void {
  for (const key of Object.keys(object)) {
    if (!allowed.includes(key)) throw invalidRequest(`${path}.${key}: Extra inputs are not permitted`);
  }
}

export function requireString(value: unknown, path: string): string {
  if (value === undefined) throw invalidRequest(`${path}: Field required`);
  if (typeof value !== 'string') throw invalidRequest(`${path}: Input should be a valid string`);
  return value;
}

export function checkCacheControl(value: unknown, path: string): boolean {
  if (value === undefined || value === null) return false;
  if (!isObject(value) || value.type !== 'ephemeral') throw invalidRequest(`${path}.type: Input should be 'ephemeral'`);
  if (value.ttl !== undefined && value.ttl !== '5m' && value.ttl !== '1h') throw invalidRequest(`${path}.ttl: Input should be '5m' or '1h'`);
  return true;
}

export function checkText(block: JsonObject, path: string): Block {
  allowOnly(block, path, ['type', 'text', 'cache_control', 'citations']);
  const text = requireString(block.text, `${path}.text`);
  if (text === '') throw invalidRequest('messages: text content blocks must be non-empty');
  if (text.trim() === '') throw invalidRequest('messages: text content blocks must contain non-whitespace text');
  return { type: 'text', text, cacheControl: checkCacheControl(block.cache_control, `${path}.cache_control`) };
}

function checkImage(block: JsonObject, path: string): Block {
  allowOnly(block, path, ['type', 'source', 'cache_control']);
  const source = block.source;
  if (!isObject(source)) throw invalidRequest(`${path}.source: Field required`);
  if (source.type === 'base64') {
    allowOnly(source, `${path}.source`, ['type', 'media_type', 'data']);
    const mediaType = requireString(source.media_type, `${path}.source.base64.media_type`);
    if (!IMAGE_TYPES.includes(mediaType)) {
      throw invalidRequest(`${path}.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'`);
    }
    const data = requireString(source.data, `${path}.source.base64.data`);
    if (data === '' || !BASE64.test(data)) throw invalidRequest(`${path}.source.base64: The image data is not valid base64.`);
  } else if (source.type === 'url') {
    allowOnly(source, `${path}.source`, ['type', 'url']);
    const url = requireString(source.url, `${path}.source.url.url`);
    if (!/^https?:\/\//.test(url)) throw invalidRequest(`${path}.source.url.url: Only HTTP and HTTPS URLs are supported.`);
  } else {
    throw invalidRequest(`${path}.source: Input tag '${String(source.type)}' found using 'type' does not match any of the expected tags: 'base64', 'url', 'file'`);
  }
  return { type: 'image', cacheControl: checkCacheControl(block.cache_control, `${path}.cache_control`) };
}

function checkDocument(block: JsonObject, path: string): Block {
  allowOnly(block, path, ['type', 'source', 'title', 'context', 'citations', 'cache_control']);
  const source = block.source;
  if (!isObject(source)) throw invalidRequest(`${path}.source: Field required`);
  if (source.type === 'base64') {
    if (source.media_type !== 'application/pdf') throw invalidRequest(`${path}.source.base64.media_type: Input should be 'application/pdf'`);
    const data = requireString(source.data, `${path}.source.base64.data`);
    if (data === '' || !BASE64.test(data)) throw invalidRequest(`${path}.source.base64: The PDF data is not valid base64.`);
  } else if (source.type === 'text') {
    if (source.media_type !== 'text/plain') throw invalidRequest(`${path}.source.text.media_type: Input should be 'text/plain'`);
    requireString(source.data, `${path}.source.text.data`);
  } else if (source.type === 'url') {
    const url = requireString(source.url, `${path}.source.url.url`);
    if (!/^https?:\/\//.test(url)) throw invalidRequest(`${path}.source.url.url: Only HTTP and HTTPS URLs are supported.`);
  } else {
    throw invalidRequest(`${path}.source: Input tag '${String(source.type)}' found using 'type' does not match any of the expected tags: 'base64', 'text', 'url', 'content', 'file'`);
  }
  if (block.title !== undefined && block.title !== null) requireString(block.title, `${path}.title`);
  return { type: 'document', cacheControl: checkCacheControl(block.cache_control, `${path}.cache_control`) };
}

function checkToolUse(block: JsonObject, path: string): Block {
  allowOnly(block, path, ['type', 'id', 'name', 'input', 'cache_control']);
  const id = requireString(block.id, `${path}.id`);
  if (!TOOL_USE_ID.test(id)) throw invalidRequest(`${path}.id: String should match pattern '^[a-zA-Z0-9_-]+$'`);
  const name = requireString(block.name, `${path}.name`);
  if (!isObject(block.input)) throw invalidRequest(`${path}.input: Input should be a valid dictionary`);
  return { type: 'tool_use', id, name, input: block.input, cacheControl: checkCacheControl(block.cache_control, `${path}.cache_control`) };
}

function checkToolResult(block: JsonObject, path: string): Block {
  allowOnly(block, path, ['type', 'tool_use_id', 'content', 'is_error', 'cache_control']);
  const toolUseId = requireString(block.tool_use_id, `${path}.tool_use_id`);
  if (block.is_error !== undefined && typeof block.is_error !== 'boolean') throw invalidRequest(`${path}.is_error: Input should be a valid boolean`);
  let text = '';
  const content = block.content;
  if (typeof content === 'string') text = content;
  else if (Array.isArray(content)) {
    content.forEach((item: unknown, index) => {
      const itemPath = `${path}.content.${index}`;
      if (!isObject(item)) throw invalidRequest(`${itemPath}: Input should be a valid dictionary`);
      if (item.type === 'text') {
        const checked = checkText(item, itemPath);
        if (checked.type === 'text') text += (text === '' ? '' : '\n') + checked.text;
      } else if (item.type === 'image') checkImage(item, itemPath);
      else if (item.type === 'document') checkDocument(item, itemPath);
      else throw invalidRequest(`${itemPath}.type: Input tag '${String(item.type)}' found using 'type' does not match any of the expected tags: 'text', 'image', 'document', 'search_result'`);
    });
  } else if (content !== undefined) {
    throw invalidRequest(`${path}.content: Input should be a valid string or list`);
  }
  return { type: 'tool_result', toolUseId, text, isError: block.is_error === true, cacheControl: checkCacheControl(block.cache_control, `${path}.cache_control`) };
}

function checkThinking(block: JsonObject, path: string): Block {
  allowOnly(block, path, ['type', 'thinking', 'signature']);
  const thinking = requireString(block.thinking, `${path}.thinking`);
  const signature = requireString(block.signature, `${path}.signature`);
  if (!verifyThinking(thinking, signature)) throw invalidRequest(`${path}: Invalid \`signature\` in \`thinking\` block`);
  return { type: 'thinking', thinking };
}

function checkRedactedThinking(block: JsonObject, path: string): Block {
  allowOnly(block, path, ['type', 'data']);
  const data = requireString(block.data, `${path}.data`);
  if (!isMockRedactedData(data)) throw invalidRequest(`${path}: Invalid \`data\` in \`redacted_thinking\` block`);
  return { type: 'redacted_thinking' };
}

const USER_TYPES = ['text', 'image', 'document', 'tool_result'];
const ASSISTANT_TYPES = ['text', 'tool_use', 'thinking', 'redacted_thinking'];

export function checkBlock(role: 'user' | 'assistant', raw: unknown, path: string): Block {
  if (!isObject(raw)) throw invalidRequest(`${path}: Input should be a valid dictionary`);
  const type = raw.type;
  const allowed = role === 'user' ? USER_TYPES : ASSISTANT_TYPES;
  if (typeof type !== 'string' || !allowed.includes(type)) {
    throw invalidRequest(`${path}: Input tag '${String(type)}' found using 'type' does not match any of the expected tags for a ${role} message: ${allowed.map((t) => `'${t}'`).join(', ')}`);
  }
  switch (type) {
    case 'text':
      return checkText(raw, path);
    case 'image':
      return checkImage(raw, path);
    case 'document':
      return checkDocument(raw, path);
    case 'tool_use':
      return checkToolUse(raw, path);
    case 'tool_result':
      return checkToolResult(raw, path);
    case 'thinking':
      return checkThinking(raw, path);
    default:
      return checkRedactedThinking(raw, path);
  }
}
