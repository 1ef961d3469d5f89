import type { Usage } from '../../ir/usage.js';
import { usageOfTopLevelMember } from '../json-top-level.js';
import { tokenCount } from '../token-count.js';

/** The Responses API usage object (`response.usage`). */
export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; cache_write_tokens?: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** Canonical usage → Responses usage. Cached tokens are part of input_tokens, reasoning tokens of output_tokens. */
export function encodeResponsesUsage(usage: Usage): ResponsesUsage {
  const inputDetails: ResponsesUsage['input_tokens_details'] = { cached_tokens: usage.input.cacheRead };
  // Cache writes exist upstream (Anthropic); sent only when there were any, as on the chat-completions wire.
  if (usage.input.cacheWrite > 0) inputDetails.cache_write_tokens = usage.input.cacheWrite;
  return {
    input_tokens: usage.input.total,
    input_tokens_details: inputDetails,
    output_tokens: usage.output.total,
    output_tokens_details: { reasoning_tokens: usage.output.reasoning },
    total_tokens: usage.input.total + usage.output.total,
  };
}

/** Responses usage (from an upstream answer or event) → canonical usage; null when absent. */
export function usageFromResponses(raw: unknown): Usage | null {
  if (raw === null || typeof raw !== 'object') return null;
  const usage = raw as Record<string, unknown>;
  const input = tokenCount(usage.input_tokens);
  const output = tokenCount(usage.output_tokens);
  const inputDetails = (usage.input_tokens_details ?? {}) as Record<string, unknown>;
  const outputDetails = (usage.output_tokens_details ?? {}) as Record<string, unknown>;
  const cacheRead = Math.min(tokenCount(inputDetails.cached_tokens), input);
  const cacheWrite = Math.min(tokenCount(inputDetails.cache_write_tokens), input - cacheRead);
  const reasoning = Math.min(tokenCount(outputDetails.reasoning_tokens), output);
  return {
    input: { total: input, noCache: input - cacheRead - cacheWrite, cacheRead, cacheWrite },
    output: { total: output, text: output - reasoning, reasoning },
  };
}

/** The top-level `usage` of a Responses JSON body (pass-through, non-streaming); null when absent or not JSON. */
export function findResponsesUsageInJson(body: Buffer): Usage | null {
  return usageOfTopLevelMember(body, 'usage', usageFromResponses);
}
