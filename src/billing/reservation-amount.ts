import type { HostedToolOffer } from '../ir/hosted-tool-offer.js';
import type { HostedToolCalls, Usage } from '../ir/usage.js';
import type { NanoUsd } from '../domain/records.js';
import type { Pricing } from '../domain/model-records.js';
import { computeCost, hostedToolCost, type BillableUsage } from './compute-cost.js';

/**
 * Output tokens reserved for a request that names no maximum output (`max_tokens`, `max_output_tokens`, …):
 * documented in docs/operators.md (Money). What the model really writes is billed; only the hold uses this.
 */
export const DEFAULT_OUTPUT_TOKENS_RESERVED = 4096;

/**
 * Calls of each hosted tool reserved for a request that offers the tool without a cap (Anthropic's `max_uses`,
 * OpenAI's `max_tool_calls`): documented in docs/operators.md (Money). The calls really made are billed.
 */
export const DEFAULT_HOSTED_TOOL_CALLS_RESERVED = 10;

/** The most hosted tool calls a request that offers these tools is held for. */
export function reservedHostedToolCalls(offer: HostedToolOffer): HostedToolCalls {
  const calls = (cap: number | null | undefined): number => (cap === undefined ? 0 : Math.max(0, Math.ceil(cap ?? DEFAULT_HOSTED_TOOL_CALLS_RESERVED)));
  return { webSearch: calls(offer.webSearch), webFetch: calls(offer.webFetch), fileSearch: calls(offer.fileSearch) };
}

/**
 * The upper bound held before forwarding: the caller's `maxUsage` when the endpoint knows it (images, audio,
 * characters), otherwise prompt tokens (the local estimate) plus the output cap (`estimatedTokens` minus the prompt,
 * or the default above for models that write text), priced like real usage; plus the hosted tools the request offers,
 * each at its cap (or the default above).
 */
export function reservationAmount(pricing: Pricing, input: { promptTokens: number; estimatedTokens: number; maxUsage?: BillableUsage; producesText: boolean; hostedTools?: HostedToolOffer }): NanoUsd {
  const tools = input.hostedTools === undefined ? 0n : hostedToolCost(pricing, reservedHostedToolCalls(input.hostedTools));
  if (input.maxUsage !== undefined) return computeCost(pricing, input.maxUsage) + tools;
  const prompt = Math.max(0, Math.ceil(input.promptTokens));
  const cap = Math.ceil(input.estimatedTokens) - prompt;
  const output = cap > 0 ? cap : input.producesText ? DEFAULT_OUTPUT_TOKENS_RESERVED : 0;
  const tokens: Usage = { input: { total: prompt, noCache: prompt, cacheRead: 0, cacheWrite: 0 }, output: { total: output, text: output, reasoning: 0 } };
  return computeCost(pricing, { tokens }) + tools;
}
