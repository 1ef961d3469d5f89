import type { FinishReason } from '../../ir/finish-reason.js';

/** Converse `stopReason` → the canonical finish reason (the raw value is kept). */
export function mapConverseStopReason(raw: unknown, hasToolCalls: boolean): FinishReason {
  const value = typeof raw === 'string' ? raw : null;
  switch (value) {
    case 'end_turn':
    case 'stop_sequence':
      return { unified: hasToolCalls ? 'tool-calls' : 'stop', raw: value };
    case 'tool_use':
      return { unified: 'tool-calls', raw: value };
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return { unified: 'length', raw: value };
    case 'guardrail_intervened':
    case 'content_filtered':
      return { unified: 'content-filter', raw: value };
    default:
      return { unified: hasToolCalls ? 'tool-calls' : 'other', raw: value };
  }
}
