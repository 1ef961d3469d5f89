import type { FinishReason, UnifiedFinishReason } from '../../ir/finish-reason.js';

const UNIFIED: Readonly<Record<string, UnifiedFinishReason>> = {
  STOP: 'stop',
  MAX_TOKENS: 'length',
  SAFETY: 'content-filter',
  RECITATION: 'content-filter',
  BLOCKLIST: 'content-filter',
  PROHIBITED_CONTENT: 'content-filter',
  SPII: 'content-filter',
  IMAGE_SAFETY: 'content-filter',
  IMAGE_PROHIBITED_CONTENT: 'content-filter',
  IMAGE_RECITATION: 'content-filter',
  MALFORMED_FUNCTION_CALL: 'error',
  UNEXPECTED_TOOL_CALL: 'error',
  TOO_MANY_TOOL_CALLS: 'error',
  MISSING_THOUGHT_SIGNATURE: 'error',
  MALFORMED_RESPONSE: 'error',
};

/**
 * Gemini's `finishReason` → canonical. STOP is `tool-calls` when the answer holds function calls (Gemini has no
 * reason of its own for that); blocked or recited content is `content-filter`; malformed or unexpected tool calls
 * are `error`; LANGUAGE, OTHER, NO_IMAGE and unknown values are `other`. The raw value is always kept.
 */
export function mapGeminiFinishReason(raw: string | null, hasToolCalls: boolean): FinishReason {
  if (raw === null) return { unified: hasToolCalls ? 'tool-calls' : 'other', raw: null };
  const unified = UNIFIED[raw] ?? 'other';
  return { unified: unified === 'stop' && hasToolCalls ? 'tool-calls' : unified, raw };
}

/** A prompt blocked before generation (`promptFeedback.blockReason`, no candidates) is filtered content. */
export function blockedPromptFinishReason(blockReason: string): FinishReason {
  return { unified: 'content-filter', raw: blockReason };
}
