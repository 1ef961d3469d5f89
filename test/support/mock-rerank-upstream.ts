/**
 * Mock rerank upstreams speaking each vendor's wire: Cohere (`POST /v2/rerank`, results with
 * `meta.billed_units.search_units`), Jina (`POST /v1/rerank`, `usage.total_tokens`, `return_documents` defaulting to
 * true), Voyage (`POST /v1/rerank`, `top_k`, results in `data`) and Hugging Face text-embeddings-inference (`POST
 * /rerank` at the server's root, `texts`, a bare array of `{ index, score }` with no usage, errors as
 * `{ error, error_type }`). Bodies are checked field by field as the vendor
 * documents them (an unknown field is a 400, as a strict API would answer), a Bearer key is required, and the scores
 * are deterministic: the share of the query's words a document contains. Tokens are words.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { MockServerKit, type CommonFault, type RecordedRequest } from './mock-server-kit.js';

export type RerankVendor = 'cohere' | 'jina' | 'voyage' | 'tei';
export type MockRerankFault = CommonFault | { kind: 'status'; status: number; times?: number };

export interface MockRerankUpstream {
  readonly vendor: RerankVendor;
  /** The base URL a channel of the vendor's type takes (`http://127.0.0.1:port` for Cohere, `…/v1` otherwise: TEI's OpenAI front). */
  readonly url: string;
  readonly requests: RecordedRequest[];
  setFault(fault: MockRerankFault | null): void;
  close(): Promise<void>;
}

const FIELDS: Record<RerankVendor, readonly string[]> = {
  cohere: ['model', 'query', 'documents', 'top_n', 'max_tokens_per_doc', 'priority'],
  jina: ['model', 'query', 'documents', 'top_n', 'return_documents'],
  voyage: ['model', 'query', 'documents', 'top_k', 'return_documents', 'truncation'],
  tei: ['query', 'texts', 'raw_scores', 'return_text', 'truncate', 'truncation_direction'],
};

const PATHS: Record<RerankVendor, string> = { cohere: '/v2/rerank', jina: '/v1/rerank', voyage: '/v1/rerank', tei: '/rerank' };

class WireError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

export const wordsOf = (text: string): string[] => text.toLowerCase().split(/[^a-z0-9]+/).filter((word) => word !== '');
export const mockTokens = (text: string): number => wordsOf(text).length;

/** The mock's score: the share of the query's distinct words the document contains. */
export function mockScore(query: string, document: string): number {
  const wanted = new Set(wordsOf(query));
  const present = new Set(wordsOf(document));
  let hits = 0;
  for (const word of wanted) if (present.has(word)) hits += 1;
  return wanted.size === 0 ? 0 : hits / wanted.size;
}

function check(condition: boolean, message: string): asserts condition {
  if (!condition) throw new WireError(400, message);
}

function positiveInteger(body: Record<string, unknown>, field: string): number | undefined {
  const value = body[field];
  if (value === undefined) return undefined;
  check(typeof value === 'number' && Number.isInteger(value) && value >= 1, `${field} must be a positive integer`);
  return value;
}

/** TEI's answer: every text scored (it takes no number of results), most relevant first, the text only when asked. */
function teiAnswer(fields: Record<string, unknown>): unknown[] {
  const { query, texts } = fields;
  check(typeof query === 'string' && query !== '', 'query is required');
  check(Array.isArray(texts) && texts.length > 0 && texts.every((text) => typeof text === 'string'), 'texts must be a list of strings');
  for (const flag of ['raw_scores', 'return_text', 'truncate']) check(fields[flag] === undefined || fields[flag] === null || typeof fields[flag] === 'boolean', `${flag} must be a boolean`);
  check(fields.truncation_direction === undefined || fields.truncation_direction === 'Left' || fields.truncation_direction === 'Right', 'truncation_direction is Left or Right');
  return (texts as string[])
    .map((text, index) => ({ index, score: mockScore(query, text), ...(fields.return_text === true ? { text } : {}) }))
    .sort((a, b) => b.score - a.score || a.index - b.index);
}

