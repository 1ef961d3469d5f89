import type { Usage } from '../../ir/usage.js';
import { tokenCount } from '../../wire/token-count.js';

/** Anthropic's usage counters as last reported (message_delta overwrites what message_start said). */
export type AnthropicUsageCounters = Record<string, unknown>;

/**
 * Anthropic usage → canonical usage: input total = input_tokens + cache_read_input_tokens +
 * cache_creation_input_tokens; noCache = input_tokens; output from output_tokens, split by
 * output_tokens_details.thinking_tokens when present.
 */
export function usageFromAnthropic(raw: AnthropicUsageCounters): Usage {
  const noCache = tokenCount(raw.input_tokens);
  const cacheRead = tokenCount(raw.cache_read_input_tokens);
  const cacheWrite = tokenCount(raw.cache_creation_input_tokens);
  const output = tokenCount(raw.output_tokens);
  const details = raw.output_tokens_details;
  const thinking = details !== null && typeof details === 'object' ? tokenCount((details as Record<string, unknown>).thinking_tokens) : 0;
  const reasoning = Math.min(thinking, output);
  return {
    input: { total: noCache + cacheRead + cacheWrite, noCache, cacheRead, cacheWrite },
    output: { total: output, text: output - reasoning, reasoning },
  };
}

/** Folds a later usage object into the counters: present values replace earlier ones, absent ones stay. */
export function mergeUsageCounters(into: AnthropicUsageCounters, update: unknown): void {
  if (update === null || typeof update !== 'object') return;
  for (const [key, value] of Object.entries(update as Record<string, unknown>)) {
    if (value !== null && value !== undefined) into[key] = value;
  }
}
