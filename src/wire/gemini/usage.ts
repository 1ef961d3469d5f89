import { withHostedTools, type Usage } from '../../ir/usage.js';
import { isJsonObject } from '../json-object.js';
import type { GeminiUsageMetadata } from './gemini-wire.js';
import { tokenCount } from '../token-count.js';

/**
 * Gemini's `usageMetadata` → canonical usage. Gemini bills thinking as output but counts it apart:
 * `candidatesTokenCount` is the answer alone and `thoughtsTokenCount` the thinking, so output.total is their sum.
 * `cachedContentTokenCount` is the cached part of `promptTokenCount`; `toolUsePromptTokenCount` (results of built-in
 * tools fed back to the model) is billed as input and counted in. With these, input.total + output.total equals
 * Google's `totalTokenCount`.
 */
export function usageFromGemini(raw: unknown): Usage | null {
  if (!isJsonObject(raw)) return null;
  const prompt = tokenCount(raw.promptTokenCount) + tokenCount(raw.toolUsePromptTokenCount);
  const cacheRead = Math.min(tokenCount(raw.cachedContentTokenCount), prompt);
  const text = tokenCount(raw.candidatesTokenCount);
  const reasoning = tokenCount(raw.thoughtsTokenCount);
  return {
    input: { total: prompt, noCache: prompt - cacheRead, cacheRead, cacheWrite: 0 },
    output: { total: text + reasoning, text, reasoning },
  };
}

/**
 * Canonical usage → `usageMetadata`. Gemini counts thinking apart from the answer: `candidatesTokenCount` is the
 * answer alone, `thoughtsTokenCount` the thinking, and `totalTokenCount` their sum plus the prompt.
 * `cachedContentTokenCount` is the cached part of `promptTokenCount`. Zero details are left out, as Google does.
 */
export function encodeGeminiUsage(usage: Usage): GeminiUsageMetadata {
  const reasoning = Math.min(usage.output.reasoning, usage.output.total);
  const metadata: GeminiUsageMetadata = {
    promptTokenCount: usage.input.total,
    candidatesTokenCount: usage.output.total - reasoning,
    totalTokenCount: usage.input.total + usage.output.total,
  };
  if (usage.input.cacheRead > 0) metadata.cachedContentTokenCount = usage.input.cacheRead;
  if (reasoning > 0) metadata.thoughtsTokenCount = reasoning;
  return metadata;
}

/**
 * Adds the search queries of a response's (or stream chunk's) Google Search grounding to `queries`. Google bills
 * Gemini 3 grounding per search query and counts distinct ones, ignoring empty ones; older models once per grounded
 * prompt (the catalog prices each: per web search, per grounded prompt).
 */
export function addGroundingQueries(response: unknown, queries: Set<string>): void {
  if (!isJsonObject(response) || !Array.isArray(response.candidates)) return;
  for (const candidate of response.candidates) {
    const metadata = isJsonObject(candidate) ? candidate.groundingMetadata : undefined;
    if (!isJsonObject(metadata) || !Array.isArray(metadata.webSearchQueries)) continue;
    for (const query of metadata.webSearchQueries) if (typeof query === 'string' && query.trim() !== '') queries.add(query);
  }
}

/** `usage` with the grounding's distinct search queries as its web searches. */
export function withGroundingSearches(usage: Usage, queries: ReadonlySet<string>): Usage {
  return withHostedTools(usage, queries.size === 0 ? undefined : { webSearch: queries.size, webFetch: 0, fileSearch: 0 });
}

/**
 * The usage of a `generateContent` body (or of a whole streamed JSON array, where the last chunk that reports
 * usage holds the running total), with the searches of its grounding; null when absent or not JSON.
 */
export function findGeminiUsageInJson(body: Buffer): Usage | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
  const queries = new Set<string>();
  let usage: Usage | null = null;
  if (Array.isArray(parsed)) {
    for (const element of parsed) {
      addGroundingQueries(element, queries);
      if (isJsonObject(element) && element.usageMetadata !== undefined) usage = usageFromGemini(element.usageMetadata);
    }
  } else if (isJsonObject(parsed)) {
    addGroundingQueries(parsed, queries);
    usage = usageFromGemini(parsed.usageMetadata);
  }
  return usage === null ? null : withGroundingSearches(usage, queries);
}
