import type { FinishReason } from './finish-reason.js';
import type { Usage } from './usage.js';

/**
 * The canonical stream vocabulary: every block has an id and a start/delta/end life cycle, so any client
 * encoder can rebuild its own framing from any upstream's stream.
 */
export type StreamPart =
  | { type: 'response-start'; id: string; model: string; created: number }
  | { type: 'text-start'; id: string }
  | { type: 'text-delta'; id: string; delta: string }
  | { type: 'text-end'; id: string }
  | { type: 'reasoning-start'; id: string }
  | { type: 'reasoning-delta'; id: string; delta: string }
  | { type: 'reasoning-end'; id: string; signature?: string }
  | { type: 'tool-input-start'; id: string; toolName: string; index: number }
  | { type: 'tool-input-delta'; id: string; delta: string }
  | { type: 'tool-input-end'; id: string; signature?: string }
  | { type: 'usage'; usage: Usage }
  | { type: 'finish'; reason: FinishReason; usage: Usage | null }
  | { type: 'error'; status: number; code: string; message: string };
