import type { RerankRequest, RerankResponse, RerankResult } from '../ir/rerank.js';
import { isJsonObject } from '../wire/json-object.js';
import { malformedUpstreamAnswer } from './openai/upstream-wire-error.js';

/** A count an upstream reported: a whole non-negative number, else unknown. */
function countOf(value: unknown): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null;
}

/**
 * A rerank answer's results (Cohere's and Jina's `results`, Voyage's `data`: `{ index, relevance_score }` each) →
 * canonical results, checked against the request: every index points at one of its documents, at most once, and
 * every score is a finite number. Sorted most relevant first and cut to `top_n`, whatever order the upstream used.
 */
export function parseRerankAnswer(body: Buffer, request: RerankRequest, resultsField: 'results' | 'data'): { answer: Record<string, unknown>; results: RerankResult[] } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw malformedUpstreamAnswer('a rerank body that is not JSON');
  }
  if (!isJsonObject(parsed) || !Array.isArray(parsed[resultsField])) throw malformedUpstreamAnswer(`a rerank body without ${resultsField}`);
  const seen = new Set<number>();
  const results: RerankResult[] = [];
  for (const entry of parsed[resultsField] as unknown[]) {
    if (!isJsonObject(entry)) throw malformedUpstreamAnswer('a rerank result that is not an object');
    const { index, relevance_score: score } = entry;
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= request.documents.length || seen.has(index)) {
      throw malformedUpstreamAnswer('a rerank result for a document it was not sent');
    }
    if (typeof score !== 'number' || !Number.isFinite(score)) throw malformedUpstreamAnswer('a rerank result without a relevance score');
    seen.add(index);
    results.push({ index, relevanceScore: score });
  }
  results.sort((a, b) => b.relevanceScore - a.relevanceScore || a.index - b.index);
  return { answer: parsed, results: request.topN === undefined ? results : results.slice(0, request.topN) };
}

/** `usage.total_tokens` of a Jina-shaped answer (Jina, Voyage, OpenAI-compatible servers), else unknown. */
export function reportedTotalTokens(answer: Record<string, unknown>): number | null {
  return isJsonObject(answer.usage) ? countOf(answer.usage.total_tokens) : null;
}

/** `meta.billed_units.search_units` of a Cohere answer, else unknown. */
export function reportedSearchUnits(answer: Record<string, unknown>): number | null {
  const meta = answer.meta;
  return isJsonObject(meta) && isJsonObject(meta.billed_units) ? countOf(meta.billed_units.search_units) : null;
}

/** A Jina-shaped answer (`{ results, usage: { total_tokens } }`) → canonical response. */
export function parseJinaShapedAnswer(body: Buffer, request: RerankRequest): RerankResponse {
  const { answer, results } = parseRerankAnswer(body, request, 'results');
  return { results, searchUnits: reportedSearchUnits(answer), totalTokens: reportedTotalTokens(answer) };
}

/**
 * The Jina-shaped request body (Jina's `/v1/rerank`, and the OpenAI-compatible servers that copy it: vLLM, Infinity,
 * TEI's OpenAI front, LocalAI): documents as strings, the text of each result left out (the gateway adds it back from
 * the request, so no document is sent twice).
 */
export function jinaShapedBody(request: RerankRequest, upstreamModel: string): string {
  return JSON.stringify({
    model: upstreamModel,
    query: request.query,
    documents: request.documents,
    ...(request.topN === undefined ? {} : { top_n: request.topN }),
    return_documents: false,
  });
}
