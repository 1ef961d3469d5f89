/** The Gemini API wire as the upstream adapter writes and reads it (v1beta `GenerateContentRequest` / response). */

import { isJsonObject, type JsonObject } from '../../wire/json-object.js';

export { isJsonObject, type JsonObject };

export interface GeminiPart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  inlineData?: { mimeType: string; data: string };
  fileData?: { mimeType?: string; fileUri: string };
  functionCall?: { id?: string; name: string; args: JsonObject };
  functionResponse?: { id?: string; name: string; response: JsonObject };
}

export interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

/** A proto3 JSON field by its camelCase name, accepting the snake_case spelling too (client bodies may use it). */
export function readField(object: JsonObject, name: string): unknown {
  const value = object[name];
  if (value !== undefined) return value;
  return object[name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)];
}

/** Parses JSON text, or returns undefined. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
