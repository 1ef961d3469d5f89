import type { Usage } from '../../ir/usage.js';
import { tokenCount } from '../token-count.js';

/**
 * Converse `usage` → canonical usage: `inputTokens` excludes the cached part, so the input total adds
 * `cacheReadInputTokens` and `cacheWriteInputTokens`. Null when there is no usage object.
 */
export function usageFromConverse(raw: unknown): Usage | null {
  if (raw === null || typeof raw !== 'object') return null;
  const usage = raw as Record<string, unknown>;
  const noCache = tokenCount(usage.inputTokens);
  const cacheRead = tokenCount(usage.cacheReadInputTokens);
  const cacheWrite = tokenCount(usage.cacheWriteInputTokens);
  const output = tokenCount(usage.outputTokens);
  return {
    input: { total: noCache + cacheRead + cacheWrite, noCache, cacheRead, cacheWrite },
    output: { total: output, text: output, reasoning: 0 },
  };
}
