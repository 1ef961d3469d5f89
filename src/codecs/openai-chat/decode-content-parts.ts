import type { FilePart, ImagePart, TextPart } from '../../ir/message.js';
import { badRequest } from './bad-request.js';
import { mediaSourceFromUrl } from '../../wire/data-url.js';
import { isJsonObject, type JsonObject } from '../../wire/json-object.js';

/** OpenAI `input_audio.format` → media type (OpenAI documents wav and mp3; other names pass as `audio/<format>`). */
const AUDIO_MEDIA_TYPES: Record<string, string> = { wav: 'audio/wav', mp3: 'audio/mpeg' };

const FILE_EXTENSION_MEDIA_TYPES: Record<string, string> = {
  pdf: 'application/pdf',
  txt: 'text/plain',
  md: 'text/markdown',
  csv: 'text/csv',
  json: 'application/json',
  html: 'text/html',
};

export type UserContentPart = TextPart | ImagePart | FilePart;

function textOf(part: JsonObject, param: string): TextPart {
  if (typeof part.text !== 'string') throw badRequest(`${param}.text`, `'${param}.text' must be a string.`);
  return { type: 'text', text: part.text };
}

function imageOf(part: JsonObject, param: string): ImagePart {
  const raw = part.image_url;
  // The documented shape is an object; a bare string is accepted as some clients send it.
  const url = typeof raw === 'string' ? raw : isJsonObject(raw) && typeof raw.url === 'string' ? raw.url : undefined;
  if (url === undefined) throw badRequest(`${param}.image_url.url`, `'${param}.image_url.url' is required.`);
  const source = mediaSourceFromUrl(url);
  if (source === null) throw badRequest(`${param}.image_url.url`, `'${param}.image_url.url' must be an http(s) URL or a base64 data URL.`);
  const detail = isJsonObject(raw) ? raw.detail : undefined;
  const image: ImagePart = { type: 'image', source };
  if (detail === 'auto' || detail === 'low' || detail === 'high') image.detail = detail;
  return image;
}

function audioOf(part: JsonObject, param: string): FilePart {
  const audio = part.input_audio;
  if (!isJsonObject(audio) || typeof audio.data !== 'string' || typeof audio.format !== 'string') {
    throw badRequest(`${param}.input_audio`, `'${param}.input_audio' must have base64 'data' and a 'format'.`);
  }
  const mediaType = AUDIO_MEDIA_TYPES[audio.format] ?? `audio/${audio.format}`;
  return { type: 'file', source: { kind: 'base64', mediaType, data: audio.data } };
}

function mediaTypeFromFilename(filename: string | undefined): string {
  const extension = filename?.split('.').pop()?.toLowerCase() ?? '';
  // OpenAI's chat file inputs are PDFs; other types are recognised by their extension.
  return FILE_EXTENSION_MEDIA_TYPES[extension] ?? 'application/pdf';
}

function fileOf(part: JsonObject, param: string): FilePart {
  const file = part.file;
  if (!isJsonObject(file)) throw badRequest(`${param}.file`, `'${param}.file' must be an object.`);
  const filename = typeof file.filename === 'string' ? file.filename : undefined;
  if (typeof file.file_data !== 'string') {
    if (typeof file.file_id === 'string') {
      throw badRequest(
        `${param}.file.file_id`,
        `'${param}.file.file_id' refers to a file stored with OpenAI, which this model's provider cannot read; send the file inline as 'file_data'.`,
      );
    }
    throw badRequest(`${param}.file.file_data`, `'${param}.file.file_data' is required.`);
  }
  // OpenAI documents a data URL; plain base64 is accepted too, typed by the file name.
  const source = file.file_data.startsWith('data:')
    ? mediaSourceFromUrl(file.file_data)
    : { kind: 'base64' as const, mediaType: mediaTypeFromFilename(filename), data: file.file_data };
  if (source === null) throw badRequest(`${param}.file.file_data`, `'${param}.file.file_data' must be base64 data or a base64 data URL.`);
  const decoded: FilePart = { type: 'file', source };
  if (filename !== undefined) decoded.filename = filename;
  return decoded;
}

/** One part of a user message's content array. */
export function decodeUserContentPart(part: JsonObject, param: string): UserContentPart {
  switch (part.type) {
    case 'text':
      return textOf(part, param);
    case 'image_url':
      return imageOf(part, param);
    case 'input_audio':
      return audioOf(part, param);
    case 'file':
      return fileOf(part, param);
    default:
      throw badRequest(`${param}.type`, `'${param}.type' ${JSON.stringify(part.type)} is not supported for this model.`);
  }
}

/**
 * Content that may hold only text (system, developer, tool messages; assistant messages also allow `refusal`
 * parts, read as text). A string is one text part.
 */
export function decodeTextContent(content: unknown, param: string, allowRefusal: boolean): TextPart[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw badRequest(param, `'${param}' must be a string or an array of text parts.`);
  return content.map((part: unknown, index) => {
    const partParam = `${param}[${index}]`;
    if (!isJsonObject(part)) throw badRequest(partParam, `'${partParam}' must be an object.`);
    if (part.type === 'text') return textOf(part, partParam);
    if (allowRefusal && part.type === 'refusal' && typeof part.refusal === 'string') return { type: 'text', text: part.refusal };
    throw badRequest(`${partParam}.type`, `'${partParam}.type' must be 'text' in this message.`);
  });
}
