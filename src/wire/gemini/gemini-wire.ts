/**
 * The Gemini API wire (`generativelanguage.googleapis.com`, v1beta; https://ai.google.dev/api/generate-content): the
 * `GenerateContentRequest` the upstream adapter writes and the client codec reads, and the response the codec writes
 * and the adapter reads. Google's JSON is proto3 JSON, so every field may arrive in lowerCamelCase (what the SDKs
 * send) or in its original snake_case (what Google's own curl examples send): readers accept both.
 */

import { isJsonObject, type JsonObject } from '../json-object.js';

export { isJsonObject, type JsonObject };

/** `maxOutputTokens` → `max_output_tokens`. */
export function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

/** `max_output_tokens` → `maxOutputTokens` (a name already in camelCase is returned unchanged). */
export function camelCase(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_match, letter: string) => letter.toUpperCase());
}

/** A proto3 JSON field by its camelCase name, accepting the snake_case spelling too. */
export function readField(object: JsonObject, name: string): unknown {
  const value = object[name];
  if (value !== undefined) return value;
  return object[snakeCase(name)];
}

/** Parses JSON text, or returns undefined. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export interface GeminiInlineData {
  mimeType: string;
  data: string;
}

export interface GeminiFileData {
  mimeType?: string;
  fileUri: string;
}

export interface GeminiFunctionCall {
  id?: string;
  name: string;
  args: JsonObject;
}

/** One part as the gateway writes it: exactly one data field plus the optional `thought` flag and signature. */
export interface GeminiPart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  inlineData?: GeminiInlineData;
  fileData?: GeminiFileData;
  functionCall?: GeminiFunctionCall;
  functionResponse?: { id?: string; name: string; response: JsonObject };
}

export interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

export interface GeminiUsageMetadata {
  promptTokenCount: number;
  candidatesTokenCount?: number;
  totalTokenCount: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
}

export interface GeminiCandidate {
  content?: { parts?: GeminiPart[]; role: 'model' };
  finishReason?: string;
  index: number;
}

/** `GenerateContentResponse`: one non-streaming answer, or one chunk of a stream. */
export interface GeminiGenerateContentResponse {
  candidates: GeminiCandidate[];
  usageMetadata?: GeminiUsageMetadata;
  modelVersion: string;
  responseId: string;
}

/** Drops a leading `models/` (the SDKs send `models/gemini-2.5-flash` in bodies; URLs carry the bare id). */
export function bareModelName(model: string): string {
  return model.startsWith('models/') ? model.slice('models/'.length) : model;
}
