import type { ChatRequest } from '../../ir/chat-request.js';
import type { ContentPart, MediaSource, Message, ToolResultPart } from '../../ir/message.js';
import { hoistSystemMessages } from '../hoist-system-messages.js';
import { isJsonObject, parseJson, type GeminiContent, type GeminiPart, type JsonObject } from '../../wire/gemini/gemini-wire.js';

/**
 * Google's documented stand-in for a missing thought signature: Gemini 3 rejects a function call of the current
 * turn without one ("Function call is missing a thought_signature in functionCall parts"), which happens whenever
 * the history was produced by another provider or a client that dropped the signatures.
 */
export const DUMMY_THOUGHT_SIGNATURE = 'skip_thought_signature_validator';

const DATA_URL = /^data:([^;,]*)(?:;[^;,]*)*;base64,(.*)$/s;

export interface BuiltContents {
  contents: GeminiContent[];
  systemInstruction?: { parts: GeminiPart[] };
}

/**
 * Canonical system + messages → Gemini `systemInstruction` + `contents`: assistant turns become `model`, tool
 * results become functionResponse parts of a `user` turn, consecutive turns of one role are merged, empty text
 * parts are dropped (Gemini rejects them) unless they carry a signature, and signatures go back on the parts
 * they came with.
 */
export function buildContents(original: ChatRequest, options: { dummySignatures: boolean }, warnings: string[]): BuiltContents {
  // Gemini has no positional system message: instructions given mid-conversation join systemInstruction.
  const request = hoistSystemMessages(original);
  const toolNames = new Map<string, string>();
  const contents: GeminiContent[] = [];
  const notes = new Set<string>();
  for (const message of request.messages) {
    const role = message.role === 'assistant' ? 'model' : 'user';
    const parts = message.content.flatMap((part) => encodePart(part, message, toolNames, notes));
    if (parts.length === 0) continue;
    const last = contents[contents.length - 1];
    if (last !== undefined && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  }
  if (options.dummySignatures && addDummySignatures(contents)) {
    notes.add('function calls without a thought signature were sent with Gemini\'s placeholder signature.');
  }
  const system = request.system.filter((part) => part.text !== '').map((part) => ({ text: part.text }));
  if (contents.length === 0 && system.length > 0) {
    // Gemini needs at least one content; a request that is only a system prompt (valid for OpenAI) becomes a user turn.
    notes.add('the request had only a system prompt; it was sent to Gemini as the user turn.');
    warnings.push(...notes);
    return { contents: [{ role: 'user', parts: system }] };
  }
  warnings.push(...notes);
  return system.length === 0 ? { contents } : { contents, systemInstruction: { parts: system } };
}

function encodePart(part: ContentPart, message: Message, toolNames: Map<string, string>, notes: Set<string>): GeminiPart[] {
  switch (part.type) {
    case 'text':
      if (part.text === '' && part.signature === undefined) return [];
      return [signed({ text: part.text }, part.signature)];
    case 'reasoning':
      if (part.redactedData !== undefined) {
        notes.add('redacted thinking blocks have no Gemini equivalent and were dropped.');
        return [];
      }
      if (part.text === '' && part.signature === undefined) return [];
      return [signed({ text: part.text, thought: true }, part.signature)];
    case 'tool-call':
      toolNames.set(part.id, part.name);
      return [signed({ functionCall: { id: part.id, name: part.name, args: argumentsObject(part.argumentsJson) } }, part.signature)];
    case 'tool-result':
      return functionResponse(part, toolNames, notes);
    case 'image':
      if (part.detail !== undefined && part.detail !== 'auto') notes.add(`image detail '${part.detail}' has no Gemini equivalent and was not applied.`);
      return [media(part.source, notes)];
    case 'file':
      if (part.filename !== undefined) notes.add('file names have no Gemini equivalent and were not sent.');
      return [media(part.source, notes)];
    case 'web-search':
      // A search of an earlier turn: the answer text stays, the search itself is the upstream's own business.
      return [];
    default: {
      const unknown: never = part;
      throw new Error(`unknown content part in a ${message.role} message: ${JSON.stringify(unknown)}`);
    }
  }
}

function signed(part: GeminiPart, signature: string | undefined): GeminiPart {
  return signature === undefined ? part : { ...part, thoughtSignature: signature };
}

function argumentsObject(argumentsJson: string): JsonObject {
  const parsed = argumentsJson.trim() === '' ? {} : parseJson(argumentsJson);
  return isJsonObject(parsed) ? parsed : {};
}

/**
 * A tool result → a functionResponse part. Gemini wants `response` to be an object: text that is a JSON object is
 * sent as that object, anything else as `{output: text}` (Google's convention; `{error: text}` for a failed call).
 * An object that itself is just `{output}` or `{error}` is wrapped in `output`, so it reads back unchanged. Images
 * of the result follow the functionResponse as inlineData parts of the same user turn.
 */
/** JSON text whose first token is `{` (JSON's whitespace is space, tab, line feed and carriage return). */
const OPENS_OBJECT = /^[ \t\n\r]*\{/;

function functionResponse(part: ToolResultPart, toolNames: Map<string, string>, notes: Set<string>): GeminiPart[] {
  const text = part.content.flatMap((item) => (item.type === 'text' ? [item.text] : [])).join('');
  // Only text that opens an object can parse to one (the rest would throw or give another value: not parsed).
  const parsed = OPENS_OBJECT.test(text) ? parseJson(text) : undefined;
  let response: JsonObject;
  if (part.isError === true) response = { error: isJsonObject(parsed) ? parsed : text };
  else if (isJsonObject(parsed)) response = isConventionEnvelope(parsed) ? { output: parsed } : parsed;
  else response = { output: text };
  const name = part.toolName !== '' ? part.toolName : toolNames.get(part.toolCallId) ?? 'unknown_function';
  const images = part.content.flatMap((item) => (item.type === 'image' ? [media(item.source, notes)] : []));
  return [{ functionResponse: { id: part.toolCallId, name, response } }, ...images];
}

function isConventionEnvelope(object: JsonObject): boolean {
  const keys = Object.keys(object);
  return keys.length === 1 && (keys[0] === 'output' || keys[0] === 'error');
}

function media(source: MediaSource, notes: Set<string>): GeminiPart {
  if (source.kind === 'base64') return { inlineData: { mimeType: source.mediaType, data: source.data } };
  const inline = DATA_URL.exec(source.url);
  if (inline !== null) return { inlineData: { mimeType: inline[1] || 'application/octet-stream', data: inline[2] ?? '' } };
  notes.add('media URLs were sent as fileData; the Gemini API fetches only Files API, YouTube and some public URLs.');
  const mimeType = source.mediaType ?? mimeTypeFromUrl(source.url);
  return { fileData: mimeType === undefined ? { fileUri: source.url } : { mimeType, fileUri: source.url } };
}

const EXTENSIONS: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  heic: 'image/heic',
  pdf: 'application/pdf',
  mp3: 'audio/mp3',
  wav: 'audio/wav',
  mp4: 'video/mp4',
  txt: 'text/plain',
};

function mimeTypeFromUrl(url: string): string | undefined {
  const match = /\.([a-z0-9]+)(?:[?#].*)?$/i.exec(url);
  return match === null ? undefined : EXTENSIONS[(match[1] as string).toLowerCase()];
}

/** Puts the placeholder signature on the first function call of each model turn that has none. */
function addDummySignatures(contents: GeminiContent[]): boolean {
  let added = false;
  for (const content of contents) {
    if (content.role !== 'model') continue;
    const first = content.parts.find((part) => part.functionCall !== undefined);
    if (first === undefined || first.thoughtSignature !== undefined) continue;
    first.thoughtSignature = DUMMY_THOUGHT_SIGNATURE;
    added = true;
  }
  return added;
}
