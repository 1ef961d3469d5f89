import type { EmbeddingResponse } from '../../ir/embedding.js';

/** `:embedContent` answer: `{embedding: {values}}` (the first vector). */
export function encodeGeminiEmbedContentResponse(response: EmbeddingResponse): string {
  return JSON.stringify({ embedding: { values: response.vectors[0] ?? [] } });
}

/** `:batchEmbedContents` answer: `{embeddings: [{values}, …]}`, one per request, in order. */
export function encodeGeminiBatchEmbedContentsResponse(response: EmbeddingResponse): string {
  return JSON.stringify({ embeddings: response.vectors.map((values) => ({ values })) });
}
