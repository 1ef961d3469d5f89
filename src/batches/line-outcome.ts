import { COST_HEADER } from '../billing/answer-report.js';
import { usdToNano } from '../billing/money.js';
import type { BatchTokens, LineOutcome } from '../domain/batches.js';
import type { LineAnswer } from './line-request.js';

const NO_TOKENS: BatchTokens = { input: 0, cached: 0, output: 0, reasoning: 0 };

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.floor(value) : 0);
const objectAt = (value: unknown, name: string): Record<string, unknown> | undefined => {
  if (value === null || typeof value !== 'object') return undefined;
  const inner = (value as Record<string, unknown>)[name];
  return inner !== null && typeof inner === 'object' ? inner as Record<string, unknown> : undefined;
};

/**
 * The tokens an answer reports: Chat Completions' and embeddings' `prompt_tokens`/`completion_tokens`, the Responses
 * API's and Anthropic Messages' `input_tokens`/`output_tokens`, or Gemini's `usageMetadata`.
 */
export function tokensOf(body: unknown): BatchTokens {
  const gemini = objectAt(body, 'usageMetadata');
  if (gemini !== undefined) {
    // Gemini counts thinking apart from the answer; both are output.
    const reasoning = count(gemini.thoughtsTokenCount);
    return { input: count(gemini.promptTokenCount), cached: count(gemini.cachedContentTokenCount), output: count(gemini.candidatesTokenCount) + reasoning, reasoning };
  }
  const usage = objectAt(body, 'usage');
  if (usage === undefined) return NO_TOKENS;
  if ('input_tokens' in usage) {
    return {
      // Anthropic's Messages name the cached part `cache_read_input_tokens`.
      input: count(usage.input_tokens), cached: count(objectAt(usage, 'input_tokens_details')?.cached_tokens ?? usage.cache_read_input_tokens),
      output: count(usage.output_tokens), reasoning: count(objectAt(usage, 'output_tokens_details')?.reasoning_tokens),
    };
  }
  return {
    input: count(usage.prompt_tokens), cached: count(objectAt(usage, 'prompt_tokens_details')?.cached_tokens),
    output: count(usage.completion_tokens), reasoning: count(objectAt(usage, 'completion_tokens_details')?.reasoning_tokens),
  };
}

/** How a line's answer is recorded: done below 400, failed otherwise; the charge from the answer's cost header. */
export function outcomeOf(answer: LineAnswer, requestId: string): LineOutcome {
  const text = answer.body.toString('utf8');
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    body = null;
  }
  const cost = answer.headers[COST_HEADER];
  const done = answer.status < 400 && body !== null;
  return {
    state: done ? 'done' : 'failed',
    statusCode: done || answer.status >= 400 ? answer.status : 502,
    requestId,
    result: body === null ? JSON.stringify({ error: { message: 'The answer to this line was not JSON.', type: 'upstream_error', code: 'upstream_error' } }) : text,
    costNano: cost === undefined ? 0n : usdToNano(cost),
    tokens: done ? tokensOf(body) : NO_TOKENS,
  };
}
