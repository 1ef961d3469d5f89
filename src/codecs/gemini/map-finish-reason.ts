import type { FinishReason } from '../../ir/finish-reason.js';

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
