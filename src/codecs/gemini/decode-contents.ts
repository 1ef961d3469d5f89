import type { ContentPart, FilePart, ImagePart, MediaSource, Message, TextPart, ToolResultPart } from '../../ir/message.js';
import { isJsonObject, readField, type JsonObject } from '../../wire/gemini/gemini-wire.js';
import { invalidArgument } from './invalid-argument.js';
import { newToolCallId } from './tool-call-id.js';

/** The `data` oneof of a Gemini part: exactly one of these is set. */
const DATA_FIELDS = [
  'text',
  'inlineData',
  'fileData',
  'functionCall',
  'functionResponse',
  'executableCode',
  'codeExecutionResult',
  'toolCall',
  'toolResponse',
] as const;
type DataField = (typeof DATA_FIELDS)[number];

/** Part metadata the canonical form has no place for; dropped with a warning. */
const UNMAPPED_METADATA = ['videoMetadata', 'mediaResolution', 'partMetadata'] as const;

interface CallRecord {
  id: string;
  name: string;
  answered: boolean;
}

type Role = 'user' | 'model';

/**
 * Gemini `contents` → canonical messages. `model` turns become assistant messages; a `user` turn is split into
 * `tool` messages (its functionResponse parts) and `user` messages (everything else), keeping the order. Function
 * calls without an id get one, and each functionResponse takes the id of its call (by id, else the first
 * unanswered call with the same name).
 */
export function decodeContents(contents: unknown, warnings: string[]): Message[] {
  if (!Array.isArray(contents) || contents.length === 0) {
    throw invalidArgument('contents', "'contents' is required and must be a non-empty array of {role, parts}.");
  }
  const calls: CallRecord[] = [];
  const messages: Message[] = [];
  contents.forEach((content: unknown, index) => {
    const param = `contents[${index}]`;
    if (!isJsonObject(content)) throw invalidArgument(param, `'${param}' must be an object with 'role' and 'parts'.`);
    const role = decodeRole(readField(content, 'role'), param);
    const parts = readField(content, 'parts');
    if (!Array.isArray(parts) || parts.length === 0) {
      throw invalidArgument(`${param}.parts`, `'${param}.parts' must be a non-empty array of parts.`);
    }
    parts.forEach((part: unknown, partIndex) => {
      const decoded = decodePart(part, role, `${param}.parts[${partIndex}]`, calls, warnings);
      if (decoded !== null) append(messages, messageRole(role, decoded), decoded, index);
    });
  });
  return messages.map(({ role, content }) => ({ role, content }));
}

function decodeRole(value: unknown, param: string): Role {
  if (value === undefined || value === null || value === '') return 'user';
  if (value === 'user' || value === 'model') return value;
  throw invalidArgument(`${param}.role`, 'Please use a valid role: user, model.');
}

function messageRole(role: Role, part: ContentPart): Message['role'] {
  if (role === 'model') return 'assistant';
  return part.type === 'tool-result' ? 'tool' : 'user';
}

/** Appends to the last message when it has the same role and comes from the same content, else starts one. */
function append(messages: Array<Message & { source?: number }>, role: Message['role'], part: ContentPart, source: number): void {
  const last = messages[messages.length - 1];
  if (last !== undefined && last.role === role && last.source === source) last.content.push(part);
  else messages.push({ role, content: [part], source });
}

function dataFieldOf(part: JsonObject, param: string): DataField | null {
  const present = DATA_FIELDS.filter((field) => {
    const value = readField(part, field);
    return value !== undefined && value !== null && !(field === 'text' && value === '');
  });
  if (present.length > 1) {
    throw invalidArgument(param, `'${param}' sets ${present.join(' and ')}; a part carries exactly one kind of data.`);
  }
  return present[0] ?? null;
}

