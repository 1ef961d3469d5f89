import type { Usage } from '../../ir/usage.js';

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

/**
 * Converse `usage` → canonical usage: `inputTokens` excludes the cached part, so the input total adds
 * `cacheReadInputTokens` and `cacheWriteInputTokens`. Null when there is no usage object.
 */
export function usageFromConverse(raw: unknown): Usage | null {
  if (raw === null || typeof raw !== 'object') return null;
  const usage = raw as Record<string, unknown>;
  const noCache = count(usage.inputTokens);
  const cacheRead = count(usage.cacheReadInputTokens);
  const cacheWrite = count(usage.cacheWriteInputTokens);
  const output = count(usage.outputTokens);
  return {
    input: { total: noCache + cacheRead + cacheWrite, noCache, cacheRead, cacheWrite },
    output: { total: output, text: output, reasoning: 0 },
  };
}
