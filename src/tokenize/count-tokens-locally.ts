import type * as FunctionCalling from 'gpt-tokenizer/functionCalling';
import type { ChatCompletionFunctionDefinition, ChatMessage } from 'gpt-tokenizer/functionCalling';
import type { ChatRequest, ToolChoice, ToolDefinition } from '../ir/chat-request.js';
import type { ContentPart, ImagePart } from '../ir/message.js';
import type { TokenCount } from '../ir/token-count.js';
import { loadO200kEncoder } from './o200k-encoder.js';

/** An image at low detail: OpenAI's fixed base cost. */
export const LOW_DETAIL_IMAGE_TOKENS = 85;
/** An image at auto/high detail, size unknown: a 1024×1024 image at high detail (85 + 4 tiles × 170). */
export const IMAGE_TOKENS = 765;
/** A file (PDF, audio, …): a fixed estimate; the content is not inspected. */
export const FILE_TOKENS = 1000;
/** Tokens of each tool call's framing in an assistant turn, beyond its name and arguments. */
const TOOL_CALL_TOKENS = 3;
/**
 * Text is counted in slices of at most this many characters, cut at whitespace where possible: byte-pair encoding
 * is quadratic in the length of one unbroken run (100 k identical letters take seconds), slicing keeps it linear.
 */
const SLICE_CHARACTERS = 500;

type CountText = (text: string) => number;

interface Tokenizer {
  count: CountText;
  functions: typeof FunctionCalling;
}

/**
 * Where the slice of `text` that starts at `start` ends: at most SLICE_CHARACTERS on, at the last space before that
 * limit where there is one. It depends only on the characters up to the limit, so text that grows at its end keeps
 * the slices already cut (see running-token-count.ts).
 */
export function sliceEnd(text: string, start: number): number {
  let end = Math.min(start + SLICE_CHARACTERS, text.length);
  if (end < text.length) {
    const space = text.lastIndexOf(' ', end);
    if (space > start) end = space;
  }
  return end;
}

/** Characters a text must exceed, from a slice's start, before that slice's end is fixed whatever follows. */
export const SLICE_SETTLED_AFTER = SLICE_CHARACTERS;

/** Counts `text` in slices, each cut at the last space before the limit where there is one. */
export function countInSlices(text: string, countSlice: CountText): number {
  if (text.length <= SLICE_CHARACTERS) return countSlice(text);
  let tokens = 0;
  let start = 0;
  while (start < text.length) {
    const end = sliceEnd(text, start);
    tokens += countSlice(text.slice(start, end));
    start = end;
  }
  return tokens;
}

let loading: Promise<Tokenizer> | undefined;

