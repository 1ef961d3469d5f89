import type { Usage } from '../../ir/usage.js';
import { isJsonObject } from '../json-object.js';
import type { GeminiUsageMetadata } from './gemini-wire.js';
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

/**
 * Canonical usage → `usageMetadata`. Gemini counts thinking apart from the answer: `candidatesTokenCount` is the
 * answer alone, `thoughtsTokenCount` the thinking, and `totalTokenCount` their sum plus the prompt.
 * `cachedContentTokenCount` is the cached part of `promptTokenCount`. Zero details are left out, as Google does.
 */
export function encodeGeminiUsage(usage: Usage): GeminiUsageMetadata {
  const reasoning = Math.min(usage.output.reasoning, usage.output.total);
  const metadata: GeminiUsageMetadata = {
    promptTokenCount: usage.input.total,
    candidatesTokenCount: usage.output.total - reasoning,
    totalTokenCount: usage.input.total + usage.output.total,
  };
  if (usage.input.cacheRead > 0) metadata.cachedContentTokenCount = usage.input.cacheRead;
  if (reasoning > 0) metadata.thoughtsTokenCount = reasoning;
  return metadata;
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
