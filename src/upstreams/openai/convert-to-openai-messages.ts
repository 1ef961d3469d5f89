import type {
  ChatCompletionContentPart,
  ChatCompletionMessageFunctionToolCall,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import { dataUrl } from '../../wire/data-url.js';
import type { ChatRequest } from '../../ir/chat-request.js';
import type { ContentPart, FilePart, ImagePart, TextPart, ToolResultPart } from '../../ir/message.js';

/** Adds a warning once (a request may be built several times when the relay retries on other channels). */
export function warn(warnings: string[], warning: string): void {
  if (!warnings.includes(warning)) warnings.push(warning);
}

const WAV_TYPES = new Set(['audio/wav', 'audio/x-wav', 'audio/wave', 'audio/vnd.wave']);
const MP3_TYPES = new Set(['audio/mpeg', 'audio/mp3']);

function imagePart(image: ImagePart): ChatCompletionContentPart {
  const url = image.source.kind === 'base64' ? dataUrl(image.source.mediaType, image.source.data) : image.source.url;
  return { type: 'image_url', image_url: image.detail === undefined ? { url } : { url, detail: image.detail } };
}

/** A file → `input_audio` (wav, mp3), `image_url` (images), text (text documents) or an inline PDF `file`; null when OpenAI cannot take it. */
function filePart(file: FilePart, warnings: string[]): ChatCompletionContentPart | null {
  const source = file.source;
  const mediaType = (source.mediaType ?? '').toLowerCase();
  if (mediaType.startsWith('image/')) return imagePart({ type: 'image', source });
  if (source.kind === 'url') {
    warn(warnings, 'A file given by URL was dropped: OpenAI chat completions take files only inline.');
    return null;
  }
  if (mediaType.startsWith('audio/')) {
    const format = WAV_TYPES.has(mediaType) ? 'wav' : MP3_TYPES.has(mediaType) ? 'mp3' : null;
    if (format !== null) return { type: 'input_audio', input_audio: { data: source.data, format } };
    warn(warnings, `Audio of type ${mediaType} was dropped: OpenAI chat completions take wav and mp3 audio only.`);
    return null;
  }
  if (mediaType.startsWith('text/') || mediaType === 'application/json') {
    // Plain-text documents (Anthropic's text sources) are read as text: OpenAI's file parts take PDFs.
    return { type: 'text', text: Buffer.from(source.data, 'base64').toString('utf8') };
  }
  if (mediaType !== 'application/pdf') {
    warn(warnings, `A file of type ${mediaType || 'unknown'} was dropped: OpenAI chat completions take PDF files, images, text and wav/mp3 audio.`);
    return null;
  }
  return { type: 'file', file: { file_data: dataUrl(source.mediaType, source.data), filename: file.filename ?? 'document.pdf' } };
}

function joinText(parts: readonly ContentPart[]): string {
  let text = '';
  for (const part of parts) if (part.type === 'text') text += part.text;
  return text;
}

function userMessage(parts: readonly ContentPart[], warnings: string[]): ChatCompletionMessageParam | null {
  const wire: ChatCompletionContentPart[] = [];
  for (const part of parts) {
    if (part.type === 'text') wire.push({ type: 'text', text: part.text });
    else if (part.type === 'image') wire.push(imagePart(part));
    else if (part.type === 'file') {
      const converted = filePart(part, warnings);
      if (converted !== null) wire.push(converted);
    }
    // reasoning and tool calls never belong to a user turn; tool results are sent as tool messages
  }
  if (wire.length === 0) return parts.some((part) => part.type === 'tool-result') ? null : { role: 'user', content: '' };
  const only = wire[0];
  if (wire.length === 1 && only?.type === 'text') return { role: 'user', content: only.text };
  return { role: 'user', content: wire };
}

/** Reasoning from earlier turns is not sent: OpenAI's chat wire has no input field for it (nor for signatures). */
function assistantMessage(parts: readonly ContentPart[], warnings: string[]): ChatCompletionMessageParam {
  const toolCalls: ChatCompletionMessageFunctionToolCall[] = [];
  for (const part of parts) {
    if (part.type === 'tool-call') {
      toolCalls.push({ id: part.id, type: 'function', function: { name: part.name, arguments: part.argumentsJson === '' ? '{}' : part.argumentsJson } });
    } else if (part.type === 'image' || part.type === 'file') {
      warn(warnings, 'Images and files in assistant turns were dropped: OpenAI assistant messages hold only text and tool calls.');
    }
  }
  const text = joinText(parts);
  if (toolCalls.length === 0) return { role: 'assistant', content: text };
  return { role: 'assistant', content: text === '' ? null : text, tool_calls: toolCalls };
}

/** Appends tool messages for the results; returns the images they held (OpenAI tool messages hold only text). */
function addToolResults(results: readonly ToolResultPart[], out: ChatCompletionMessageParam[], warnings: string[]): Array<TextPart | ImagePart> {
  const images: Array<TextPart | ImagePart> = [];
  for (const result of results) {
    out.push({ role: 'tool', tool_call_id: result.toolCallId, content: joinText(result.content) });
    if (result.isError === true) warn(warnings, 'The error flag of tool results is not sent to OpenAI models (their tool messages have none).');
    const resultImages = result.content.filter((part): part is ImagePart => part.type === 'image');
    if (resultImages.length > 0) images.push({ type: 'text', text: `Images returned by tool call ${result.toolCallId}:` }, ...resultImages);
  }
  return images;
}

/**
 * Canonical system prompt and messages → OpenAI `messages`. The system parts become one system message (joined by a
 * blank line: OpenAI-compatible providers do not all take arrays there); each tool result becomes its own `tool`
 * message right after the assistant turn that called it. Images in tool results follow in one user message after
 * the block of tool messages, since OpenAI requires the tool messages to come directly after their calls.
 */
export function convertToOpenAIMessages(request: ChatRequest): ChatCompletionMessageParam[] {
  const warnings = request.warnings;
  const out: ChatCompletionMessageParam[] = [];
  const system = request.system.map((part) => part.text).join('\n\n');
  if (system !== '') out.push({ role: 'system', content: system });
  let pendingImages: Array<TextPart | ImagePart> = [];
  const flushImages = (): void => {
    if (pendingImages.length === 0) return;
    warn(warnings, 'Images in tool results were sent in a user message after the tool messages: OpenAI tool messages hold only text.');
    out.push({ role: 'user', content: pendingImages.map((part) => (part.type === 'text' ? { type: 'text' as const, text: part.text } : imagePart(part))) });
    pendingImages = [];
  };
  for (const message of request.messages) {
    if (message.role === 'user' || message.role === 'tool') {
      // A user turn may carry tool results first (Anthropic's shape): they go out as tool messages before it.
      const results = message.content.filter((part): part is ToolResultPart => part.type === 'tool-result');
      pendingImages.push(...addToolResults(results, out, warnings));
    }
    switch (message.role) {
      case 'tool':
        break;
      case 'system': {
        // An instruction given mid-conversation stays in place, as OpenAI reads system messages anywhere.
        flushImages();
        const text = joinText(message.content);
        if (text !== '') out.push({ role: 'system', content: text });
        break;
      }
      case 'user': {
        flushImages();
        const user = userMessage(message.content, warnings);
        if (user !== null) out.push(user);
        break;
      }
      case 'assistant':
        flushImages();
        out.push(assistantMessage(message.content, warnings));
        break;
      default: {
        const unknown: never = message.role;
        throw new Error(`unknown role ${String(unknown)}`);
      }
    }
  }
  flushImages();
  return out;
}
