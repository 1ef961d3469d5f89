import type { ReasoningOptions } from '../../ir/chat-request.js';
import type { JsonObject } from '../../wire/gemini/gemini-wire.js';

/**
 * Effort → thinking budget for Gemini 2.x models (thinkingBudget). Every value lies inside the allowed range of all
 * 2.5 models (Pro 128–32768, Flash 0–24576, Flash-Lite 512–24576), so none is rejected.
 */
export const THINKING_BUDGET_BY_EFFORT: Readonly<Record<NonNullable<ReasoningOptions['effort']>, number>> = {
  minimal: 512,
  low: 1024,
  medium: 8192,
  high: 24576,
};

/** Gemini 3 and later take a thinking level instead of a budget. */
export function usesThinkingLevel(upstreamModel: string): boolean {
  return /gemini-(?:[3-9]|\d{2,})(?:\.|-|$)/.test(upstreamModel);
}

/**
 * Canonical reasoning options → `generationConfig.thinkingConfig`: an explicit budget is sent as `thinkingBudget`;
 * an effort as `thinkingLevel` (MINIMAL…HIGH) on Gemini 3+, else as the budget of THINKING_BUDGET_BY_EFFORT;
 * `includeThoughts` as it is.
 */
export function thinkingConfig(reasoning: ReasoningOptions | undefined, upstreamModel: string): JsonObject | undefined {
  if (reasoning === undefined) return undefined;
  const config: JsonObject = {};
  if (reasoning.budgetTokens !== undefined) config.thinkingBudget = reasoning.budgetTokens;
  else if (reasoning.effort !== undefined) {
    if (usesThinkingLevel(upstreamModel)) config.thinkingLevel = reasoning.effort.toUpperCase();
    else config.thinkingBudget = THINKING_BUDGET_BY_EFFORT[reasoning.effort];
  }
  if (reasoning.includeThoughts !== undefined) config.includeThoughts = reasoning.includeThoughts;
  return Object.keys(config).length === 0 ? undefined : config;
}
