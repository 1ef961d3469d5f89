import type { CreateEmbeddingResponse } from 'openai/resources/embeddings';
import type { EmbeddingResponse } from '../../ir/embedding.js';
import type { EmbeddingEncodingFormat } from './decode-embedding-request.js';
import { float32ToBase64 } from '../../wire/openai/float32-base64.js';

/** A vector in base64 form: the SDK types say number[], the wire carries a string. */
interface Base64Embedding {
  object: 'embedding';
  index: number;
  embedding: string;
}

/**
 * Canonical embeddings → OpenAI's `list` of `embedding` objects, vectors as float arrays or base64 little-endian
 * float32 (what the openai SDKs ask for by default and decode themselves). `model` is the public model id.
 */
export function encodeOpenAIEmbeddingResponse(response: EmbeddingResponse, options: { model: string; encodingFormat: EmbeddingEncodingFormat }): string {
  const data = response.vectors.map((vector, index): CreateEmbeddingResponse['data'][number] | Base64Embedding =>
    options.encodingFormat === 'base64'
      ? { object: 'embedding', index, embedding: float32ToBase64(vector) }
      : { object: 'embedding', index, embedding: vector });
  const body: Omit<CreateEmbeddingResponse, 'data'> & { data: typeof data } = {
    object: 'list',
    data,
    model: options.model,
    usage: { prompt_tokens: response.inputTokens, total_tokens: response.inputTokens },
  };
  return JSON.stringify(body);
}
