/** Embeddings in canonical form (OpenAI /v1/embeddings ⇄ Gemini embedContent / batchEmbedContents). */
export interface EmbeddingRequest {
  model: string;
  inputs: string[];
  dimensions?: number;
  /** Gemini task type (RETRIEVAL_QUERY, …); dropped with a warning where the upstream has none. */
  taskType?: string;
  user?: string;
  warnings: string[];
}

export interface EmbeddingResponse {
  model: string;
  vectors: number[][];
  inputTokens: number;
}
