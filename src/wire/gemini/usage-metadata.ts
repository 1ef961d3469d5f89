/** Gemini wire knowledge shared by the client codec and the upstream adapter. */
import type { Usage } from '../../ir/usage.js';
import { isJsonObject } from '../json-object.js';
import { tokenCount } from '../token-count.js';

/**
 * Gemini's `usageMetadata` → canonical usage. Gemini bills thinking as output but counts it apart:
 * `candidatesTokenCount` is the answer alone and `thoughtsTokenCount` the thinking, so output.total is their sum.
 * `cachedContentTokenCount` is the cached part of `promptTokenCount`; `toolUsePromptTokenCount` (results of built-in
 * tools fed back to the model) is billed as input and counted in. With these, input.total + output.total equals
 * Google's `totalTokenCount`.
 */
export function usageFromGemini(raw: unknown): Usage | null {
  if (!isJsonObject(raw)) return null;
  const prompt = tokenCount(raw.promptTokenCount) + tokenCount(raw.toolUsePromptTokenCount);
  const cacheRead = Math.min(tokenCount(raw.cachedContentTokenCount), prompt);
  const text = tokenCount(raw.candidatesTokenCount);
  const reasoning = tokenCount(raw.thoughtsTokenCount);
  return {
    input: { total: prompt, noCache: prompt - cacheRead, cacheRead, cacheWrite: 0 },
    output: { total: text + reasoning, text, reasoning },
  };
}