function answer(vendor: RerankVendor, body: unknown): unknown {
  check(typeof body === 'object' && body !== null && !Array.isArray(body), 'body must be a JSON object');
  const fields = body as Record<string, unknown>;
  for (const field of Object.keys(fields)) check(FIELDS[vendor].includes(field), `unknown field: ${field}`);
  if (vendor === 'tei') return teiAnswer(fields);
  const { model, query, documents } = fields;
  check(typeof model === 'string' && model !== '', 'model is required');
  check(typeof query === 'string' && query !== '', 'query is required');
  check(Array.isArray(documents) && documents.length > 0 && documents.every((document) => typeof document === 'string'), 'documents must be a list of strings');
  const texts = documents as string[];
  const limit = positiveInteger(fields, vendor === 'voyage' ? 'top_k' : 'top_n') ?? texts.length;
  const maxTokens = positiveInteger(fields, 'max_tokens_per_doc');
  const returnDocuments = fields.return_documents ?? (vendor === 'jina');
  check(typeof returnDocuments === 'boolean', 'return_documents must be a boolean');
  const ranked = texts
    .map((text, index) => ({ index, relevance_score: mockScore(query, text) }))
    .sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index)
    .slice(0, limit);
  const queryTokens = mockTokens(query);
  const documentTokens = texts.map((text) => Math.min(mockTokens(text), maxTokens ?? Number.MAX_SAFE_INTEGER));
  const totalTokens = queryTokens * texts.length + documentTokens.reduce((sum, tokens) => sum + tokens, 0);
  if (vendor === 'cohere') {
    const chunks = documentTokens.reduce((sum, tokens) => sum + Math.max(1, Math.ceil((queryTokens + tokens) / 500)), 0);
    return {
      id: `cohere-${Date.now()}`,
      results: ranked,
      meta: { api_version: { version: '2' }, billed_units: { search_units: Math.ceil(chunks / 100) } },
    };
  }
  if (vendor === 'jina') {
    return {
      model,
      usage: { total_tokens: totalTokens, prompt_tokens: totalTokens },
      results: ranked.map((result) => (returnDocuments ? { ...result, document: { text: texts[result.index] } } : result)),
    };
  }
  return {
    object: 'list',
    data: ranked.map((result) => (returnDocuments ? { ...result, document: texts[result.index] } : result)),
    model,
    usage: { total_tokens: totalTokens },
  };
}

function errorBody(vendor: RerankVendor, status: number, message: string): Record<string, unknown> {
  if (vendor === 'cohere') return { message };
  if (vendor === 'jina') return { detail: message };
  if (vendor === 'tei') return { error: message, error_type: status === 413 ? 'Overloaded' : 'Validation' };
  return { detail: message, status };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export async function startMockRerankUpstream(vendor: RerankVendor, options: { apiKey?: string } = {}): Promise<MockRerankUpstream> {
  const kit = new MockServerKit<MockRerankFault>(true);
  const apiKey = options.apiKey ?? `${vendor}-upstream-key`;
  const { port } = await kit.listen({
    maxBodyBytes: 32 * 1024 * 1024,
    async handle(req: IncomingMessage, res: ServerResponse, rawBody: string) {
      const call = kit.intake(req, rawBody);
      const fault = kit.takeFault();
      if (!(await kit.beforeAnswer(req, res, fault, 0))) return;
      if (fault?.kind === 'status') return send(res, fault.status, errorBody(vendor, fault.status, 'injected fault'));
      if (call.method !== 'POST' || call.path !== PATHS[vendor]) return send(res, 404, errorBody(vendor, 404, `no route ${call.method} ${call.path}`));
      if (req.headers.authorization !== `Bearer ${apiKey}`) return send(res, 401, errorBody(vendor, 401, 'invalid api token'));
      if (call.jsonError) throw new WireError(400, 'invalid JSON');
      send(res, 200, answer(vendor, call.body));
    },
    tooLarge: (_req, res) => send(res, 413, errorBody(vendor, 413, 'too large')),
    failed(_req, res, error) {
      if (error instanceof WireError) send(res, error.status, errorBody(vendor, error.status, error.message));
      else send(res, 500, errorBody(vendor, 500, String(error)));
    },
  });
  const origin = `http://127.0.0.1:${port}`;
  return {
    vendor,
    url: vendor === 'cohere' ? origin : `${origin}/v1`,
    requests: kit.requests,
    setFault: (fault) => kit.setFault(fault),
    close: () => kit.close(),
  };
}
