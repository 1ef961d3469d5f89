import type { Usage } from '../ir/usage.js';
import type { NanoUsd, Pricing } from '../domain/records.js';
import { computeCost, type BillableUsage } from './compute-cost.js';

/**
 * Output tokens reserved for a request that names no maximum output (`max_tokens`, `max_output_tokens`, …):
 * documented in docs/operators.md (Money). What the model really writes is billed; only the hold uses this.
 */
export const DEFAULT_OUTPUT_TOKENS_RESERVED = 4096;

/**
 * The upper bound held before forwarding: the caller's `maxUsage` when the endpoint knows it (images, audio,
 * characters), otherwise prompt tokens (the local estimate) plus the output cap (`estimatedTokens` minus the prompt,
 * or the default above for models that write text), priced like real usage.
 */
export function reservationAmount(pricing: Pricing, input: { promptTokens: number; estimatedTokens: number; maxUsage?: BillableUsage; producesText: boolean }): NanoUsd {
  if (input.maxUsage !== undefined) return computeCost(pricing, input.maxUsage);
  const prompt = Math.max(0, Math.ceil(input.promptTokens));
  const cap = Math.ceil(input.estimatedTokens) - prompt;
  const output = cap > 0 ? cap : input.producesText ? DEFAULT_OUTPUT_TOKENS_RESERVED : 0;
  const tokens: Usage = { input: { total: prompt, noCache: prompt, cacheRead: 0, cacheWrite: 0 }, output: { total: output, text: output, reasoning: 0 } };
  return computeCost(pricing, { tokens });
}
