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
