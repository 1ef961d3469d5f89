import type { ImagePart, Message, ReasoningPart, TextPart, ToolCallPart, ToolResultPart, FilePart } from '../../ir/message.js';
import { ToolNamespaces } from './tool-namespaces.js';
import { mediaSourceFromUrl } from '../../wire/data-url.js';
import { decodeReasoningToken } from './reasoning-token.js';
import { restoreCarriedSignatures } from '../carried-signature.js';
import { badRequest, isJsonObject, type JsonObject } from './wire-values.js';

export interface DecodedInput {
  system: TextPart[];
  messages: Message[];
}

/** Item types that exist only as state or built-in tools on OpenAI's side. */
const OPENAI_ONLY_ITEMS = new Set([
  'item_reference', 'file_search_call', 'computer_call', 'computer_call_output', 'code_interpreter_call',
  'image_generation_call', 'local_shell_call', 'local_shell_call_output', 'mcp_call', 'mcp_list_tools', 'mcp_approval_request',
  'mcp_approval_response', 'custom_tool_call', 'custom_tool_call_output', 'shell_call', 'shell_call_output', 'apply_patch_call',
  'apply_patch_call_output', 'compaction', 'tool_search_call', 'tool_search_output',
]);

/** Accumulates canonical messages: assistant items of one turn join one message, consecutive tool outputs one `tool` message. */
class InputBuilder {
  readonly system: TextPart[] = [];
  readonly messages: Message[] = [];
  /** call_id → function name, so a function_call_output knows its tool (Gemini needs the name). */
  readonly #calls = new Map<string, string>();

  constructor(private readonly warnings: string[]) {}

  addUser(content: Array<TextPart | ImagePart | FilePart>): void {
    this.messages.push({ role: 'user', content });
  }

  addAssistant(part: TextPart | ReasoningPart | ToolCallPart): void {
    if (part.type === 'tool-call') this.#calls.set(part.id, part.name);
    const last = this.messages.at(-1);
    if (last?.role === 'assistant') last.content.push(part);
    else this.messages.push({ role: 'assistant', content: [part] });
  }

  addToolResult(result: ToolResultPart): void {
    const last = this.messages.at(-1);
    if (last?.role === 'tool') last.content.push(result);
    else this.messages.push({ role: 'tool', content: [result] });
  }

  toolName(callId: string): string | undefined {
    return this.#calls.get(callId);
  }

  warn(message: string): void {
    if (!this.warnings.includes(message)) this.warnings.push(message);
  }
}

function textOf(part: JsonObject, param: string): TextPart {
  if (typeof part.text !== 'string') throw badRequest(`${param}.text`, `'${param}.text' must be a string.`);
  return { type: 'text', text: part.text };
}

function imageOf(part: JsonObject, param: string): ImagePart {
  if (typeof part.image_url !== 'string') {
    if (typeof part.file_id === 'string') {
      throw badRequest(`${param}.file_id`, `'${param}.file_id' refers to a file stored with OpenAI, which this model's provider cannot read; send the image as 'image_url'.`);
    }
    throw badRequest(`${param}.image_url`, `'${param}.image_url' is required.`);
  }
  const source = mediaSourceFromUrl(part.image_url);
  if (source === null) throw badRequest(`${param}.image_url`, `'${param}.image_url' must be an http(s) URL or a base64 data URL.`);
  const image: ImagePart = { type: 'image', source };
  if (part.detail === 'auto' || part.detail === 'low' || part.detail === 'high') image.detail = part.detail;
  return image;
}

function fileOf(part: JsonObject, param: string): FilePart {
  const filename = typeof part.filename === 'string' ? part.filename : undefined;
  let file: FilePart;
  if (typeof part.file_data === 'string') {
    const source = part.file_data.startsWith('data:')
      ? mediaSourceFromUrl(part.file_data)
      : { kind: 'base64' as const, mediaType: filename?.toLowerCase().endsWith('.pdf') === false ? 'application/octet-stream' : 'application/pdf', data: part.file_data };
    if (source === null) throw badRequest(`${param}.file_data`, `'${param}.file_data' must be base64 data or a base64 data URL.`);
    file = { type: 'file', source };
  } else if (typeof part.file_url === 'string') {
    file = { type: 'file', source: { kind: 'url', url: part.file_url } };
  } else if (typeof part.file_id === 'string') {
    throw badRequest(`${param}.file_id`, `'${param}.file_id' refers to a file stored with OpenAI, which this model's provider cannot read; send the file as 'file_data'.`);
  } else {
    throw badRequest(`${param}.file_data`, `'${param}.file_data' or '${param}.file_url' is required.`);
  }
  if (filename !== undefined) file.filename = filename;
  return file;
}

