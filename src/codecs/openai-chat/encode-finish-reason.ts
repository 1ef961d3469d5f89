import type { FinishReason } from '../../ir/finish-reason.js';

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
