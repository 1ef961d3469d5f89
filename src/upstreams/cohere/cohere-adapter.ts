import type { RerankRequest } from '../../ir/rerank.js';
import { cohereWire } from '../../wire/cohere/wire.js';
import { parseRerankAnswer, reportedSearchUnits, reportedTotalTokens } from '../rerank-answer.js';
import { RerankOnlyAdapter, type RerankEndpoint } from '../rerank-only-adapter.js';

/** Cohere's v2 rerank body: documents as strings; v2 returns no document text (the gateway adds it back). */
function cohereRerankBody(request: RerankRequest, upstreamModel: string): string {
  return JSON.stringify({
    model: upstreamModel,
    query: request.query,
    documents: request.documents,
    ...(request.topN === undefined ? {} : { top_n: request.topN }),
    ...(request.maxTokensPerDoc === undefined ? {} : { max_tokens_per_doc: request.maxTokensPerDoc }),
  });
}

/** Cohere (`<base>/v2/rerank`, base `https://api.cohere.com`): answers carry the search units it billed. */
export class CohereAdapter extends RerankOnlyAdapter {
  readonly wire = cohereWire;
  protected readonly defaultBaseUrl = 'https://api.cohere.com';

  protected readonly endpoint: RerankEndpoint = {
    path: '/v2/rerank',
    body: cohereRerankBody,
    parse: (body, request) => {
      const { answer, results } = parseRerankAnswer(body, request, 'results');
      return { results, searchUnits: reportedSearchUnits(answer), totalTokens: reportedTotalTokens(answer) };
    },
  };
}