function decodePart(part: unknown, role: Role, param: string, calls: CallRecord[], warnings: string[]): ContentPart | null {
  if (!isJsonObject(part)) throw invalidArgument(param, `'${param}' must be an object.`);
  const signature = optionalString(readField(part, 'thoughtSignature'), `${param}.thoughtSignature`);
  for (const name of UNMAPPED_METADATA) {
    if (readField(part, name) !== undefined) warnings.push(`${param}.${name} is not supported in translation and was dropped.`);
  }
  const field = dataFieldOf(part, param);
  if (field === null) {
    // An empty text part is only meaningful as the carrier of a signature (Gemini streams end with one).
    if (readField(part, 'text') === '' && signature !== undefined) return decodeText(part, role, param, signature);
    throw invalidArgument(param, `'${param}' carries no data: text must not be empty, or set inlineData, fileData, functionCall or functionResponse.`);
  }
  switch (field) {
    case 'text':
      return decodeText(part, role, param, signature);
    case 'inlineData':
      return decodeInlineData(readField(part, field), `${param}.inlineData`);
    case 'fileData':
      return decodeFileData(readField(part, field), `${param}.fileData`);
    case 'functionCall':
      if (role !== 'model') throw invalidArgument(`${param}.functionCall`, `'${param}.functionCall' is only valid in a model turn.`);
      return decodeFunctionCall(readField(part, field), `${param}.functionCall`, signature, calls);
    case 'functionResponse':
      if (role !== 'user') throw invalidArgument(`${param}.functionResponse`, `'${param}.functionResponse' is only valid in a user turn.`);
      return decodeFunctionResponse(readField(part, field), `${param}.functionResponse`, calls);
    case 'executableCode':
    case 'codeExecutionResult':
    case 'toolCall':
    case 'toolResponse':
      warnings.push(`${param}: ${field} parts (built-in tools) are not supported in translation and were dropped.`);
      return null;
    default: {
      const unknown: never = field;
      throw new Error(`unhandled part field ${String(unknown)}`);
    }
  }
}

function decodeText(part: JsonObject, role: Role, param: string, signature: string | undefined): ContentPart {
  const text = readField(part, 'text');
  if (typeof text !== 'string') throw invalidArgument(`${param}.text`, `'${param}.text' must be a string.`);
  const thought = readField(part, 'thought');
  if (thought !== undefined && typeof thought !== 'boolean') throw invalidArgument(`${param}.thought`, `'${param}.thought' must be a boolean.`);
  if (thought === true && role === 'model') {
    return signature === undefined ? { type: 'reasoning', text } : { type: 'reasoning', text, signature };
  }
  return withSignature({ type: 'text', text }, signature);
}

function withSignature(part: TextPart, signature: string | undefined): TextPart {
  return signature === undefined ? part : { ...part, signature };
}

function mediaPart(mimeType: string | undefined, source: MediaSource): ImagePart | FilePart {
  return mimeType !== undefined && mimeType.startsWith('image/') ? { type: 'image', source } : { type: 'file', source };
}

function decodeInlineData(value: unknown, param: string): ImagePart | FilePart {
  if (!isJsonObject(value)) throw invalidArgument(param, `'${param}' must be an object with mimeType and data.`);
  const mimeType = readField(value, 'mimeType');
  const data = readField(value, 'data');
  if (typeof mimeType !== 'string' || mimeType === '') throw invalidArgument(`${param}.mimeType`, `'${param}.mimeType' is required.`);
  if (typeof data !== 'string' || data === '') throw invalidArgument(`${param}.data`, `'${param}.data' must be non-empty base64.`);
  return mediaPart(mimeType, { kind: 'base64', mediaType: mimeType, data });
}

