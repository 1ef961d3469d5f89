import type { FinishReason } from '../../ir/finish-reason.js';
import { ANTHROPIC_STOP_REASONS, type AnthropicStopReason } from './anthropic-wire.js';

/** Anthropic's `stop_reason` → the unified finish reason; the raw value is always kept. */
export function finishReasonFromAnthropic(stopReason: unknown): FinishReason {
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

/**
 * A canonical finish reason → Anthropic's `stop_reason`. An Anthropic upstream's raw value is kept as it was
 * (`pause_turn`, `stop_sequence`, `model_context_window_exceeded` survive); other upstreams map by the unified
 * value. A turn that produced tool calls always ends in `tool_use`, since Anthropic clients run tools on it.
 */
export function anthropicStopReason(reason: FinishReason, hasToolCalls: boolean): AnthropicStopReason {
  if (reason.raw !== null && ANTHROPIC_STOP_REASONS.has(reason.raw)) {
    const raw = reason.raw as AnthropicStopReason;
    return hasToolCalls && raw === 'end_turn' ? 'tool_use' : raw;
  }
  if (hasToolCalls && (reason.unified === 'stop' || reason.unified === 'tool-calls' || reason.unified === 'other')) return 'tool_use';
  switch (reason.unified) {
    case 'stop':
      return 'end_turn';
    case 'length':
      return 'max_tokens';
    case 'tool-calls':
      return 'tool_use';
    case 'content-filter':
      return 'refusal';
    case 'error':
    case 'other':
      return 'end_turn';
    default: {
      const unknown: never = reason.unified;
      throw new Error(`unknown finish reason ${String(unknown)}`);
    }
  }
}
