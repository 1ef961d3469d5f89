/** Reranking in canonical form (Cohere v2 / Jina `POST /v1/rerank` ⇄ Cohere, Jina, Voyage and OpenAI-compatible servers). */
export interface RerankRequest {
  model: string;
  query: string;
  /** The documents' text, in the caller's order (result indexes point into this list). */
  documents: string[];
  /** How many results to return, most relevant first; absent: all. */
  topN?: number;
  /** Whether each result carries its document's text. */
  returnDocuments: boolean;
  /** Longest a document may be before the upstream cuts it, in tokens. */
  maxTokensPerDoc?: number;
}

export interface RerankResult {
  index: number;
  relevanceScore: number;
}

export interface RerankResponse {
  /** Most relevant first, at most `topN`. */
  results: RerankResult[];
  /** Search units the upstream billed, where it says (Cohere). */
  searchUnits: number | null;
  /** Tokens the upstream counted, where it says (Jina, Voyage, most OpenAI-compatible servers). */
  totalTokens: number | null;
}
