import type { CompletionUsage } from 'openai/resources/completions';
import { withHostedTools, type Usage } from '../../ir/usage.js';
import { isJsonObject } from '../json-object.js';
import { usageOfTopLevelMember } from '../json-top-level.js';
import { tokenCount } from '../token-count.js';

/** OpenAI's usage object → canonical usage. Reasoning tokens are part of completion_tokens, cached ones of prompt_tokens. */
export function usageFromOpenAI(raw: unknown): Usage | null {
  if (raw === null || typeof raw !== 'object') return null;
  const usage = raw as Record<string, unknown>;
  const prompt = tokenCount(usage.prompt_tokens);
  const completion = tokenCount(usage.completion_tokens);
  const promptDetails = (usage.prompt_tokens_details ?? {}) as Record<string, unknown>;
  const completionDetails = (usage.completion_tokens_details ?? {}) as Record<string, unknown>;
  // DeepSeek reports its cache hits as `prompt_cache_hit_tokens` (part of prompt_tokens).
  const cacheRead = Math.min(Math.max(tokenCount(promptDetails.cached_tokens), tokenCount(usage.prompt_cache_hit_tokens)), prompt);
  // `cache_write_tokens`: prompt tokens written to the cache (a newer field, and what this gateway sends for
  // Anthropic cache writes); part of prompt_tokens like the cached ones.
  const cacheWrite = Math.min(tokenCount(promptDetails.cache_write_tokens), prompt - cacheRead);
  const reasoning = Math.min(tokenCount(completionDetails.reasoning_tokens), completion);
  return {
    input: { total: prompt, noCache: prompt - cacheRead - cacheWrite, cacheRead, cacheWrite },
    output: { total: completion, text: completion - reasoning, reasoning },
  };
}

/**
 * OpenAI's Chat Completions search models (`gpt-4o-search-preview`, `gpt-5-search-api`, …) search the web before
 * every answer, and each search is billed per call.
 */
const SEARCH_MODEL = /-search-(preview|api)/;
const SEARCH_MODEL_MARKER = Buffer.from('-search-');

/** A chat completion's (or its usage chunk's) usage, with the web search a search model ran for it. */
export function usageOfChatCompletion(completion: { usage?: unknown; model?: unknown }): Usage | null {
  const usage = usageFromOpenAI(completion.usage);
  if (usage === null || typeof completion.model !== 'string' || !SEARCH_MODEL.test(completion.model)) return usage;
  return withHostedTools(usage, { webSearch: 1, webFetch: 0, fileSearch: 0 });
}

/**
 * The top-level `usage` of a chat-completion JSON body, with a search model's web search; null when absent or the
 * body is not JSON. The body is parsed whole only when it may name a search model.
 */
export function findUsageInJson(body: Buffer): Usage | null {
  const usage = usageOfTopLevelMember(body, 'usage', usageFromOpenAI);
  if (usage === null || !body.includes(SEARCH_MODEL_MARKER)) return usage;
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    return isJsonObject(parsed) ? usageOfChatCompletion(parsed) : usage;
  } catch {
    return usage;
  }
}

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
