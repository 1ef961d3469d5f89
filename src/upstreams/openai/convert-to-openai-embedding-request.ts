import type { EmbeddingCreateParams } from 'openai/resources/embeddings';
import type { EmbeddingRequest } from '../../ir/embedding.js';
import { warn } from './convert-to-openai-messages.js';

/**
 * The canonical embedding request → an OpenAI `/embeddings` body. `base64` asks for little-endian float32 bytes
 * (a quarter of the JSON size, exact) — OpenAI and Azure take it; OpenAI-compatible providers are asked for floats,
 * which all of them support. The parser reads either form.
 */
export function convertToOpenAIEmbeddingRequest(request: EmbeddingRequest, options: { upstreamModel: string; base64: boolean }): EmbeddingCreateParams {
  const body: EmbeddingCreateParams = { model: options.upstreamModel, input: request.inputs, encoding_format: options.base64 ? 'base64' : 'float' };
  if (request.dimensions !== undefined) body.dimensions = request.dimensions;
  if (request.user !== undefined) body.user = request.user;
  if (request.taskType !== undefined) warn(request.warnings, `The embedding task type ${request.taskType} was dropped: OpenAI embedding models take none.`);
  return body;
}
