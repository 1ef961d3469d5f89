import { GatewayError } from '../../errors/gateway-error.js';
import type { EmbeddingRequest, EmbeddingResponse } from '../../ir/embedding.js';
import { isJsonObject, parseJson, type JsonObject } from '../../wire/gemini/gemini-wire.js';
import { unreadableUpstreamBody } from './parse-response.js';

/** The Gemini API's cap on `batchEmbedContents.requests`. */
export const MAX_BATCH_EMBED_REQUESTS = 100;
const CHARACTERS_PER_TOKEN = 4;

/**
 * Canonical embedding request → `:embedContent` (one input) or `:batchEmbedContents` (several; each request names
 * the model, as Google requires). `dimensions` → outputDimensionality; `taskType` as it is.
 */
export function buildEmbeddingBody(request: EmbeddingRequest, modelResource: string): { batch: boolean; body: JsonObject } {
  if (request.inputs.length === 0) throw new GatewayError('bad_request', 'At least one input is required.', { param: 'input' });
  if (request.inputs.length > MAX_BATCH_EMBED_REQUESTS) {
    throw new GatewayError('bad_request', `Gemini embedding models take at most ${MAX_BATCH_EMBED_REQUESTS} inputs per request.`, { param: 'input' });
  }
  const index = request.inputs.findIndex((input) => input === '');
  if (index >= 0) throw new GatewayError('bad_request', `Input ${index} is empty; Gemini cannot embed empty text.`, { param: 'input' });
  if (request.user !== undefined) request.warnings.push('the end-user id has no Gemini equivalent and was not sent.');
  const options: JsonObject = {};
  if (request.taskType !== undefined) options.taskType = request.taskType;
  if (request.dimensions !== undefined) options.outputDimensionality = request.dimensions;
  const content = (text: string): JsonObject => ({ parts: [{ text }] });
  const [only] = request.inputs;
  if (request.inputs.length === 1 && only !== undefined) return { batch: false, body: { content: content(only), ...options } };
  return { batch: true, body: { requests: request.inputs.map((text) => ({ model: modelResource, content: content(text), ...options })) } };
}

/**
 * `{embedding: {values}}` or `{embeddings: [{values}]}` → vectors. The embedding endpoints report no token count
 * (only some models add `usageMetadata.promptTokenCount`), so input tokens are estimated from the text: 4
 * characters a token.
 */
export function parseEmbeddingBody(body: Buffer, request: EmbeddingRequest): EmbeddingResponse {
  const parsed = parseJson(body.toString('utf8'));
  if (!isJsonObject(parsed)) throw unreadableUpstreamBody();
  const embeddings = Array.isArray(parsed.embeddings) ? parsed.embeddings : [parsed.embedding];
  const vectors = embeddings.map((embedding: unknown) => {
    const values = isJsonObject(embedding) ? embedding.values : undefined;
    if (!Array.isArray(values) || !values.every((value) => typeof value === 'number')) throw unreadableUpstreamBody();
    return values as number[];
  });
  const usage = parsed.usageMetadata;
  const reported = isJsonObject(usage) && typeof usage.promptTokenCount === 'number' ? usage.promptTokenCount : undefined;
  const estimated = request.inputs.reduce((sum, input) => sum + Math.ceil(input.length / CHARACTERS_PER_TOKEN), 0);
  return { model: request.model, vectors, inputTokens: reported ?? estimated };
}
