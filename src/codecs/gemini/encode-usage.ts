import type { Usage } from '../../ir/usage.js';
import type { GeminiUsageMetadata } from './gemini-api.js';

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
