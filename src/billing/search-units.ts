/**
 * Cohere's published rule for billing a rerank request: one search unit is one query over up to 100 documents, and a
 * document longer than 500 tokens counted with the query is split into chunks of that length, each chunk counting as
 * one document. A document is first cut to `max_tokens_per_doc` when the request sets it.
 */
export const DOCUMENTS_PER_SEARCH_UNIT = 100;
export const TOKENS_PER_CHUNK = 500;

/** Search units of one query (`queryTokens`) over documents of `documentTokens` each. */
export function searchUnitsOf(queryTokens: number, documentTokens: readonly number[], maxTokensPerDoc?: number): number {
  let chunks = 0;
  for (const tokens of documentTokens) {
    const kept = maxTokensPerDoc === undefined ? tokens : Math.min(tokens, maxTokensPerDoc);
    chunks += Math.max(1, Math.ceil((queryTokens + kept) / TOKENS_PER_CHUNK));
  }
  return Math.max(1, Math.ceil(chunks / DOCUMENTS_PER_SEARCH_UNIT));
}
