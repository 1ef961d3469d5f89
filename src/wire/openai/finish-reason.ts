import type { FinishReason } from '../../ir/finish-reason.js';

/**
 * OpenAI's `finish_reason` → canonical, raw value kept. A turn that holds tool calls ends in `tool-calls` even when
 * the provider said `stop` (several OpenAI-compatible providers do), so every client protocol sees it must run them.
 */
export function mapOpenAIFinishReason(raw: unknown, hasToolCalls: boolean): FinishReason {
  const value = typeof raw === 'string' ? raw : null;
  switch (value) {
    case 'stop':
      return { unified: hasToolCalls ? 'tool-calls' : 'stop', raw: value };
    case 'length':
      return { unified: 'length', raw: value };
    case 'tool_calls':
    case 'function_call':
      return { unified: 'tool-calls', raw: value };
    case 'content_filter':
      return { unified: 'content-filter', raw: value };
    default:
      return { unified: hasToolCalls ? 'tool-calls' : 'other', raw: value };
  }
}

export type OpenAIFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

/**
 * Canonical finish reason → OpenAI's. A turn that ends with tool calls says `tool_calls` whatever the upstream
 * called it (Gemini says STOP), because OpenAI clients look for that value; `error` and `other` have no OpenAI
 * counterpart and read as `stop`.
 */
export function encodeOpenAIFinishReason(reason: FinishReason, hasToolCalls: boolean): OpenAIFinishReason {
  switch (reason.unified) {
    case 'length':
      return 'length';
    case 'content-filter':
      return 'content_filter';
    case 'tool-calls':
      return 'tool_calls';
    case 'stop':
    case 'error':
    case 'other':
      return hasToolCalls ? 'tool_calls' : 'stop';
    default: {
      const unknown: never = reason.unified;
      throw new Error(`unknown finish reason ${String(unknown)}`);
    }
  }
}
