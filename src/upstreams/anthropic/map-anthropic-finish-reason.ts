import type { FinishReason } from '../../ir/finish-reason.js';

/** Anthropic's `stop_reason` → the unified finish reason; the raw value is always kept. */
export function mapAnthropicFinishReason(stopReason: unknown): FinishReason {
  const raw = typeof stopReason === 'string' ? stopReason : null;
  switch (raw) {
    case 'end_turn':
    case 'stop_sequence':
      return { unified: 'stop', raw };
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return { unified: 'length', raw };
    case 'tool_use':
      return { unified: 'tool-calls', raw };
    case 'refusal':
      return { unified: 'content-filter', raw };
    default:
      // pause_turn (a long server-tool turn to be continued) and anything newer
      return { unified: 'other', raw };
  }
}
