import type { CompletionUsage } from 'openai/resources/completions';
import type { Usage } from '../../ir/usage.js';

/** Canonical usage → OpenAI's usage object. Reasoning tokens are part of completion_tokens, cache reads of prompt_tokens. */
export function encodeOpenAIUsage(usage: Usage): CompletionUsage {
  const promptDetails: CompletionUsage.PromptTokensDetails = { cached_tokens: usage.input.cacheRead, audio_tokens: 0 };
  // Cache writes exist upstream (Anthropic); OpenAI's wire has a field for them, sent only when there were any.
  if (usage.input.cacheWrite > 0) promptDetails.cache_write_tokens = usage.input.cacheWrite;
  return {
    prompt_tokens: usage.input.total,
    completion_tokens: usage.output.total,
    total_tokens: usage.input.total + usage.output.total,
    prompt_tokens_details: promptDetails,
    completion_tokens_details: { reasoning_tokens: usage.output.reasoning, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}
