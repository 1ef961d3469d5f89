import { GatewayError } from '../errors/gateway-error.js';
import type { RerankRequest } from '../ir/rerank.js';

/** Most documents one request may rerank (Cohere's and Voyage's limit). */
export const MAX_RERANK_DOCUMENTS = 1000;
/** Longest query, in characters (Voyage's largest query is 8 000 tokens; Cohere cuts at 2 048). */
export const MAX_RERANK_QUERY_CHARS = 32_000;
/** Largest `max_tokens_per_doc` (the longest context of a current rerank model). */
export const MAX_TOKENS_PER_DOC_LIMIT = 32_768;

function invalid(param: string, message: string): GatewayError {
  return new GatewayError('bad_request', message, { param });
}

/** A positive whole number no larger than `limit`, or absent. */
function optionalCount(body: Record<string, unknown>, field: string, limit: number): number | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > limit) {
    throw invalid(field, `'${field}' must be a whole number from 1 to ${limit}.`);
  }
  return value;
}

/** A document's text: a string, or an object with a string `text` (Jina's and Cohere v1's form). */
function documentText(document: unknown, position: number): string {
  if (typeof document === 'string') return document;
  if (typeof document === 'object' && document !== null && !Array.isArray(document) && typeof (document as { text?: unknown }).text === 'string') {
    return (document as { text: string }).text;
  }
  throw invalid(`documents[${position}]`, `'documents[${position}]' must be a string or an object with a string 'text'.`);
}

/**
 * A `POST /v1/rerank` body (Cohere v2's shape; Jina's and Cohere v1's `{ text }` documents too) → canonical request,
 * or 400 naming the first wrong field. `top_n` past the number of documents returns them all.
 */
export function parseRerankRequest(body: Record<string, unknown>): RerankRequest {
  const { model, query, documents } = body;
  if (typeof model !== 'string' || model.trim() === '') throw invalid('model', "'model' must be a non-empty string.");
  if (typeof query !== 'string' || query.trim() === '') throw invalid('query', "'query' must be a non-empty string.");
  if (query.length > MAX_RERANK_QUERY_CHARS) throw invalid('query', `'query' may be at most ${MAX_RERANK_QUERY_CHARS} characters.`);
  if (!Array.isArray(documents) || documents.length === 0) throw invalid('documents', "'documents' must be a non-empty array of strings or { text } objects.");
  if (documents.length > MAX_RERANK_DOCUMENTS) throw invalid('documents', `'documents' may hold at most ${MAX_RERANK_DOCUMENTS} entries; split the request.`);
  const texts = documents.map(documentText);
  const topN = optionalCount(body, 'top_n', Number.MAX_SAFE_INTEGER);
  const returnDocuments = body.return_documents ?? false;
  if (typeof returnDocuments !== 'boolean') throw invalid('return_documents', "'return_documents' must be a boolean.");
  const maxTokensPerDoc = optionalCount(body, 'max_tokens_per_doc', MAX_TOKENS_PER_DOC_LIMIT);
  return {
    model,
    query,
    documents: texts,
    ...(topN === undefined ? {} : { topN: Math.min(topN, texts.length) }),
    returnDocuments,
    ...(maxTokensPerDoc === undefined ? {} : { maxTokensPerDoc }),
  };
}
