import type { Usage } from '../../ir/usage.js';
import type { AnthropicUsage } from './anthropic-messages-api.js';

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Anthropic's usage → canonical usage. `input_tokens` excludes cached input, so the canonical input total is
 * input + cache read + cache write; `output_tokens_details.thinking_tokens` (when sent) splits the output.
 */
export function usageFromAnthropic(raw: unknown): Usage | null {
  if (!isObject(raw)) return null;
  const noCache = count(raw.input_tokens);
  const cacheRead = count(raw.cache_read_input_tokens);
  const cacheWrite = count(raw.cache_creation_input_tokens);
  const output = count(raw.output_tokens);
  const details = isObject(raw.output_tokens_details) ? raw.output_tokens_details : {};
  const reasoning = Math.min(count(details.thinking_tokens), output);
  return {
    input: { total: noCache + cacheRead + cacheWrite, noCache, cacheRead, cacheWrite },
    output: { total: output, text: output - reasoning, reasoning },
  };
}

/** Canonical usage → Anthropic's usage object (`input_tokens` is the uncached part). */
export function usageToAnthropic(usage: Usage): AnthropicUsage {
  const wire: AnthropicUsage = {
    input_tokens: usage.input.noCache,
    cache_creation_input_tokens: usage.input.cacheWrite,
    cache_read_input_tokens: usage.input.cacheRead,
    output_tokens: usage.output.total,
  };
  if (usage.output.reasoning > 0) wire.output_tokens_details = { thinking_tokens: usage.output.reasoning };
  return wire;
}

/** The `usage` of a non-streaming message body; null when absent or the body is not JSON. */
export function findUsageInMessageJson(body: Buffer): Usage | null {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as unknown;
    return isObject(parsed) ? usageFromAnthropic(parsed.usage) : null;
  } catch {
    return null;
  }
}