function partsOf(content: unknown, param: string): JsonObject[] {
  if (!Array.isArray(content)) throw badRequest(param, `'${param}' must be a string or an array of content parts.`);
  return content.map((part: unknown, index) => {
    if (!isJsonObject(part)) throw badRequest(`${param}[${index}]`, `'${param}[${index}]' must be an object.`);
    return part;
  });
}

function userContent(content: unknown, param: string): Array<TextPart | ImagePart | FilePart> {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return partsOf(content, param).map((part, index) => {
    const partParam = `${param}[${index}]`;
    switch (part.type) {
      case 'input_text':
        return textOf(part, partParam);
      case 'input_image':
        return imageOf(part, partParam);
      case 'input_file':
        return fileOf(part, partParam);
      default:
        throw badRequest(`${partParam}.type`, `'${partParam}.type' ${JSON.stringify(part.type)} is not supported for this model.`);
    }
  });
}

/** System, developer and assistant content: text only (`refusal` is read as text on assistant turns). */
function textContent(content: unknown, param: string, assistant: boolean): TextPart[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  return partsOf(content, param).map((part, index) => {
    const partParam = `${param}[${index}]`;
    if (part.type === 'input_text' || (assistant && part.type === 'output_text')) return textOf(part, partParam);
    if (assistant && part.type === 'refusal' && typeof part.refusal === 'string') return { type: 'text', text: part.refusal };
    throw badRequest(`${partParam}.type`, `'${partParam}.type' ${JSON.stringify(part.type)} is not allowed in this message.`);
  });
}

function decodeMessage(item: JsonObject, param: string, builder: InputBuilder): void {
  switch (item.role) {
    case 'system':
    case 'developer':
      builder.system.push(...textContent(item.content, `${param}.content`, false));
      return;
    case 'user':
      builder.addUser(userContent(item.content, `${param}.content`));
      return;
    case 'assistant':
      // Empty text carries nothing, and some upstreams (Anthropic) reject empty text blocks.
      for (const part of textContent(item.content, `${param}.content`, true)) if (part.text !== '') builder.addAssistant(part);
      return;
    default:
      throw badRequest(`${param}.role`, `'${param}.role' must be one of user, assistant, system, developer.`);
  }
}

function decodeFunctionCall(item: JsonObject, param: string, builder: InputBuilder, namespaces: ToolNamespaces): void {
  if (typeof item.call_id !== 'string' || item.call_id === '') throw badRequest(`${param}.call_id`, `'${param}.call_id' is required.`);
  if (typeof item.name !== 'string' || item.name === '') throw badRequest(`${param}.name`, `'${param}.name' is required.`);
  if (typeof item.arguments !== 'string') throw badRequest(`${param}.arguments`, `'${param}.arguments' must be a string of JSON.`);
  const name = typeof item.namespace === 'string' && item.namespace !== '' ? namespaces.flat(item.namespace, item.name) : item.name;
  builder.addAssistant({ type: 'tool-call', id: item.call_id, name, argumentsJson: item.arguments });
}

