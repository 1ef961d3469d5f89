import type { RerankRequest } from '../../ir/rerank.js';
import { voyageWire } from '../../wire/voyage/wire.js';
import { parseRerankAnswer, reportedTotalTokens } from '../rerank-answer.js';
import { RerankOnlyAdapter, type RerankEndpoint } from '../rerank-only-adapter.js';

/**
 * Voyage's rerank body: `top_k` for the number of results; Voyage cuts long inputs itself (`truncation`, its
 * default), so a caller's `max_tokens_per_doc` has no Voyage field.
 */
function voyageRerankBody(request: RerankRequest, upstreamModel: string): string {
  return JSON.stringify({
    model: upstreamModel,
    query: request.query,
    documents: request.documents,
    ...(request.topN === undefined ? {} : { top_k: request.topN }),
    return_documents: false,
  });
}

/** Voyage AI (`<base>/rerank`, base `https://api.voyageai.com/v1`): results in `data`, `usage.total_tokens`. */
export class VoyageAdapter extends RerankOnlyAdapter {
  readonly wire = voyageWire;
  protected readonly defaultBaseUrl = 'https://api.voyageai.com/v1';

  protected readonly endpoint: RerankEndpoint = {
    path: '/rerank',
    body: voyageRerankBody,
    parse: (body, request) => {
      const { answer, results } = parseRerankAnswer(body, request, 'data');
      return { results, searchUnits: null, totalTokens: reportedTotalTokens(answer) };
    },
  };
}
