import type { EmbeddingRequest } from '../../ir/embedding.js';
import { badRequest } from './bad-request.js';
import { reportUnmappedFields } from './unmapped-fields.js';
import type { JsonObject } from '../../wire/json-object.js';

export type EmbeddingEncodingFormat = 'float' | 'base64';

export interface DecodedEmbeddingRequest {
  request: EmbeddingRequest;
  /** How the caller wants vectors back. The openai SDKs ask for base64 unless told otherwise. */
  encodingFormat: EmbeddingEncodingFormat;
}

const MAPPED_FIELDS: ReadonlySet<string> = new Set(['model', 'input', 'dimensions', 'encoding_format', 'user']);

function inputsOf(input: unknown): string[] {
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.length > 0 && input.every((entry): entry is string => typeof entry === 'string')) return input;
  if (Array.isArray(input) && input.length > 0 && input.every((entry) => typeof entry === 'number' || Array.isArray(entry))) {
    // Token ids belong to one tokenizer (OpenAI's); another provider's model cannot read them, and decoding them back
    // to text would need that tokenizer. Same-protocol requests pass through untouched and keep this form.
    throw badRequest('input', "'input' as token arrays is supported only for OpenAI embedding models; send text for this model.");
  }
  throw badRequest('input', "'input' must be a non-empty string or a non-empty array of strings.");
}

/** An OpenAI `/v1/embeddings` body → the canonical request, for the translated path (400 naming the field). */
export function decodeOpenAIEmbeddingRequest(body: JsonObject): DecodedEmbeddingRequest {
  const model = body.model;
  if (typeof model !== 'string' || model.trim() === '') throw badRequest('model', "'model' is required and must be a non-empty string.");
  const request: EmbeddingRequest = { model, inputs: inputsOf(body.input), warnings: [] };
  const dimensions = body.dimensions;
  if (dimensions !== undefined && dimensions !== null) {
    if (typeof dimensions !== 'number' || !Number.isInteger(dimensions) || dimensions < 1) {
      throw badRequest('dimensions', "'dimensions' must be a positive integer.");
    }
    request.dimensions = dimensions;
  }
  const format = body.encoding_format ?? 'float';
  if (format !== 'float' && format !== 'base64') throw badRequest('encoding_format', "'encoding_format' must be 'float' or 'base64'.");
  if (body.user !== undefined && body.user !== null) {
    if (typeof body.user !== 'string') throw badRequest('user', "'user' must be a string.");
    request.user = body.user;
  }
  reportUnmappedFields(body, MAPPED_FIELDS, request.warnings);
  return { request, encodingFormat: format };
}
