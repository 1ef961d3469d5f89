import type { FinishReason } from './finish-reason.js';
import type { Citation } from './message.js';
import type { Usage } from './usage.js';

/**
 * The canonical stream vocabulary: every block has an id and a start/delta/end life cycle, so any client
 * encoder can rebuild its own framing from any upstream's stream. Upstream parsers emit, in order:
 * one `response-start`; blocks (never interleaved deltas of two text blocks, but tool inputs may interleave);
 * `usage` whenever the upstream reports it (a running total, not a delta); exactly one `finish` last,
 * or an `error` instead when the upstream fails mid-stream.
 */
export type StreamPart =
  | { type: 'response-start'; id: string; model: string; created: number }
  | { type: 'text-start'; id: string }
  | { type: 'text-delta'; id: string; delta: string }
  /** `signature`: the provider's opaque signature of the text, known only once it was written (Gemini streams). */
  | { type: 'text-end'; id: string; signature?: string }
  | { type: 'reasoning-start'; id: string }
  | { type: 'reasoning-delta'; id: string; delta: string }
  | { type: 'reasoning-end'; id: string; signature?: string; redactedData?: string }
  /**
   * `toolCallId` is the call's wire id (generated when the upstream gives none); `index` counts tool calls from 0;
   * `signature` is the provider's opaque signature of the call (Gemini's thoughtSignature), known when it starts.
   */
  | { type: 'tool-input-start'; id: string; toolCallId: string; toolName: string; index: number; signature?: string }
  | { type: 'tool-input-delta'; id: string; delta: string }
  | { type: 'tool-input-end'; id: string }
  /** A web search the upstream ran itself, complete with its sources (searches are not streamed piecewise). */
  | { type: 'web-search'; id: string; query?: string; sources: Array<{ url: string; title?: string }> }
  /** A source the text block `id` cites; may come after the block ended (Gemini reports grounding last). */
  | { type: 'text-citation'; id: string; citation: Citation }
  | { type: 'usage'; usage: Usage }
  | { type: 'finish'; reason: FinishReason; usage: Usage | null }
  | { type: 'error'; status: number; code: string; message: string };
