import { badRequest } from '../codecs/openai-chat/bad-request.js';
import type { MultipartForm } from '../multipart/read-multipart-form.js';
import type { MultipartPart } from '../multipart/encode-multipart-body.js';
import { encodeMultipartBody } from '../multipart/encode-multipart-body.js';
import type { MediaBody } from '../upstreams/media-capabilities.js';

/** A required non-empty string (JSON or form field). */
export function requiredString(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw badRequest(name, `'${name}' is required and must be a non-empty string.`);
  return value;
}

/** An optional string from a fixed set. */
export function optionalChoice<T extends string>(value: unknown, name: string, choices: readonly T[]): T | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || !(choices as readonly string[]).includes(value)) throw badRequest(name, `'${name}' must be one of ${choices.map((choice) => `'${choice}'`).join(', ')}.`);
  return value as T;
}

/** An optional integer within bounds; form fields arrive as text and are read as numbers. */
export function optionalInteger(value: unknown, name: string, minimum: number, maximum: number): number | undefined {
  if (value === undefined || value === null) return undefined;
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isInteger(number) || number < minimum || number > maximum) {
    throw badRequest(name, `'${name}' must be an integer from ${minimum} to ${maximum}.`);
  }
  return number;
}

/** A form boolean (`true` / `false`, as the SDKs send it). */
export function formBoolean(value: string | undefined, name: string): boolean {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  throw badRequest(name, `'${name}' must be true or false.`);
}

/** The form as the upstream gets it: the same fields and files in the same order, `model` swapped. */
export function upstreamForm(form: MultipartForm, upstreamModel: string): MediaBody {
  const parts: MultipartPart[] = [];
  for (const field of form.fields) {
    if (field.name !== 'model') parts.push({ kind: 'field', name: field.name, value: field.value });
  }
  parts.unshift({ kind: 'field', name: 'model', value: upstreamModel });
  for (const file of form.files) parts.push({ kind: 'file', name: file.field, filename: file.filename, contentType: file.contentType, path: file.path, size: file.size });
  const body = encodeMultipartBody(parts);
  return { contentType: body.contentType, body };
}

/** A JSON body as the upstream gets it: the caller's, `model` swapped. */
export function upstreamJson(body: Record<string, unknown>, upstreamModel: string): MediaBody {
  return { contentType: 'application/json', body: JSON.stringify({ ...body, model: upstreamModel }) };
}