function decodeFunctionCallOutput(item: JsonObject, param: string, builder: InputBuilder): void {
  const callId = item.call_id;
  if (typeof callId !== 'string' || callId === '') throw badRequest(`${param}.call_id`, `'${param}.call_id' is required.`);
  const toolName = builder.toolName(callId);
  if (toolName === undefined) {
    throw badRequest(`${param}.call_id`, `No function_call item with call_id ${JSON.stringify(callId)} precedes '${param}' in 'input'. Without stored responses on this model, send the whole conversation.`);
  }
  let content: Array<TextPart | ImagePart>;
  if (typeof item.output === 'string') content = [{ type: 'text', text: item.output }];
  else {
    content = partsOf(item.output, `${param}.output`).map((part, index) => {
      const partParam = `${param}.output[${index}]`;
      if (part.type === 'input_text') return textOf(part, partParam);
      if (part.type === 'input_image') return imageOf(part, partParam);
      throw badRequest(`${partParam}.type`, `'${partParam}.type' ${JSON.stringify(part.type)} is not supported in a function output for this model.`);
    });
  }
  builder.addToolResult({ type: 'tool-result', toolCallId: callId, toolName, content });
}

function textsOf(item: JsonObject, field: 'summary' | 'content', type: string, param: string): string[] {
  const raw = item[field];
  if (raw === undefined || raw === null) return [];
  return partsOf(raw, `${param}.${field}`).map((part, index) => {
    if (part.type !== type || typeof part.text !== 'string') {
      throw badRequest(`${param}.${field}[${index}]`, `'${param}.${field}[${index}]' must be a ${type} part.`);
    }
    return part.text;
  });
}

/** Raw reasoning text when given (what the model thought), else the summaries that describe it. */
function reasoningText(item: JsonObject, param: string): string {
  const summary = textsOf(item, 'summary', 'summary_text', param);
  const content = textsOf(item, 'content', 'reasoning_text', param);
  return (content.length > 0 ? content : summary).join('\n\n');
}

function decodeReasoning(item: JsonObject, param: string, builder: InputBuilder): void {
  const part: ReasoningPart = { type: 'reasoning', text: reasoningText(item, param) };
  if (typeof item.encrypted_content === 'string') {
    const state = decodeReasoningToken(item.encrypted_content);
    if (state === null) builder.warn("reasoning 'encrypted_content' produced by another provider cannot be read by this model's provider and was dropped.");
    else Object.assign(part, state);
  }
  if (part.text === '' && part.signature === undefined && part.redactedData === undefined) return;
  builder.addAssistant(part);
}

/**
 * The Responses `input` (a string, or items: messages, function calls and their outputs, reasoning) plus
 * `instructions` → canonical system prompt and conversation.
 */
export function decodeResponsesInput(input: unknown, instructions: string | undefined, warnings: string[], namespaces: ToolNamespaces = new ToolNamespaces(undefined)): DecodedInput {
  const builder = new InputBuilder(warnings);
  if (instructions !== undefined && instructions !== '') builder.system.push({ type: 'text', text: instructions });
  if (typeof input === 'string') {
    builder.addUser([{ type: 'text', text: input }]);
    return { system: builder.system, messages: builder.messages };
  }
  if (!Array.isArray(input)) throw badRequest('input', "'input' must be a string or an array of input items.");
  input.forEach((raw: unknown, index) => {
    const param = `input[${index}]`;
    if (!isJsonObject(raw)) throw badRequest(param, `'${param}' must be an object.`);
    const type = raw.type ?? (typeof raw.role === 'string' ? 'message' : undefined);
    switch (type) {
      case 'message':
        decodeMessage(raw, param, builder);
        break;
      case 'function_call':
        decodeFunctionCall(raw, param, builder, namespaces);
        break;
      case 'function_call_output':
        decodeFunctionCallOutput(raw, param, builder);
        break;
      case 'reasoning':
        decodeReasoning(raw, param, builder);
        break;
      case 'web_search_call':
        // A search of an earlier turn: the answer built on it follows as text; providers take back only their own.
        break;
      default:
        if (typeof type === 'string' && OPENAI_ONLY_ITEMS.has(type)) {
          throw badRequest(`${param}.type`, `'${param}.type' ${JSON.stringify(type)} needs an OpenAI channel (stored items and built-in tools); this model is served by another provider.`);
        }
        throw badRequest(`${param}.type`, `'${param}.type' ${JSON.stringify(type)} is not a supported input item.`);
    }
  });
  const messages = builder.messages.map((message) => (message.role === 'assistant' ? { ...message, content: restoreCarriedSignatures(message.content) } : message));
  return { system: builder.system, messages };
}

export { OPENAI_ONLY_ITEMS };
