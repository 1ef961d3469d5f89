import type { ChatRequest, HostedTool } from '../../ir/chat-request.js';
import type { TextPart } from '../../ir/message.js';
import { decodeContents } from './decode-contents.js';
import { decodeGenerationConfig } from './decode-generation-config.js';
import { decodeToolConfig, decodeTools } from './decode-tools.js';
import { bareModelName, camelCase, isJsonObject, readField, type JsonObject } from '../../wire/gemini/gemini-wire.js';
import { invalidArgument } from './invalid-argument.js';

/** Top-level fields of `GenerateContentRequest` the decoder maps itself. */
const MAPPED = new Set(['contents', 'systemInstruction', 'generationConfig', 'tools', 'toolConfig', 'model']);

/**
 * A Gemini `generateContent` / `streamGenerateContent` body → the canonical request. The model comes from the URL
 * (`hints.pathModel`, `models/` prefix allowed) and streaming from the endpoint (`hints.stream`); a `model` in the
 * body is ignored, as Google does. Fields without a canonical counterpart (safetySettings, cachedContent, built-in
 * tools, …) are kept in `extensions` with a warning, so the pass-through path can still forward them.
 */
export function decodeGeminiRequest(body: Record<string, unknown>, hints: { pathModel?: string; stream?: boolean }): ChatRequest {
  const pathModel = hints.pathModel === undefined ? '' : bareModelName(hints.pathModel).trim();
  if (pathModel === '') throw invalidArgument('model', 'The model is required in the URL: /v1beta/models/{model}:generateContent.');
  const extensions: JsonObject = {};
  const warnings: string[] = [];
  const messages = decodeContents(readField(body, 'contents'), warnings);
  const request: ChatRequest = {
    model: pathModel,
    system: decodeSystemInstruction(readField(body, 'systemInstruction'), warnings),
    messages,
    stream: hints.stream === true,
    ...decodeGenerationConfig(readField(body, 'generationConfig'), extensions, warnings),
    extensions,
    warnings,
  };
  const hosted: HostedTool[] = [];
  const dropped: string[] = [];
  const tools = decodeTools(readField(body, 'tools'), extensions, warnings, hosted, dropped);
  if (tools !== undefined) request.tools = tools;
  if (hosted.length > 0) request.hostedTools = hosted;
  if (dropped.length > 0) request.droppedHostedTools = dropped;
  const toolChoice = decodeToolConfig(readField(body, 'toolConfig'), extensions, warnings);
  if (toolChoice !== undefined) request.toolChoice = toolChoice;
  for (const [key, value] of Object.entries(body)) {
    const name = camelCase(key);
    if (MAPPED.has(name) || value === undefined || value === null) continue;
    extensions[name] = value;
    warnings.push(`${name} has no equivalent in translation and was not applied.`);
  }
  return request;
}

/** `systemInstruction` is a Content whose text parts form the system prompt; other parts are dropped with a warning. */
function decodeSystemInstruction(value: unknown, warnings: string[]): TextPart[] {
  if (value === undefined || value === null) return [];
  const param = 'systemInstruction';
  if (!isJsonObject(value)) throw invalidArgument(param, `'${param}' must be a Content object with parts.`);
  const parts = readField(value, 'parts');
  if (!Array.isArray(parts)) throw invalidArgument(`${param}.parts`, `'${param}.parts' must be an array of text parts.`);
  const system: TextPart[] = [];
  parts.forEach((part: unknown, index) => {
    const at = `${param}.parts[${index}]`;
    if (!isJsonObject(part)) throw invalidArgument(at, `'${at}' must be an object.`);
    const text = readField(part, 'text');
    if (text === undefined || text === null) {
      warnings.push(`${at}: only text parts of the system instruction are translated; the part was dropped.`);
      return;
    }
    if (typeof text !== 'string' || text === '') throw invalidArgument(`${at}.text`, `'${at}.text' must be a non-empty string.`);
    system.push({ type: 'text', text });
  });
  return system;
}
