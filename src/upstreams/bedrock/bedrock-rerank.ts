import type { Channel } from '../../domain/records.js';
import type { RerankRequest, RerankResponse } from '../../ir/rerank.js';
import { parseRerankAnswer } from '../rerank-answer.js';
import { bedrockRegion } from './bedrock-endpoint.js';

/**
 * Where a Bedrock channel's reranks go: `settings.rerank_base_url`, else the channel's base URL (a proxy that serves
 * both APIs), else the region's Agents runtime, which is where Bedrock's Rerank API lives (not the model runtime).
 */
export function bedrockRerankUrl(channel: Channel): string {
  const setting = channel.settings.rerank_base_url;
  const base = typeof setting === 'string' && setting !== '' ? setting : channel.baseUrl ?? `https://bedrock-agent-runtime.${bedrockRegion(channel)}.amazonaws.com`;
  return `${base.replace(/\/+$/, '')}/rerank`;
}

/** A model id as the Rerank API names it: an ARN as it is, a foundation-model id as its ARN in the channel's region. */
export function bedrockRerankModelArn(channel: Channel, upstreamModel: string): string {
  return upstreamModel.startsWith('arn:') ? upstreamModel : `arn:aws:bedrock:${bedrockRegion(channel)}::foundation-model/${upstreamModel}`;
}

/**
 * Bedrock's Rerank body: one text query, every document an inline text source, and the reranking model by ARN. The
 * number of results is always sent (the caller's `top_n`, else every document), so the answer holds what was asked.
 * Bedrock takes no per-document token cap, so `max_tokens_per_doc` has no Bedrock field.
 */
export function bedrockRerankBody(channel: Channel, request: RerankRequest, upstreamModel: string): string {
  return JSON.stringify({
    queries: [{ type: 'TEXT', textQuery: { text: request.query } }],
    sources: request.documents.map((text) => ({ type: 'INLINE', inlineDocumentSource: { type: 'TEXT', textDocument: { text } } })),
    rerankingConfiguration: {
      type: 'BEDROCK_RERANKING_MODEL',
      bedrockRerankingConfiguration: {
        modelConfiguration: { modelArn: bedrockRerankModelArn(channel, upstreamModel) },
        numberOfResults: Math.min(request.topN ?? request.documents.length, request.documents.length),
      },
    },
  });
}

/**
 * Bedrock's answer: `results` of `{ index, relevanceScore }`. It reports no usage: Bedrock bills per query (up to
 * 100 document chunks each), so a Bedrock rerank model is priced per search unit, counted by Cohere's rule.
 */
export function parseBedrockRerank(body: Buffer, request: RerankRequest): RerankResponse {
  const { results } = parseRerankAnswer(body, request, 'results', 'relevanceScore');
  return { results, searchUnits: null, totalTokens: null };
}
