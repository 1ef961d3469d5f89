import type { FinishReason, UnifiedFinishReason } from '../../ir/finish-reason.js';

/** Every `Candidate.finishReason` the Gemini API defines (v1beta). */
export const GEMINI_FINISH_REASONS: ReadonlySet<string> = new Set([
  'STOP',
  'MAX_TOKENS',
  'SAFETY',
  'RECITATION',
  'LANGUAGE',
  'OTHER',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'MALFORMED_FUNCTION_CALL',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
  'IMAGE_RECITATION',
  'IMAGE_OTHER',
  'NO_IMAGE',
  'UNEXPECTED_TOOL_CALL',
  'TOO_MANY_TOOL_CALLS',
  'MISSING_THOUGHT_SIGNATURE',
  'MALFORMED_RESPONSE',
]);

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

/**
 * Canonical finish reason → Gemini's. A raw value that already is a Gemini reason (the upstream was Gemini-shaped)
 * is returned as it is; otherwise: stop and tool-calls → STOP (Gemini has no tool-call reason), length →
 * MAX_TOKENS, content-filter → SAFETY, error and other → OTHER.
 */
export function toGeminiFinishReason(reason: FinishReason): string {
  if (reason.raw !== null && GEMINI_FINISH_REASONS.has(reason.raw)) return reason.raw;
  switch (reason.unified) {
    case 'stop':
    case 'tool-calls':
      return 'STOP';
    case 'length':
      return 'MAX_TOKENS';
    case 'content-filter':
      return 'SAFETY';
    case 'error':
    case 'other':
      return 'OTHER';
    default: {
      const unknown: never = reason.unified;
      throw new Error(`unknown finish reason ${String(unknown)}`);
    }
  }
}
