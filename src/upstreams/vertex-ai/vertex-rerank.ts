import type { Channel } from '../../domain/records.js';
import type { RerankRequest, RerankResponse } from '../../ir/rerank.js';
import { isJsonObject } from '../../wire/json-object.js';
import { malformedUpstreamAnswer } from '../openai/upstream-wire-error.js';
import { checkedResults } from '../rerank-answer.js';
import type { ServiceAccount } from './service-account.js';
import { vertexProject } from './vertex-endpoint.js';

/** Google bills the ranking API per query, a query being up to this many records; more records count as more queries. */
export const VERTEX_RECORDS_PER_QUERY = 100;

/**
 * Where a Vertex AI channel's reranks go: the ranking API of Vertex AI Search (Discovery Engine), at
 * `settings.rerank_base_url`, else the channel's base URL (a proxy serving both APIs), else
 * `https://discoveryengine.googleapis.com`; the project's default ranking config in the global location, which is
 * where Google serves its semantic rankers.
 */
export function vertexRerankUrl(channel: Channel, account: ServiceAccount): string {
  const setting = channel.settings.rerank_base_url;
  const base = typeof setting === 'string' && setting !== '' ? setting : channel.baseUrl ?? 'https://discoveryengine.googleapis.com';
  return `${base.replace(/\/+$/, '')}/v1/projects/${encodeURIComponent(vertexProject(channel, account))}/locations/global/rankingConfigs/default_ranking_config:rank`;
}

/**
 * The ranking API's body: each document a record whose id is its index in the request and whose content is its text,
 * the number of results always sent (the caller's `top_n`, else every document) and the records' text left out of
 * the answer (the gateway adds it back from the request). The ranker cuts a record to its own input size, so
 * `max_tokens_per_doc` has no field.
 */
export function vertexRerankBody(request: RerankRequest, upstreamModel: string): string {
  return JSON.stringify({
    model: upstreamModel,
    query: request.query,
    records: request.documents.map((content, index) => ({ id: String(index), content })),
    topN: Math.min(request.topN ?? request.documents.length, request.documents.length),
    ignoreRecordDetailsInResponse: true,
  });
}

/** A record id the gateway sent: a document's index written in decimal, else not one of its documents. */
function indexOfId(id: unknown): number | null {
  return typeof id === 'string' && /^(0|[1-9]\d{0,5})$/.test(id) ? Number(id) : null;
}

/**
 * The ranking API's answer: `records` of `{ id, score }`. Google's JSON leaves out a field at its zero value, so a
 * record without `score` scored 0 and an answer without `records` ranked none. It reports no
 * usage; Google bills per query of up to 100 records, so a Vertex rerank model is priced per search unit, one per
 * started hundred documents.
 */
export function parseVertexRerank(body: Buffer, request: RerankRequest): RerankResponse {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw malformedUpstreamAnswer('a rerank body that is not JSON');
  }
  if (!isJsonObject(parsed) || (parsed.records !== undefined && !Array.isArray(parsed.records))) throw malformedUpstreamAnswer('a ranking body without records');
  const records = (parsed.records ?? []) as unknown[];
  const results = checkedResults(records, request, (record) => ({ index: indexOfId(record.id), score: record.score ?? 0 }));
  return { results, searchUnits: Math.max(1, Math.ceil(request.documents.length / VERTEX_RECORDS_PER_QUERY)), totalTokens: null };
}
