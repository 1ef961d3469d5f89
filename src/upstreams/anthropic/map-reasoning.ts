import type { ReasoningOptions } from '../../ir/chat-request.js';

/** Anthropic's smallest thinking budget. */
export const MIN_THINKING_BUDGET = 1024;

/**
 * Thinking budgets for canonical efforts (OpenAI `reasoning_effort`): minimal 1024 (Anthropic's floor), low 2048,
 * medium 8192, high 16384. A request asking for thoughts (Gemini `includeThoughts`, Anthropic `adaptive`) or for
 * a dynamic budget (-1) without an effort gets the medium budget.
 */
export const EFFORT_BUDGETS: Record<NonNullable<ReasoningOptions['effort']>, number> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16384,
};

export interface ThinkingPlan {
  budgetTokens: number;
  maxTokens: number;
}

/**
 * Canonical reasoning + output cap → Anthropic's `thinking.budget_tokens` and `max_tokens`, or null for no
 * thinking. Anthropic counts thinking in `max_tokens` and needs 1024 <= budget < max_tokens:
 * - budget 0 means off; a budget under 1024 is raised to 1024; -1 (Gemini's "dynamic") takes the effort's budget;
 * - without a caller cap, max_tokens becomes budget + the default cap, so the answer keeps its room;
 * - with a caller cap, the budget shrinks to cap - 1; below 1024 thinking is dropped.
 */
export function planThinking(
  reasoning: ReasoningOptions | undefined,
  callerMaxTokens: number | undefined,
  defaultMaxTokens: number,
  warnings: string[],
): ThinkingPlan | null {
  if (reasoning === undefined) return null;
  let budget: number;
  if (reasoning.budgetTokens !== undefined && reasoning.budgetTokens >= 0) {
    if (reasoning.budgetTokens === 0) return null;
    budget = reasoning.budgetTokens;
    if (budget < MIN_THINKING_BUDGET) {
      warn(warnings, `The thinking budget was raised to Anthropic's minimum of ${MIN_THINKING_BUDGET} tokens.`);
      budget = MIN_THINKING_BUDGET;
    }
  } else if (reasoning.effort !== undefined) {
    budget = EFFORT_BUDGETS[reasoning.effort];
  } else if (reasoning.includeThoughts === true || reasoning.budgetTokens !== undefined) {
    budget = EFFORT_BUDGETS.medium;
  } else {
    return null;
  }
  if (callerMaxTokens === undefined) return { budgetTokens: budget, maxTokens: budget + defaultMaxTokens };
  if (budget < callerMaxTokens) return { budgetTokens: budget, maxTokens: callerMaxTokens };
  if (callerMaxTokens - 1 >= MIN_THINKING_BUDGET) {
    warn(warnings, `The thinking budget was lowered to ${callerMaxTokens - 1} tokens to stay under max_tokens.`);
    return { budgetTokens: callerMaxTokens - 1, maxTokens: callerMaxTokens };
  }
  warn(warnings, `Thinking was not enabled: Anthropic needs max_tokens above ${MIN_THINKING_BUDGET} for it.`);
  return null;
}

function warn(warnings: string[], warning: string): void {
  if (!warnings.includes(warning)) warnings.push(warning);
}