function decodeFileData(value: unknown, param: string): ImagePart | FilePart {
  if (!isJsonObject(value)) throw invalidArgument(param, `'${param}' must be an object with fileUri.`);
  const fileUri = readField(value, 'fileUri');
  if (typeof fileUri !== 'string' || fileUri === '') throw invalidArgument(`${param}.fileUri`, `'${param}.fileUri' is required.`);
  const mimeType = optionalString(readField(value, 'mimeType'), `${param}.mimeType`);
  return mediaPart(mimeType, mimeType === undefined ? { kind: 'url', url: fileUri } : { kind: 'url', url: fileUri, mediaType: mimeType });
}

function decodeFunctionCall(value: unknown, param: string, signature: string | undefined, calls: CallRecord[]): ContentPart {
  if (!isJsonObject(value)) throw invalidArgument(param, `'${param}' must be an object with name and args.`);
  const name = readField(value, 'name');
  if (typeof name !== 'string' || name === '') throw invalidArgument(`${param}.name`, `'${param}.name' is required.`);
  const args = readField(value, 'args') ?? {};
  if (!isJsonObject(args)) throw invalidArgument(`${param}.args`, `'${param}.args' must be a JSON object.`);
  const id = optionalString(readField(value, 'id'), `${param}.id`) || newToolCallId();
  calls.push({ id, name, answered: false });
  const part = { type: 'tool-call' as const, id, name, argumentsJson: JSON.stringify(args) };
  return signature === undefined ? part : { ...part, signature };
}

function decodeFunctionResponse(value: unknown, param: string, calls: CallRecord[]): ToolResultPart {
  if (!isJsonObject(value)) throw invalidArgument(param, `'${param}' must be an object with name and response.`);
  const name = readField(value, 'name');
  if (typeof name !== 'string' || name === '') throw invalidArgument(`${param}.name`, `'${param}.name' is required.`);
  const response = readField(value, 'response') ?? {};
  if (!isJsonObject(response)) throw invalidArgument(`${param}.response`, `'${param}.response' must be a JSON object.`);
  const id = optionalString(readField(value, 'id'), `${param}.id`);
  const call = (id !== undefined ? calls.find((candidate) => candidate.id === id) : undefined)
    ?? calls.find((candidate) => !candidate.answered && candidate.name === name);
  if (call !== undefined) call.answered = true;
  const result = toolResultContent(response);
  const content: ToolResultPart['content'] = [{ type: 'text', text: result.text }, ...responseImages(readField(value, 'parts'), `${param}.parts`)];
  const part: ToolResultPart = { type: 'tool-result', toolCallId: call?.id ?? id ?? newToolCallId(), toolName: name, content };
  return result.isError ? { ...part, isError: true } : part;
}

/**
 * Google's convention: `{output: …}` is the function's output and `{error: …}` its failure; any other object is
 * the output as a whole. A string output becomes the text as it is, anything else its JSON.
 */
function toolResultContent(response: JsonObject): { text: string; isError: boolean } {
  const keys = Object.keys(response);
  const only = keys.length === 1 ? keys[0] : undefined;
  if (only === 'output' || only === 'error') {
    const value = response[only];
    return { text: typeof value === 'string' ? value : JSON.stringify(value), isError: only === 'error' };
  }
  return { text: JSON.stringify(response), isError: false };
}

/** Multimodal function responses (`functionResponse.parts[].inlineData`, Gemini 3) → images of the result. */
function responseImages(parts: unknown, param: string): ImagePart[] {
  if (parts === undefined || parts === null) return [];
  if (!Array.isArray(parts)) throw invalidArgument(param, `'${param}' must be an array.`);
  return parts.flatMap((part: unknown, index) => {
    const inline = isJsonObject(part) ? readField(part, 'inlineData') : undefined;
    if (inline === undefined) throw invalidArgument(`${param}[${index}]`, `'${param}[${index}]' must carry inlineData.`);
    const media = decodeInlineData(inline, `${param}[${index}].inlineData`);
    return media.type === 'image' ? [media] : [];
  });
}

function optionalString(value: unknown, param: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalidArgument(param, `'${param}' must be a string.`);
  return value;
}