/** The o200k_base encoder and gpt-tokenizer's chat framing, loaded on first use (~50-70 ms, in turns of a few ms). */
function loadTokenizer(): Promise<Tokenizer> {
  loading ??= Promise.all([loadO200kEncoder(), import('gpt-tokenizer/functionCalling')]).then(
    ([encoder, functions]) => ({ count: (text: string) => countInSlices(text, (slice) => encoder.count(slice)), functions }),
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}

/** The o200k_base count of one slice of text (no slicing of its own): for counting text that arrives in pieces. */
export async function loadSliceCounter(): Promise<CountText> {
  const encoder = await loadO200kEncoder();
  return (slice) => encoder.count(slice);
}

/** Tokens of plain text (an answer, reasoning, tool arguments) with the o200k_base encoder. */
export async function countTextTokensLocally(text: string): Promise<number> {
  if (text === '') return 0;
  return (await loadTokenizer()).count(text);
}

function imageTokens(image: ImagePart): number {
  return image.detail === 'low' ? LOW_DETAIL_IMAGE_TOKENS : IMAGE_TOKENS;
}

/** Text of a message's parts, and the fixed costs of its images and files. Reasoning from earlier turns is not sent upstream by most providers and is not counted. */
function contentOf(parts: readonly ContentPart[]): { text: string; extra: number } {
  let text = '';
  let extra = 0;
  for (const part of parts) {
    if (part.type === 'text') text += part.text;
    else if (part.type === 'image') extra += imageTokens(part);
    else if (part.type === 'file') extra += FILE_TOKENS;
  }
  return { text, extra };
}

function functionCallOf(choice: ToolChoice | undefined): 'auto' | 'none' | { name: string } | undefined {
  if (choice === undefined) return undefined;
  if (choice.kind === 'tool') return { name: choice.name };
  return choice.kind === 'none' ? 'none' : 'auto';
}

function definitionsOf(tools: readonly ToolDefinition[]): ChatCompletionFunctionDefinition[] {
  return tools.map((tool) => {
    // The formatter reads JSON Schema's `type`/`properties`/`enum`/`items`; other keywords count as `any`.
    const definition: ChatCompletionFunctionDefinition = { name: tool.name, parameters: tool.parameters as unknown as ChatCompletionFunctionDefinition['parameters'] };
    if (tool.description !== undefined) definition.description = tool.description;
    return definition;
  });
}

function toolTokens(tokenizer: Tokenizer, request: ChatRequest, hasSystem: boolean): number {
  const tools = request.tools ?? [];
  if (tools.length === 0) return 0;
  const { functions, count } = tokenizer;
  let tokens: number;
  try {
    tokens = functions.estimateTokensInFunctions(definitionsOf(tools), count);
  } catch {
    // A schema the formatter cannot read (e.g. a non-array `enum`): its JSON text instead.
    tokens = count(JSON.stringify(tools)) + functions.FUNCTION_DEFINITION_TOKEN_OVERHEAD;
  }
  return hasSystem ? tokens - functions.SYSTEM_FUNCTION_TOKEN_DEDUCTION : tokens;
}

/**
 * Input tokens of a canonical request, counted with OpenAI's o200k_base tokenizer, for upstreams that have no
 * counter of their own. The framing follows OpenAI's cookbook (3 tokens a message, 3 to prime the reply, the
 * `namespace functions` rendering of tool definitions, as gpt-tokenizer implements it): system prompt, message
 * text, tool calls (name, arguments and 3 tokens each), tool results (as named function-result messages), tool definitions and a
 * JSON response schema. Images cost a fixed 85 tokens at low detail and 765 otherwise; files a fixed 1,000.
 * Exact for plain OpenAI chats; an estimate for other providers' tokenizers.
 */
export async function countTokensLocally(request: ChatRequest): Promise<TokenCount> {
  const tokenizer = await loadTokenizer();
  const { count, functions } = tokenizer;
  const hasTools = (request.tools ?? []).length > 0;
  const messages: ChatMessage[] = [];
  let extra = 0;
  const system = request.system.map((part) => part.text).join('\n\n');
  if (system !== '') messages.push({ role: 'system', content: system });
  for (const message of request.messages) {
    const { text, extra: media } = contentOf(message.content);
    extra += media;
    if (message.role !== 'tool' && (text !== '' || media > 0 || message.role === 'assistant')) messages.push({ role: message.role, content: text });
    for (const part of message.content) {
      if (part.type === 'tool-call') extra += count(part.name) + count(part.argumentsJson) + TOOL_CALL_TOKENS;
      else if (part.type === 'tool-result') {
        const result = contentOf(part.content);
        extra += result.extra;
        // Counted as OpenAI's function-result messages, whose framing the known counts pin down.
        messages.push({ role: 'function', name: part.toolName, content: result.text });
      }
    }
  }
  let tokens = 0;
  let systemPadded = false;
  for (const message of messages) {
    // With tools, OpenAI ends the system message with a newline before the functions namespace.
    const padded = functions.padSystemMessage(message, hasTools, systemPadded);
    if (message.role === 'system') systemPadded = true;
    tokens += functions.countMessageTokens(padded, count);
  }
  tokens += functions.COMPLETION_REQUEST_TOKEN_OVERHEAD;
  tokens += toolTokens(tokenizer, request, system !== '');
  const functionCall = hasTools ? functionCallOf(request.toolChoice) : undefined;
  if (functionCall === 'none') tokens += functions.FUNCTION_CALL_NONE_TOKEN_OVERHEAD;
  else if (typeof functionCall === 'object') tokens += count(functionCall.name) + functions.FUNCTION_CALL_NAME_TOKEN_OVERHEAD;
  const format = request.responseFormat;
  if (format?.kind === 'json-schema') tokens += count(JSON.stringify(format.schema));
  return { inputTokens: Math.max(0, tokens + extra), source: 'local' };
}
