/**
 * The Anthropic Messages wire shapes this codec writes (responses, stream events, errors), as the API and its
 * official SDK define them. Requests are read field by field in decode-request.ts, tolerant of what is unknown.
 */

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
  /** `code` is the gateway's own error code (spec 2.3), an addition Anthropic's clients ignore. */
  error: { type: AnthropicErrorType; message: string; code: string };
}

/** One server-sent event in Anthropic's framing: a named event line, then the JSON data line. */
export function sseEvent(type: string, data: unknown): string {
  return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}
