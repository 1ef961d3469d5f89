import type { Usage } from '../../ir/usage.js';
import { isJsonObject } from './gemini-api.js';

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

/**
 * The usage of a `generateContent` body (or of a whole streamed JSON array, where the last chunk that reports
 * usage holds the running total); null when absent or not JSON.
 */
export function findGeminiUsageInJson(body: Buffer): Usage | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
  if (Array.isArray(parsed)) {
    for (let index = parsed.length - 1; index >= 0; index -= 1) {
      const element: unknown = parsed[index];
      if (isJsonObject(element) && element.usageMetadata !== undefined) return usageFromGemini(element.usageMetadata);
    }
    return null;
  }
  return isJsonObject(parsed) ? usageFromGemini(parsed.usageMetadata) : null;
}
