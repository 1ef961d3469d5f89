/** Gemini wire knowledge shared by the client codec and the upstream adapter. */
import type { Usage } from '../../ir/usage.js';

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

/**
 * Gemini's `usageMetadata` → canonical usage. Gemini bills thinking as output but counts it apart:
 * `candidatesTokenCount` is the answer alone and `thoughtsTokenCount` the thinking, so output.total is their sum.
 * `cachedContentTokenCount` is the cached part of `promptTokenCount`; `toolUsePromptTokenCount` (results of built-in
 * tools fed back to the model) is billed as input and counted in. With these, input.total + output.total equals
 * Google's `totalTokenCount`.
 */
export function usageFromGemini(raw: unknown): Usage | null {
  if (!isJsonObject(raw)) return null;
  const prompt = count(raw.promptTokenCount) + count(raw.toolUsePromptTokenCount);
  const cacheRead = Math.min(count(raw.cachedContentTokenCount), prompt);
  const text = count(raw.candidatesTokenCount);
  const reasoning = count(raw.thoughtsTokenCount);
  return {
    input: { total: prompt, noCache: prompt - cacheRead, cacheRead, cacheWrite: 0 },
    output: { total: text + reasoning, text, reasoning },
  };
}
