/**
 * The Anthropic Messages wire (https://docs.claude.com/en/api/messages): the request shapes the upstream adapter
 * writes and the response, stream and error shapes the client codec writes, as the API and its official SDK define
 * them. Readers of either side stay tolerant of what is unknown and read field by field.
 */

export interface CacheControl {
  type: 'ephemeral';
  ttl?: string;
}

export interface TextBlock {
  type: 'text';
  text: string;
  cache_control?: CacheControl;
}

export type ImageSource = { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };

export interface ImageBlock {
  type: 'image';
  source: ImageSource;
}

export type DocumentSource =
  | { type: 'base64'; media_type: 'application/pdf'; data: string }
  | { type: 'text'; media_type: 'text/plain'; data: string }
  | { type: 'url'; url: string };

export interface DocumentBlock {
  type: 'document';
  source: DocumentSource;
  title?: string;
}

export interface ThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

export interface RedactedThinkingBlock {
  type: 'redacted_thinking';
  data: string;
}

export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
}

export interface ToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content?: Array<TextBlock | ImageBlock>;
  is_error?: boolean;
}

export type UserBlock = TextBlock | ImageBlock | DocumentBlock | ToolResultBlock;
export type AssistantBlock = TextBlock | ThinkingBlock | RedactedThinkingBlock | ToolUseBlock;

export type AnthropicMessageParam = { role: 'user'; content: UserBlock[] } | { role: 'assistant'; content: AssistantBlock[] };

export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
  strict?: boolean;
}

/** Anthropic's server-side web search tool. */
export interface AnthropicWebSearchTool {
  type: 'web_search_20250305';
  name: 'web_search';
  max_uses?: number;
  allowed_domains?: string[];
  blocked_domains?: string[];
  user_location?: { type: 'approximate'; city?: string; region?: string; country?: string; timezone?: string };
}

export type AnthropicToolChoice =
  | { type: 'auto'; disable_parallel_tool_use?: boolean }
  | { type: 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' };

export interface AnthropicRequestBody {
  model: string;
  max_tokens: number;
  messages: AnthropicMessageParam[];
  system?: string | TextBlock[];
  temperature?: number;
  top_p?: number;
  top_k?: number;
  stop_sequences?: string[];
  stream?: boolean;
  tools?: Array<AnthropicTool | AnthropicWebSearchTool>;
  tool_choice?: AnthropicToolChoice;
  thinking?: { type: 'enabled'; budget_tokens: number };
  metadata?: { user_id: string };
  output_config?: { format: { type: 'json_schema'; schema: Record<string, unknown> } };
}

export type AnthropicStopReason =
  | 'end_turn'
  | 'max_tokens'
  | 'stop_sequence'
  | 'tool_use'
  | 'pause_turn'
  | 'refusal'
  | 'model_context_window_exceeded';

export const ANTHROPIC_STOP_REASONS: ReadonlySet<string> = new Set<AnthropicStopReason>([
  'end_turn',
  'max_tokens',
  'stop_sequence',
  'tool_use',
  'pause_turn',
  'refusal',
  'model_context_window_exceeded',
]);

export interface AnthropicUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
  /** Present when the upstream reported reasoning tokens; `output_tokens` stays the inclusive total. */
  output_tokens_details?: { thinking_tokens: number };
  /** Server tools run for the answer (Anthropic's own or, translated, another provider's). */
  server_tool_use?: { web_search_requests: number; web_fetch_requests: number };
}

/** A web search result cited by a text block; `encrypted_index` is empty when the search ran on another provider. */
export interface AnthropicWebCitation {
  type: 'web_search_result_location';
  url: string;
  title: string | null;
  cited_text: string;
  encrypted_index: string;
}

export type AnthropicResponseBlock =
  | { type: 'text'; text: string; citations?: AnthropicWebCitation[] }
  | { type: 'server_tool_use'; id: string; name: 'web_search'; input: { query: string } }
  | {
    type: 'web_search_tool_result';
    tool_use_id: string;
    content: Array<{ type: 'web_search_result'; url: string; title: string; encrypted_content: string; page_age: string | null }>;
  }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

export interface AnthropicMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: AnthropicResponseBlock[];
  stop_reason: AnthropicStopReason | null;
  stop_sequence: string | null;
  usage: AnthropicUsage;
}

/** Anthropic's error types (https://docs.claude.com/en/api/errors) plus the SDK's `billing_error` and `timeout_error`. */
export type AnthropicErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'billing_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'api_error'
  | 'timeout_error'
  | 'overloaded_error';

export interface AnthropicErrorBody {
  type: 'error';
  /** `code` is the gateway's own error code, an addition Anthropic's clients ignore. */
  error: { type: AnthropicErrorType; message: string; code: string };
}

/** One server-sent event in Anthropic's framing: a named event line, then the JSON data line. */
export function sseEvent(type: string, data: unknown): string {
  return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** The field each kind of content block delta carries its text in. */
const DELTA_FIELDS = {
  text_delta: 'text',
  input_json_delta: 'partial_json',
  thinking_delta: 'thinking',
  signature_delta: 'signature',
} as const;

/**
 * `sseEvent('content_block_delta', { type: 'content_block_delta', index, delta: { type, [field]: value } })` with
 * the field of that kind of delta, written as the same text without building the objects to stringify (one per
 * streamed chunk of an answer).
 */
export function contentBlockDeltaEvent(index: number | null, type: keyof typeof DELTA_FIELDS, value: string): string {
  return `event: content_block_delta\ndata: {"type":"content_block_delta","index":${JSON.stringify(index)},"delta":{"type":"${type}","${DELTA_FIELDS[type]}":${JSON.stringify(value)}}}\n\n`;
}

/** `sseEvent('content_block_stop', { type: 'content_block_stop', index })`, as the same text. */
export function contentBlockStopEvent(index: number | null): string {
  return `event: content_block_stop\ndata: {"type":"content_block_stop","index":${JSON.stringify(index)}}\n\n`;
}

/** `sseEvent('message_stop', { type: 'message_stop' })`. */
export const MESSAGE_STOP_EVENT = 'event: message_stop\ndata: {"type":"message_stop"}\n\n';
