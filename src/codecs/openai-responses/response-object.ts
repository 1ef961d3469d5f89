import { randomUUID } from 'node:crypto';
import type { FinishReason } from '../../ir/finish-reason.js';
import type { ResponsesUsage } from '../../wire/responses/usage.js';
import { isJsonObject, type JsonObject } from './wire-values.js';

/** One output item of a response (message, function_call, reasoning), as sent on the wire. */
export type OutputItem =
  | { id: string; type: 'message'; status: 'in_progress' | 'completed' | 'incomplete'; role: 'assistant'; content: OutputText[] }
  /** `namespace`: the tool group the function belongs to (Codex's namespace tools), absent for ordinary tools. */
  | { id: string; type: 'function_call'; status: 'in_progress' | 'completed' | 'incomplete'; call_id: string; namespace?: string; name: string; arguments: string }
  | { id: string; type: 'reasoning'; summary: SummaryText[]; encrypted_content?: string | null }
  | { id: string; type: 'web_search_call'; status: 'in_progress' | 'searching' | 'completed' | 'failed'; action: WebSearchAction };

/** What a web_search_call did; `sources` only when the request's `include` asks for them, as OpenAI does. */
export interface WebSearchAction {
  type: 'search';
  query?: string;
  sources?: Array<{ type: 'url'; url: string }>;
}

/** OpenAI's citation of a web source in output text: the cited span by character offsets. */
export interface UrlCitation {
  type: 'url_citation';
  start_index: number;
  end_index: number;
  url: string;
  title: string;
}

export interface OutputText {
  type: 'output_text';
  text: string;
  annotations: UrlCitation[];
  logprobs: unknown[];
}

export interface SummaryText {
  type: 'summary_text';
  text: string;
}

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

/** The request fields a response object echoes (OpenAI returns the effective settings with every response). */
export interface ResponseEcho {
  instructions: string | null;
  max_output_tokens: number | null;
  metadata: JsonObject;
  parallel_tool_calls: boolean;
  previous_response_id: null;
  reasoning: { effort: string | null; summary: string | null };
  temperature: number | null;
  text: JsonObject;
  tool_choice: unknown;
  tools: unknown[];
  top_p: number | null;
  user?: string;
}

export function echoOf(body: JsonObject): ResponseEcho {
  const reasoning = isJsonObject(body.reasoning) ? body.reasoning : {};
  const echo: ResponseEcho = {
    instructions: typeof body.instructions === 'string' ? body.instructions : null,
    max_output_tokens: typeof body.max_output_tokens === 'number' ? body.max_output_tokens : null,
    metadata: isJsonObject(body.metadata) ? body.metadata : {},
    parallel_tool_calls: typeof body.parallel_tool_calls === 'boolean' ? body.parallel_tool_calls : true,
    previous_response_id: null,
    reasoning: { effort: typeof reasoning.effort === 'string' ? reasoning.effort : null, summary: typeof reasoning.summary === 'string' ? reasoning.summary : null },
    temperature: typeof body.temperature === 'number' ? body.temperature : 1,
    text: isJsonObject(body.text) ? body.text : { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: Array.isArray(body.tools) ? body.tools : [],
    top_p: typeof body.top_p === 'number' ? body.top_p : 1,
  };
  if (typeof body.user === 'string') echo.user = body.user;
  return echo;
}

/** Response ids start with `resp_`; an upstream's own id is kept behind that prefix when it is usable. */
export function responseId(upstreamId: string): string {
  if (upstreamId.startsWith('resp_')) return upstreamId;
  const cleaned = upstreamId.replace(/[^A-Za-z0-9_-]/g, '');
  return `resp_${cleaned === '' ? randomUUID().replaceAll('-', '') : cleaned}`;
}

/** Item ids: a prefix by type (`msg_`, `fc_`, `rs_`) and a random part. */
export function itemId(prefix: 'msg' | 'fc' | 'rs' | 'ws'): string {
  return `${prefix}_${randomUUID().replaceAll('-', '')}`;
}

/** How an answer ended, in the Responses vocabulary: completed, or incomplete with the reason. */
export function statusOf(reason: FinishReason): { status: 'completed' | 'incomplete'; incomplete_details: { reason: string } | null } {
  switch (reason.unified) {
    case 'length':
      return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
    case 'content-filter':
      return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
    case 'stop':
    case 'tool-calls':
    case 'error':
    case 'other':
      return { status: 'completed', incomplete_details: null };
    default: {
      const unknown: never = reason.unified;
      throw new Error(`unknown finish reason ${String(unknown)}`);
    }
  }
}

export interface ResponseState {
  id: string;
  createdAt: number;
  model: string;
  status: ResponseStatus;
  output: OutputItem[];
  usage: ResponsesUsage | null;
  error: { code: string; message: string } | null;
  incompleteDetails: { reason: string } | null;
  completedAt: number | null;
}

/**
 * The `response` object. `store` is false: a translated response is not kept anywhere, so it cannot be retrieved
 * or continued with previous_response_id, and the object says so rather than pretending.
 */
export function responseObject(state: ResponseState, echo: ResponseEcho): JsonObject {
  return {
    id: state.id,
    object: 'response',
    created_at: state.createdAt,
    status: state.status,
    background: false,
    completed_at: state.completedAt,
    error: state.error,
    incomplete_details: state.incompleteDetails,
    ...echo,
    model: state.model,
    output: state.output,
    service_tier: 'default',
    store: false,
    truncation: 'disabled',
    usage: state.usage,
  };
}
