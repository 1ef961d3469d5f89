import type { RerankRequest, RerankResponse, RerankResult } from '../ir/rerank.js';
import { isJsonObject } from '../wire/json-object.js';
import { malformedUpstreamAnswer } from './openai/upstream-wire-error.js';

/** A count an upstream reported: a whole non-negative number, else unknown. */
function countOf(value: unknown): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null;
}

/** Parses a rerank answer's JSON, failing as a malformed answer. */
function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw malformedUpstreamAnswer('a rerank body that is not JSON');
  }
}

/**
 * Result entries, each read as `{ index, score }` by `read`, → canonical results, checked against the request: every
 * index points at one of its documents, at most once, and every score is a finite number. Sorted most relevant first
 * and cut to `top_n`, whatever order the upstream used.
 */
export function checkedResults(entries: readonly unknown[], request: RerankRequest, read: (entry: Record<string, unknown>) => { index: unknown; score: unknown }): RerankResult[] {
  const seen = new Set<number>();
  const results: RerankResult[] = [];
  for (const entry of entries) {
    if (!isJsonObject(entry)) throw malformedUpstreamAnswer('a rerank result that is not an object');
    const { index, score } = read(entry);
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= request.documents.length || seen.has(index)) {
      throw malformedUpstreamAnswer('a rerank result for a document it was not sent');
    }
    if (typeof score !== 'number' || !Number.isFinite(score)) throw malformedUpstreamAnswer('a rerank result without a relevance score');
    seen.add(index);
    results.push({ index, relevanceScore: score });
  }
  results.sort((a, b) => b.relevanceScore - a.relevanceScore || a.index - b.index);
  return request.topN === undefined ? results : results.slice(0, request.topN);
}

/**
 * A rerank answer's results (Cohere's and Jina's `results`, Voyage's `data`: `{ index, relevance_score }` each;
 * Bedrock's `results` of `{ index, relevanceScore }`) → canonical results, checked as `checkedResults` says.
 */
export function parseRerankAnswer(body: Buffer, request: RerankRequest, resultsField: 'results' | 'data', scoreField: 'relevance_score' | 'relevanceScore' = 'relevance_score'): { answer: Record<string, unknown>; results: RerankResult[] } {
  const parsed = parseJson(body);
  if (!isJsonObject(parsed) || !Array.isArray(parsed[resultsField])) throw malformedUpstreamAnswer(`a rerank body without ${resultsField}`);
  const results = checkedResults(parsed[resultsField] as unknown[], request, (entry) => ({ index: entry.index, score: entry[scoreField] }));
  return { answer: parsed, results };
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

/**
 * Hugging Face text-embeddings-inference's own `POST /rerank` body: `texts` for the documents, scores normalised
 * (`raw_scores: false`), no text echoed back, and a document longer than the model's input cut rather than refused
 * (as Cohere and Jina cut it). TEI takes no model (a server serves one) and no number of results: the gateway cuts
 * the answer to `top_n`.
 */
export function teiRerankBody(request: RerankRequest): string {
  return JSON.stringify({ query: request.query, texts: request.documents, raw_scores: false, return_text: false, truncate: true });
}

/**
 * An OpenAI-compatible server's rerank answer: TEI's own (a JSON array of `{ index, score }`, no usage, so the
 * gateway counts the tokens) or the Jina shape (an object with `results`).
 */
export function parseOpenAICompatibleRerank(body: Buffer, request: RerankRequest): RerankResponse {
  const parsed = parseJson(body);
  if (!Array.isArray(parsed)) return parseJinaShapedAnswer(body, request);
  return { results: checkedResults(parsed, request, (entry) => ({ index: entry.index, score: entry.score })), searchUnits: null, totalTokens: null };
}
