import type { Usage } from '../../ir/usage.js';
import { isJsonObject } from './gemini-wire.js';

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

/**
 * `usageMetadata` → canonical usage. Gemini counts the answer (`candidatesTokenCount`) and the thinking
 * (`thoughtsTokenCount`) apart and bills both as output, so output.total is their sum and output.reasoning the
 * thinking. `cachedContentTokenCount` is the cached share of `promptTokenCount` (input.noCache is the rest), and
 * `toolUsePromptTokenCount` (built-in tool results fed to the model) is billed as input. Then input.total +
 * output.total = `totalTokenCount`. In streams every chunk repeats the running total.
 */
export function usageFromUsageMetadata(raw: unknown): Usage | null {
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
